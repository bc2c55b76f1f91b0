import JSONKit

/// Why a remote fetch failed: what `dataSource/failedWithError` carries.
package struct FetchError: Error, Sendable, Equatable {
    package enum Kind: String, Sendable, CaseIterable {
        case http, timeout, transport, decode, keyPath, mapping, cancelled, tooLarge
        /// Pagination that would go on forever: a next cursor, URL or offset already used
        /// in this cycle, pages that bring nothing new, or more pages than allowed.
        case loop
        /// A next-page URL that leaves the configured origin, refused.
        case crossOrigin
        /// HTTPS that could not be set up: a certificate not trusted, expired or for another
        /// host, a refused client certificate, no common TLS version or cipher, or a
        /// `tls` file that could not be used.
        case tls
        /// The proxy could not be reached, wanted credentials, or refused the tunnel.
        case proxy
        /// A run's `initialPage` or `initialOffset` lies past the end of the list.
        case outOfRange
        /// A header value read from the environment or a file would go to an origin the
        /// person has not allowed it to: nothing was sent.
        case credentialNotAllowed
        /// A GraphQL response with `errors` and no list at the connection.
        case graphql
        /// An action refused with 409 Conflict or 412 Precondition Failed: the row changed
        /// on the server since it was read.
        case conflict
    }

    /// One of a GraphQL response's `errors`: its message, where (`path`), and its
    /// `extensions.code` (or `type`, as GitHub names it).
    package struct GraphQLError: Sendable, Equatable {
        package let message: String
        package let path: JSON?
        package let code: String?

        package init(message: String, path: JSON? = nil, code: String? = nil) {
            self.message = message
            self.path = path
            self.code = code
        }

        var fields: JSON {
            var members: [(String, JSON)] = [("message", JSON(message))]
            if let path { members.append(("path", path)) }
            if let code { members.append(("code", JSON(code))) }
            return .object(members)
        }
    }

    /// Where a body stopped being JSON.
    package struct ParsePosition: Sendable, Equatable {
        package let line: Int
        package let column: Int
        package let position: Int
    }

    /// Which object of the list did not fit the mapping, and where.
    package struct MappingProblem: Sendable, Equatable {
        package let index: Int
        package let issue: ObjectMapping.Issue
    }

    package private(set) var kind: Kind
    package let message: String
    /// The request's URL without credentials, when there was one.
    package var url: String?
    /// The HTTP status, when a response arrived.
    package var status: Int?
    /// Kind-specific detail.
    package var keyPath: String?
    package var mapping: MappingProblem?
    package var parsePosition: ParsePosition?
    package var maxDepth: Int?
    package var maxBodyBytes: Int?
    package var maxObjectsPerPage: Int?
    /// The URL that answered, after redirects (without credentials), when it differs from `url`.
    package var finalURL: String?
    /// The server's own error text, from the first of the fields common APIs put it in
    /// (`ResponseDecoding.serverMessage`).
    package var serverMessage: String?
    /// The start of a failed response's body, as text (bounded; secret values removed).
    package var body: String?
    /// From a 429 or 503 response's `Retry-After`, or a rate-limited response's reset.
    package var retryAfterSeconds: Double?
    /// `loop`: what repeated (`"cursor"`, `"url"`, `"offset"`, `"page"`, `"noNewObjects"`,
    /// `"maxPages"`), and the page count.
    package var loopReason: String?
    package var pagesLoaded: Int?
    /// (credentialNotAllowed) The variable or file that was not sent, and where it would have gone.
    package var credential: ExternalHeader.Source?
    package var origin: String?
    /// (graphql) The response's `errors`, at most `GraphQLDecoding.maximumErrors` of them.
    package var graphqlErrors: [GraphQLError]?

    // MARK: Rate limits (issue 28)

    /// (http) A `429`, or a `403` whose headers say the rate limit is exhausted (or that ask to
    /// retry later): `retryAfterSeconds` then says when the limit resets.
    package var rateLimited = false
    /// What the response's headers said of the rate limit (any status); `describeSource` shows it.
    package var rateLimit: RateLimitStatus?

    /// The same error as another kind (an action's 409 is a `conflict`).
    package func withKind(_ kind: Kind) -> FetchError {
        var error = self
        error.kind = kind
        return error
    }

    package init(kind: Kind, message: String, url: String? = nil, status: Int? = nil) {
        self.kind = kind
        self.message = message
        self.url = url
        self.status = status
    }
}

extension FetchError {
    /// The error as data: its members as `failedWithError` sends them and as the error row of a
    /// list holds them. Defined here, once, because an error row is a row like any other: the
    /// model keeps it, derived sources filter, sort and diff it, and clients read it with the
    /// rest of the rows. The wire layer sends this same value (`Wire/Encoding.swift`).
    package var fields: JSON {
        var members: [(String, JSON)] = [("kind", JSON(kind.rawValue)), ("message", JSON(message))]
        if let status { members.append(("status", JSON(status))) }
        if let url { members.append(("url", JSON(url))) }
        if let keyPath { members.append(("keyPath", JSON(keyPath))) }
        if let mapping {
            members += [
                ("index", JSON(mapping.index)), ("field", JSON(mapping.issue.field)),
                ("expected", JSON(mapping.issue.expected)), ("got", JSON(mapping.issue.got)),
            ]
        }
        if let parsePosition {
            members += [
                ("line", JSON(parsePosition.line)), ("column", JSON(parsePosition.column)), ("position", JSON(parsePosition.position)),
            ]
        }
        if let maxDepth { members.append(("maxDepth", JSON(maxDepth))) }
        if let maxBodyBytes { members.append(("maxBodyBytes", JSON(maxBodyBytes))) }
        if let maxObjectsPerPage { members.append(("maxObjectsPerPage", JSON(maxObjectsPerPage))) }
        if let finalURL { members.append(("finalURL", JSON(finalURL))) }
        if let serverMessage { members.append(("serverMessage", JSON(serverMessage))) }
        if let body { members.append(("body", JSON(body))) }
        if let retryAfterSeconds { members.append(("retryAfterSeconds", JSON(retryAfterSeconds))) }
        if let loopReason { members.append(("reason", JSON(loopReason))) }
        if let pagesLoaded { members.append(("pagesLoaded", JSON(pagesLoaded))) }
        if let credential { members.append(("credential", credential.reference)) }
        if let origin { members.append(("origin", JSON(origin))) }
        if let graphqlErrors { members.append(("graphqlErrors", .array(graphqlErrors.map(\.fields)))) }
        if rateLimited { members.append(("rateLimited", true)) }
        return .object(members)
    }

    /// The error placeholder row that stands for this failure in a list.
    package var placeholderRow: JSON { Placeholder.errorRow(fields) }
}
