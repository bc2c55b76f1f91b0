import DataSources
import JSONKit
import WireSchema

/// `request: {method, body?}` and `graphql: {query, variables?, connection, pageVariables?}`
/// of remote and paginated sources, and what they change in a paginated source's paging.
enum RequestBodyDecoding {
    struct Request: Sendable {
        var method: HTTPMethod
        var body: JSON?
    }

    /// A list is read with GET or POST; the other methods are an action's.
    static let listMethods: [HTTPMethod] = [.get, .post]

    static let methodShape = Shape.nonEmptyString.documented(.oneOfValues(listMethods.map { JSON($0.rawValue) })).map {
        name, value, field throws(FieldError) -> HTTPMethod in
        guard let method = HTTPMethod(rawValue: name), listMethods.contains(method) else {
            throw FieldError(field: field, expected: "\"GET\" or \"POST\"", got: value)
        }
        return method
    }

    static let request = ObjectDeclaration(
        .optional("method", methodShape, default: .get, defaultText: "\"GET\""),
        .optional(
            "body", Shape.anything, doc: "(POST) the JSON body, sent as application/json; page values go in at pagination.requestKeys"),
        as: { method, body throws(FieldError) in
            if body != nil, method != .post {
                throw FieldError(
                    field: "request.body", expected: "no body with GET (or \"method\": \"POST\")", got: JSON(method.rawValue),
                    message: "\"request.body\" is sent with POST only: set \"request.method\" to \"POST\", or leave the body out")
            }
            return Request(method: method, body: body)
        })

    static let requestShape = request.shape(expected: "an object {method, body?}").documented(.ref("RequestBody"))

    static let objectShape = Shape<JSON>(.type("object"), expected: "an object") { value, field throws(FieldError) in
        guard value.isObject else { throw .mistyped(field, expected: "an object", got: value) }
        return value
    }

    private static let pageVariables = ObjectDeclaration(
        .optional("first", Shape.nonEmptyString), .optional("after", Shape.nonEmptyString),
        .optional("last", Shape.nonEmptyString), .optional("before", Shape.nonEmptyString),
        as: { GraphQLQuery.PageVariables(first: $0, after: $1, last: $2, before: $3) })

    static let graphql = ObjectDeclaration(
        .required("query", Shape.nonEmptyString, doc: "the GraphQL document, with the connection's paging arguments as variables"),
        .optional(
            "variables", objectShape, default: JSON.object([]), defaultText: "{}",
            doc: "the query's own variables; the page variables are set over them"),
        .required(
            "connection", Shape.keyPath.documented(SchemaComponents.keyPath),
            doc: "where the Relay connection is under data (\"repository.issues\")"),
        .optional(
            "pageVariables", pageVariables.shape(expected: "an object {first?, after?, last?, before?}"),
            doc: "the names of the paging variables, when the schema renames Relay's first, after, last and before"),
        as: { query, variables, connection, names in
            GraphQLQuery(query: query, variables: variables, connection: connection, pageVariables: names ?? GraphQLQuery.PageVariables())
        })

    static let graphqlShape = graphql.shape(expected: "an object {query, variables?, connection, pageVariables?}").documented(
        .ref("GraphQLQuery"))

    /// `request` and `graphql` set on a remote configuration, with the rules between them
    /// and the rest: a GraphQL source sends its own body, and reads its rows from the connection.
    static func apply(
        request: Request?, graphql: GraphQLQuery?, keyPath: JSONKeyPath?, to configuration: inout RemoteConfiguration
    ) throws(FieldError) {
        if let graphql {
            if let body = request?.body {
                throw FieldError(
                    field: "request.body", expected: "no body with graphql (it sends {query, variables})", got: body,
                    message: "\"request.body\" cannot go with \"graphql\": a GraphQL source sends {\"query\", \"variables\"}")
            }
            if request?.method == .get {
                throw FieldError(
                    field: "request.method", expected: "\"POST\" (or no request) with graphql", got: "GET",
                    message: "\"request.method\" GET cannot go with \"graphql\": a GraphQL query is sent with POST")
            }
            if let keyPath {
                throw FieldError(
                    field: "keyPath", expected: "no keyPath with graphql (the rows are the connection's)", got: JSON(keyPath.description),
                    message: "\"keyPath\" cannot go with \"graphql\": the rows are the connection's edges[].node (or nodes)")
            }
            configuration.graphql = graphql
            configuration.method = .post
        } else if let request {
            configuration.method = request.method
            configuration.body = request.body
        }
    }

    /// A paginated source's paging with its requests' body: the page values go in the body
    /// (`requestIn`, by default where the method puts them), and a GraphQL source pages its
    /// connection as Relay says.
    static func paging(
        _ paging: RemoteConfigurationDecoding.Paging, configuration: RemoteConfiguration
    ) throws(FieldError) -> PaginatorConfiguration {
        var paginator = paging.paginator
        let post = configuration.method == .post
        switch paging.requestIn {
        case .body? where !post:
            throw FieldError(
                field: "pagination.requestIn", expected: "\"query\" with GET (\"body\" needs \"request\": {\"method\": \"POST\"})",
                got: "body", message: "\"pagination.requestIn\" \"body\" needs a POST: set \"request.method\" to \"POST\"")
        case let place?: paginator.requestIn = place
        case nil: paginator.requestIn = post ? .body : .query
        }
        if paginator.requestIn == .body, let body = configuration.bodyTemplate, !body.isObject {
            throw FieldError(
                field: "request.body", expected: "an object, for the page values to go in", got: JSON(body.kind.rawValue),
                message: "\"request.body\" must be an object when the page values go in it (pagination.requestIn \"body\")")
        }
        guard let graphql = configuration.graphql else { return try paging.settled(paginator) }
        if paging.strategyGiven {
            throw FieldError(
                field: "pagination.strategy", expected: "no strategy with graphql (it pages the connection by its cursors)",
                got: JSON(paginator.strategy.name),
                message:
                    "\"pagination.strategy\" cannot go with \"graphql\": a GraphQL source pages its connection with first/after and last/before"
            )
        }
        let names = graphql.pageVariables
        func variable(_ name: String) -> String { "variables." + name }
        paginator.strategy = .cursor(
            cursorKey: variable(names.after), cursorPath: graphql.inConnection("pageInfo.endCursor"), fromLastObject: nil,
            hasMorePath: graphql.inConnection("pageInfo.hasNextPage"))
        paginator.pageSizeQueryKey = variable(names.first)
        paginator.previousCursorPath = graphql.inConnection("pageInfo.startCursor")
        paginator.previousHasMorePath = graphql.inConnection("pageInfo.hasPreviousPage")
        paginator.previousCursorKey = variable(names.before)
        paginator.previousPageSizeKey = variable(names.last)
        paginator.totalPath = paginator.totalPath ?? graphql.inConnection("totalCount")
        paginator.requestIn = .body
        return try paging.settled(paginator)
    }
}
