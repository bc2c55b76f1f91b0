import JSONKit

/// Why a remote fetch failed: what `dataSource/failedWithError` carries.
public struct FetchError: Error, Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
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
    }

    /// Where a body stopped being JSON.
    public struct ParsePosition: Sendable, Equatable {
        public let line: Int
        public let column: Int
        public let position: Int
    }

    /// Which object of the list did not fit the mapping, and where.
    public struct MappingProblem: Sendable, Equatable {
        public let index: Int
        public let issue: ObjectMapping.Issue
    }

    public let kind: Kind
    public let message: String
    /// The request's URL without credentials, when there was one.
    public var url: String?
    /// The HTTP status, when a response arrived.
    public var status: Int?
    /// Kind-specific detail.
    public var keyPath: String?
    public var mapping: MappingProblem?
    public var parsePosition: ParsePosition?
    public var maxDepth: Int?
    public var maxBodyBytes: Int?
    /// The URL that answered, after redirects (without credentials), when it differs from `url`.
    public var finalURL: String?
    /// The server's own error text, from the first of the fields common APIs put it in
    /// (`ResponseDecoding.serverMessage`).
    public var serverMessage: String?
    /// The start of a failed response's body, as text (bounded; secret values removed).
    public var body: String?
    /// From a 429 or 503 response's `Retry-After`, or a rate-limited response's reset.
    public var retryAfterSeconds: Double?
    /// `loop`: what repeated (`"cursor"`, `"url"`, `"offset"`, `"page"`, `"noNewObjects"`,
    /// `"maxPages"`), and the page count.
    public var loopReason: String?
    public var pagesLoaded: Int?

    // MARK: Rate limits (issue 28)

    /// (http) A `429`, or a `403` whose headers say the rate limit is exhausted (or that ask to
    /// retry later): `retryAfterSeconds` then says when the limit resets.
    public var rateLimited = false
    /// What the response's headers said of the rate limit (any status); `describeSource` shows it.
    public var rateLimit: RateLimitStatus?

    public init(kind: Kind, message: String, url: String? = nil, status: Int? = nil) {
        self.kind = kind
        self.message = message
        self.url = url
        self.status = status
    }
}
