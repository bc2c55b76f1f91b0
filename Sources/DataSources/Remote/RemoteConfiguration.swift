import Basics
import JSONKit

/// The collection fetcher's settings, shared by remote and paginated sources (Instant
/// Cocoa's `ICCollectionFetcher` and `ICRemoteConfiguration`). Decoded and range-checked
/// by the daemon's wire layer; the limits below are the ones it enforces.
package struct RemoteConfiguration: Sendable {
    package var baseURL: String
    /// Sent with every request; `Accept: application/json` unless overridden here.
    package var headers: [(name: String, value: String)]
    package var timeoutSeconds: Double
    package var apiPath: String
    /// Stringified: numbers as JSON writes them, booleans as `true`/`false`.
    package var queryParameters: [(name: String, value: String)]
    /// Dot path to the array in the response; nil for the response itself.
    package var keyPath: JSONKeyPath?
    package var mapping: ObjectMapping?
    package var placeholders: PlaceholderStorageOptions
    package var maximumBodySize: Int
    /// Deepest nesting of arrays and objects accepted in a response.
    package var maximumDepth: Int
    /// The most elements of any array in a response: a page's rows (`limits.maxObjectsPerPage`).
    package var maximumObjectsPerPage = defaultMaximumObjectsPerPage
    /// Whether loaded pages are kept in the daemon's persisted cache.
    package var cache = CacheSettings()
    /// A live list: the loaded pages are revalidated this often; nil: only when asked.
    package var refreshIntervalSeconds: Double?

    // TLS (issue 28): trust and client certificates for HTTPS.
    /// `remoteConfiguration.tls`; nil: the system's trust (or `SSL_CERT_FILE`'s), no client certificate.
    package var tls: TLSFiles?

    // MARK: Networks: compression and proxy

    /// `compression`: whether requests send `Accept-Encoding: gzip, deflate`. A gzip or
    /// deflate body is decoded either way.
    package var compression = true
    /// `proxy`: which proxy requests go through.
    package var proxy: ProxySetting = .environment

    // MARK: Requests with a body

    /// `request.method`: `GET`, or `POST` with `body` (a GraphQL source's is always `POST`).
    package var method = HTTPMethod.get
    /// `request.body`: the JSON body of a `POST`, before page values go in.
    package var body: JSON?
    /// `graphql`: the query whose result holds the list as a Relay connection.
    package var graphql: GraphQLQuery?
    /// `actions`: what a client may do to rows (`performAction`), by name, in the order given.
    package var actions: [Action] = []

    // MARK: Credentials from outside the configuration (issue 28)

    /// Headers whose values are read from the environment or a file when each request is
    /// made (Credentials.swift); sent after `headers`.
    package var externalHeaders: [ExternalHeader] = []

    package static let defaultTimeoutSeconds = 120.0
    /// A day: longer waits are mistakes, and the HTTP layer counts nanoseconds in 64 bits.
    package static let maximumTimeoutSeconds = 86_400.0
    package static let defaultMaximumBodySize = 32 << 20
    /// 1 GiB: the body is held in memory whole.
    package static let maximumBodySizeLimit = 1 << 30
    package static let defaultMaximumDepth = 64
    /// jansson itself stops at 2048 levels.
    package static let maximumDepthLimit = 2048
    /// A page's rows are applied on the main loop, between other requests: this many keep that
    /// under a few tens of milliseconds (BENCHMARKS.md, pagestall).
    package static let defaultMaximumObjectsPerPage = 100_000
    /// The most a source may ask for: the rows of a counted list.
    package static let maximumObjectsPerPageLimit = 50_000_000
    /// Values and members a response may hold in all, for each of `maximumObjectsPerPage`: the
    /// nodes jansson makes (about 50 bytes each) whatever the document's shape.
    package static let valuesPerObject = 32
    /// The shortest refresh interval: a live list is not a busy loop.
    package static let minimumRefreshIntervalSeconds = 1.0

    package init(
        baseURL: String, headers: [(name: String, value: String)] = [], timeoutSeconds: Double = defaultTimeoutSeconds,
        apiPath: String, queryParameters: [(name: String, value: String)] = [], keyPath: JSONKeyPath? = nil,
        mapping: ObjectMapping? = nil, placeholders: PlaceholderStorageOptions = .standard,
        maximumBodySize: Int = defaultMaximumBodySize, maximumDepth: Int = defaultMaximumDepth
    ) {
        self.baseURL = baseURL
        self.headers = headers
        if !headers.contains(header: "accept") {
            self.headers.insert(("Accept", "application/json"), at: 0)
        }
        self.timeoutSeconds = timeoutSeconds
        self.apiPath = apiPath
        self.queryParameters = queryParameters
        self.keyPath = keyPath
        self.mapping = mapping
        self.placeholders = placeholders
        self.maximumBodySize = maximumBodySize
        self.maximumDepth = maximumDepth
    }

    /// Values that must never appear in an error: secret header values and the password
    /// of the base URL.
    package var secretValues: [String] {
        var values = headers.filter { Self.isSecretHeader($0.name) }.map(\.value)
        // A server echoes the token of `Bearer TOKEN`, not the whole value: the credentials after
        // an authorization scheme are a secret of their own.
        for value in values {
            if let space = value.firstIndex(of: " "), case let rest = value[value.index(after: space)...].trimmingSpaces(), !rest.isEmpty {
                values.append(String(rest))
            }
        }
        if let password = URLResolution.password(in: baseURL) { values.append(password) }
        if case .url(let url) = proxy, let password = URLResolution.password(in: url) { values.append(password) }
        // As sent in Basic authorization, and as a server may echo it: percent-decoded.
        if let basic = BasicCredentials(url: baseURL), !basic.password.isEmpty, !values.contains(basic.password) {
            values.append(basic.password)
        }
        return values
    }

    /// A query parameter whose value is secret: the header rule, with `_` read as `-` (`api_key`).
    package static func isSecretQueryParameter(_ name: String) -> Bool {
        isSecretHeader(name) || isSecretHeader(name.replacing("_", with: "-"))
    }

    /// Header values that must never reach logs, errors or `describeSource`.
    package static func isSecretHeader(_ name: String) -> Bool {
        let lower = name.lowercased()
        guard !secretHeaderNames.contains(lower) else { return true }
        // Searched in the UTF-8 bytes, not by characters (asked of every header of every
        // request): a fragment found among bytes a character search would not split (an "n"
        // with an accent after it) makes a header secret, never the other way round.
        let bytes = Array(lower.utf8)
        return secretHeaderFragments.contains { fragment in
            bytes.count >= fragment.count
                && (0...(bytes.count - fragment.count)).contains { bytes[$0..<$0 + fragment.count].elementsEqual(fragment) }
        }
    }

    private static let secretHeaderNames: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]
    private static let secretHeaderFragments = ["token", "secret", "api-key", "apikey", "password", "session"].map { Array($0.utf8) }
}

