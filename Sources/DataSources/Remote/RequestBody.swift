import JSONKit

/// The methods a source's requests use: lists are read with `GET`, or with `POST` where the
/// query goes in a JSON body (GraphQL, Notion, Elasticsearch).
package enum HTTPMethod: String, Sendable, CaseIterable {
    case get = "GET"
    case post = "POST"
    /// An action's methods (a list is read with GET or POST only).
    case put = "PUT", patch = "PATCH", delete = "DELETE"
}

/// Where a paginated source puts its page values (page, offset, cursor, size): the query
/// string, or key paths of the JSON body.
package enum PageValuesPlace: String, Sendable, CaseIterable {
    case query, body
}

/// `graphql: {query, variables?, connection, pageVariables?}`: the list is the Relay
/// connection at `data.<connection>` of the query's result.
package struct GraphQLQuery: Sendable {
    package var query: String
    /// An object: the query's own variables; the page variables are set over them.
    package var variables: JSON
    /// Where the connection is, under `data`.
    package var connection: JSONKeyPath
    package var pageVariables: PageVariables

    /// The names of Relay's paging arguments in the query, for schemas that rename them.
    package struct PageVariables: Sendable, Equatable {
        package var first = "first"
        package var after = "after"
        package var last = "last"
        package var before = "before"

        package init() {}

        /// The names given, Relay's where none is.
        package init(first: String?, after: String?, last: String?, before: String?) {
            self.first = first ?? self.first
            self.after = after ?? self.after
            self.last = last ?? self.last
            self.before = before ?? self.before
        }
    }

    package init(query: String, variables: JSON = [:], connection: JSONKeyPath, pageVariables: PageVariables = PageVariables()) {
        self.query = query
        self.variables = variables
        self.connection = connection
        self.pageVariables = pageVariables
    }

    /// `data.<connection>`: where the connection is in a response.
    package var connectionPath: JSONKeyPath { JSONKeyPath("data." + connection.description) }

    /// A path inside the connection (`pageInfo.endCursor`).
    package func inConnection(_ path: String) -> JSONKeyPath { JSONKeyPath(connectionPath.description + "." + path) }

    /// The body a GraphQL server reads: `{"query", "variables"}`.
    package var body: JSON { ["query": JSON(query), "variables": variables] }
}

extension RemoteConfiguration {
    /// The JSON body of this source's requests before page values go in: the GraphQL
    /// query and its variables, the configured `request.body`, or nil (a GET).
    package var bodyTemplate: JSON? {
        if let graphql { return graphql.body }
        guard method == .post else { return nil }
        return body ?? [:]
    }

    /// The body with `values` set at their key paths (objects made on the way), encoded.
    func encodedBody(setting values: [(path: JSONKeyPath, value: JSON)]) -> [UInt8]? {
        guard var body = bodyTemplate else { return nil }
        for (path, value) in values { body = body.setting(path.components[...], to: value) }
        return body.encoded()
    }
}

extension JSON {
    /// This value with `value` at `path`: each step an object member, made (or replacing what
    /// is not an object) where missing. An empty path is `value` itself.
    package func setting(_ path: ArraySlice<String>, to value: JSON) -> JSON {
        guard let key = path.first else { return value }
        let object = isObject ? self : [:]
        let inner = object[key] ?? [:]
        return object.setting(key, to: inner.setting(path.dropFirst(), to: value))
    }
}

extension RemoteConfiguration {
    /// `value` with the values of object members named like secrets (`token`, `api_key`,
    /// `password`: `isSecretQueryParameter`) replaced by `"<redacted>"`, at any depth: for
    /// showing a body (`describeSource`), never for sending it.
    package static func redactingSecretMembers(_ value: JSON) -> JSON {
        value.replacingMembers(named: isSecretQueryParameter, with: "<redacted>")
    }
}
