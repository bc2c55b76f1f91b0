import Basics
import JSONKit

/// A GraphQL response read as a Relay connection (`GraphQLQuery`): the rows are
/// `edges[].node`, or `nodes[]` when the server sends nodes and no edges; `errors` with no
/// connection fail the page (kind `graphql`), `errors` beside it are a warning.
enum GraphQLDecoding {
    /// The most errors an error or a warning carries: a response may hold thousands.
    static let maximumErrors = 20
    static let maximumPathLength = 32
    static let maximumCodeLength = 100

    static func decode(
        _ document: JSON?, _ graphql: GraphQLQuery, mapping: ObjectMapping?, response: RemoteResponse, secrets: [String]
    ) -> Result<DecodedResponse, FetchError> {
        let url = response.url, status = response.status
        let errors = document.flatMap { errorList(in: $0, secrets: secrets) }
        guard let document, let connection = document.value(at: graphql.connectionPath), connection.isObject else {
            if let errors { return .failure(failure(errors, response: response)) }
            var error = FetchError(
                kind: .keyPath, message: "the response has no connection at \"\(graphql.connectionPath)\"", url: url, status: status)
            error.keyPath = graphql.connectionPath.description
            return .failure(error)
        }
        let listName = connection["edges"] != nil || connection["nodes"] == nil ? "edges" : "nodes"
        let listPath = graphql.inConnection(listName)
        guard let list = connection[listName], list.isArray else {
            var error = FetchError(
                kind: .keyPath,
                message:
                    "\"\(listPath)\" must be an array of \(listName == "edges" ? "edges {node}" : "nodes"), got \(connection[listName]?.kindDescription ?? "nothing")",
                url: url, status: status)
            error.keyPath = listPath.description
            return .failure(error)
        }
        return ResponseDecoding.objects(
            in: document, keyPath: listPath, mapping: mapping, url: url, status: status,
            elementPath: listName == "edges" ? JSONKeyPath("node") : nil
        ).map { rows in
            // The metadata (pageInfo, totalCount) without the list the rows were made from.
            let rest = document.setting(graphql.connectionPath.components[...], to: connection.removing(listName)).packed()
            var decoded = DecodedResponse(
                objects: rows, document: rest, status: status, headers: response.headers, finalURL: response.finalURL)
            if let errors { decoded.warning = failure(errors, response: response) }
            return decoded
        }
    }

    /// A response's `errors`, each bounded, or nil when it has none.
    static func errorList(in document: JSON, secrets: [String]) -> [FetchError.GraphQLError]? {
        guard let list = document["errors"]?.arrayValue, !list.isEmpty else { return nil }
        return list.prefix(maximumErrors).map { error in
            let text = error["message"]?.stringValue ?? "an error without a message"
            let message = SecretRedaction.excerpt(of: text, characterLimit: ResponseDecoding.serverMessageLimit, secrets: secrets)
            let path = error["path"].flatMap { path -> JSON? in
                guard let steps = path.arrayValue, steps.count <= maximumPathLength,
                    steps.allSatisfy({ $0.kind == .string || $0.kind == .integer })
                else { return nil }
                return path
            }
            let code = (error["extensions"]?["code"]?.stringValue ?? error["type"]?.stringValue).map {
                String($0.prefix(maximumCodeLength))
            }
            return FetchError.GraphQLError(message: message, path: path, code: code)
        }
    }

    /// Errors and no list: kind `graphql`, the first error's message as the server's. A
    /// `RATE_LIMITED` error (GitHub's) is a rate limit, its reset read from the headers.
    static func failure(_ errors: [FetchError.GraphQLError], response: RemoteResponse) -> FetchError {
        var error = FetchError(
            kind: .graphql, message: "the GraphQL server answered with errors: \(errors[0].message)", url: response.url,
            status: response.status)
        error.finalURL = response.finalURL
        error.serverMessage = errors[0].message
        error.graphqlErrors = errors
        let now = WallClock.secondsSince1970()
        error.rateLimit = RateLimitStatus.read(from: response.headers, now: now)
        if errors.contains(where: { $0.code == "RATE_LIMITED" }) {
            error.rateLimited = true
            let retryAfter = response.headerValues("retry-after").first.flatMap { RetryAfter.seconds($0, now: now) }
            error.retryAfterSeconds = retryAfter ?? error.rateLimit?.secondsUntilReset(now: now)
        }
        return error
    }
}