/// `remoteConfiguration.proxy`.
package enum ProxySetting: Sendable, Equatable {
    /// Absent: the one the daemon's environment names (`HTTPS_PROXY`, `HTTP_PROXY`,
    /// `ALL_PROXY`, `NO_PROXY`).
    case environment
    /// `null`: none, whatever the environment says.
    case direct
    /// `"http://[user:password@]host[:port]"`, whatever the environment says.
    case url(String)
}

/// `cache: {enabled, maxAgeSeconds?, maxPages?}` of a remote or paginated source.
package struct CacheSettings: Sendable, Equatable {
    package var enabled: Bool
    /// An entry older than this (since the server last gave or confirmed it) is not shown; nil: any age.
    package var maximumAgeSeconds: Double?
    /// The most pages kept; pages loaded after them are not stored.
    package var maximumPages: Int

    package static let defaultMaximumPages = 20
    package static let maximumPagesLimit = 10_000
    /// Ten years: longer is a mistake, and seconds stay far from overflowing.
    package static let maximumAgeLimit = 315_360_000.0

    package init(enabled: Bool = false, maximumAgeSeconds: Double? = nil, maximumPages: Int = defaultMaximumPages) {
        self.enabled = enabled
        self.maximumAgeSeconds = maximumAgeSeconds
        self.maximumPages = maximumPages
    }
}
