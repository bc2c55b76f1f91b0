import Basics
import DataSources
import JSONKit
import WireSchema

/// The collection fetcher's members of `createSource` (remote and paginated).
enum RemoteConfigurationDecoding {
    /// A remote source's members (a paginated source's first ones), declared once: their
    /// decoding and their part of SourceSpec's schema.
    static let members = ObjectDeclaration(
        .required(
            "remoteConfiguration",
            remoteConfiguration.shape(expected: "an object {baseURL, headers?, timeoutSeconds?}").documented(.ref("RemoteConfiguration"))),
        .required("apiPath", apiPathShape),
        .optional("queryParameters", queryParametersShape),
        .optional("keyPath", optionalKeyPath),
        .optional("mapping", MappingDecoding.shape),
        .optional("placeholderStorageOptions", placeholderShape),
        .optional("limits", limits.shape(expected: "an object {maxBodyBytes?, maxDepth?, maxObjectsPerPage?}").documented(.ref("Limits"))),
        .optional("cache", cacheShape),
        .optional("refreshIntervalSeconds", refreshIntervalShape, doc: "seconds between refreshes of a live list; null: none"),
        .optional("request", RequestBodyDecoding.requestShape, doc: "the method, and a POST's JSON body"),
        .optional("graphql", RequestBodyDecoding.graphqlShape, doc: "a GraphQL query whose result holds the list as a Relay connection"),
        .optional("actions", ActionDecoding.actionsShape, doc: "what a client may do to rows (performAction), by name"),
        as: {
            remote, apiPath, query, keyPath, mapping, placeholders, limits, cache, refreshInterval, request,
            graphql, actions throws(FieldError) in
            // A full URL in apiPath replaces the base's host and port: they are checked as the base's are.
            let target = URLResolution.requestURL(baseURL: remote.baseURL, apiPath: apiPath, query: [])
            if let problem = URLResolution.authorityProblem(in: target) {
                throw FieldError(
                    field: "apiPath", expected: "a path relative to baseURL, or a full URL with a host and a port in 1...65535",
                    got: JSON(URLResolution.redacted(apiPath)),
                    message: "\"apiPath\" must resolve against baseURL to a URL with a host and a port in 1...65535: \(problem)")
            }
            var configuration = RemoteConfiguration(
                baseURL: remote.baseURL, headers: remote.headers.literal,
                timeoutSeconds: remote.timeout ?? RemoteConfiguration.defaultTimeoutSeconds, apiPath: apiPath,
                queryParameters: query ?? [], keyPath: keyPath ?? nil, mapping: mapping, placeholders: placeholders ?? .standard,
                maximumBodySize: limits?.maximumBodySize ?? RemoteConfiguration.defaultMaximumBodySize,
                maximumDepth: limits?.maximumDepth ?? RemoteConfiguration.defaultMaximumDepth)
            configuration.compression = remote.compression
            configuration.proxy = remote.proxy ?? .environment
            configuration.maximumObjectsPerPage = limits?.maximumObjects ?? RemoteConfiguration.defaultMaximumObjectsPerPage
            configuration.cache = cache ?? CacheSettings()
            configuration.refreshIntervalSeconds = refreshInterval ?? nil
            configuration.tls = remote.tls ?? nil
            configuration.externalHeaders = remote.headers.external
            try RequestBodyDecoding.apply(request: request, graphql: graphql, keyPath: keyPath ?? nil, to: &configuration)
            if let actions {
                try ActionDecoding.checkRowPaths(actions, mapping: mapping, field: "actions")
                configuration.actions = actions
            }
            try checkCredentialRoute(configuration)
            return configuration
        })

    /// `remoteConfiguration`: where the source's server is and how it is reached.
    struct Remote: Sendable {
        var baseURL: String
        var headers: HeaderValues
        var timeout: Double?
        var tls: TLSFiles??
        var compression: Bool
        var proxy: ProxySetting?
    }

    static let remoteConfiguration = ObjectDeclaration(
        .required(
            "baseURL", Shape(.string(pattern: "^[Hh][Tt][Tt][Pp][Ss]?://"), expected: "an http or https URL string", decode: baseURLValue)),
        .optional("headers", headersShape, default: HeaderValues(), defaultText: "{}"),
        .optional("timeoutSeconds", .number(in: 0...RemoteConfiguration.maximumTimeoutSeconds, excludingLowerBound: true)),
        .optional("tls", TLSDecoding.shape),
        .flag("compression", default: true, doc: "false sends no Accept-Encoding (a gzip or deflate body is still decoded)"),
        .optionalIncludingNull(
            "proxy", Shape(.anyOf([.string(pattern: "^[Hh][Tt][Tt][Pp]://"), .null]), expected: proxyExpectation, decode: proxy),
            doc:
                "http://[user:password@]host[:port], or null for a direct connection; absent: from the daemon's environment (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY)"
        ),
        as: Remote.init)

    /// A path relative to baseURL, or a full URL; never with credentials.
    static let apiPathShape = Shape<String>(.string, expected: "a string: a path relative to baseURL, or a full URL") {
        value, field throws(FieldError) in
        let apiPath = try Decode.string(value, field)
        // Credentials belong in baseURL (sent as Basic to its origin only) or a header: in a
        // path they would be shown wherever the path is, and go wherever it leads.
        if URLResolution.hasUserInfo(apiPath) {
            throw FieldError(
                field: field, expected: "a path or URL without user:password@ (give credentials in baseURL or a header)",
                got: JSON(URLResolution.redacted(apiPath)),
                message:
                    "\"apiPath\" must not hold credentials (user:password@): give them in baseURL, where they are sent as Basic authorization to its origin only, or in a header"
            )
        }
        return apiPath
    }

    /// A key path, or none when empty.
    static let optionalKeyPath = Shape<JSONKeyPath?>(.string, expected: "a string") { value, field throws(FieldError) in
        let text = try Decode.string(value, field)
        return text.isEmpty ? nil : JSONKeyPath(text)
    }

    struct Limits: Sendable {
        var maximumBodySize: Int
        var maximumDepth: Int
        var maximumObjects: Int
    }

    static let limits = ObjectDeclaration(
        .optional(
            "maxBodyBytes", .integer(in: 1...RemoteConfiguration.maximumBodySizeLimit), default: RemoteConfiguration.defaultMaximumBodySize,
            doc: "the most bytes of a response body, decoded"),
        .optional(
            "maxDepth", .integer(in: 1...RemoteConfiguration.maximumDepthLimit), default: RemoteConfiguration.defaultMaximumDepth,
            doc: "the deepest nesting of a response"),
        .optional(
            "maxObjectsPerPage", .integer(in: 1...RemoteConfiguration.maximumObjectsPerPageLimit),
            default: RemoteConfiguration.defaultMaximumObjectsPerPage, doc: "the most rows one page may bring"),
        as: Limits.init)

    static let queryParametersShape = Shape<[(name: String, value: String)]>(
        .ref("QueryParameters"), expected: "an object of query parameters", decode: queryParameters)

    static let placeholderShape = Shape<PlaceholderStorageOptions>(
        .ref("PlaceholderStorageOptions"), expected: placeholderExpectation, decode: placeholderOptions)

    static let headersShape = Shape<HeaderValues>(.ref("Headers"), expected: "an object of headers", decode: headers)

    static let cacheExpectation = "an object {enabled, maxAgeSeconds?, maxPages?}"

    /// `cache: {enabled, maxAgeSeconds?, maxPages?}`.
    static let cache = ObjectDeclaration(
        .required("enabled", Shape.bool),
        .optional("maxAgeSeconds", .number(in: 0...CacheSettings.maximumAgeLimit)),
        .optional("maxPages", .integer(in: 1...CacheSettings.maximumPagesLimit), default: CacheSettings.defaultMaximumPages),
        as: { CacheSettings(enabled: $0, maximumAgeSeconds: $1, maximumPages: $2) })

    static let cacheShape = cache.shape(expected: cacheExpectation).documented(.ref("CacheSettings"))

    /// A value read from the environment or a file is allowed to an origin, not to whoever the
    /// list spec routes it through: a proxy the spec names sees it in clear over `http`, and
    /// over `https` too when the spec also names the CA the connection trusts. Such a spec is
    /// refused; a proxy from the daemon's environment (the person's own) is not the spec's.
    static func checkCredentialRoute(_ configuration: RemoteConfiguration) throws(FieldError) {
        guard let first = configuration.externalHeaders.first, case .url(let proxy) = configuration.proxy else { return }
        let target = URLResolution.requestURL(baseURL: configuration.baseURL, apiPath: configuration.apiPath, query: [])
        let plain = URLResolution.scheme(of: target) != "https"
        guard plain || configuration.tls?.caFile != nil else { return }
        let why =
            plain
            ? "the source's URL is http, so the proxy the list spec names would read it"
            : "the list spec names both the proxy and the CA its HTTPS connections trust, so that proxy could read it"
        throw FieldError(
            field: "remoteConfiguration.proxy",
            expected: "no proxy of the list spec's own when a header is read from the environment or a file over http, or with tls.caFile",
            got: JSON(URLResolution.redacted(proxy)),
            message:
                "\"remoteConfiguration.proxy\": header \"\(first.name)\" is read from \(first.source.description), which is not sent through \(URLResolution.redacted(proxy)): \(why). Leave out proxy (the daemon's environment's proxy is used), or use https without tls.caFile"
        )
    }

    static let refreshIntervalRange = RemoteConfiguration.minimumRefreshIntervalSeconds...RemoteConfiguration.maximumTimeoutSeconds

    /// Seconds between refreshes of a live list, or null for none.
    static func refreshInterval(_ value: JSON, _ field: String) throws(FieldError) -> Double? {
        if value.isNull { return nil }
        return try Decode.number(value, field, in: refreshIntervalRange, excludingLowerBound: false)
    }

    /// An absolute http(s) URL with a host and a port that fits.
    static func baseURLValue(_ value: JSON, _ field: String) throws(FieldError) -> String {
        let base = try Decode.string(value, field)
        let scheme = base.split(separator: ":", maxSplits: 1).first.map { $0.lowercased() } ?? ""
        guard base.contains("://"), scheme == "http" || scheme == "https" else {
            throw FieldError(field: field, expected: "an http or https URL", got: JSON(URLResolution.redacted(base)))
        }
        if let problem = URLResolution.authorityProblem(in: base) {
            throw FieldError(
                field: field, expected: "an http or https URL with a host and a port in 1...65535",
                got: JSON(URLResolution.redacted(base)),
                message: "\"\(field)\" must be an http or https URL with a host and a port in 1...65535: \(problem)")
        }
        return base
    }

    static let proxyExpectation = "an http:// proxy URL (http://[user:password@]host[:port]), or null for a direct connection"

    /// `remoteConfiguration.proxy`: null, or an `http://` URL with a host, a port that fits
    /// and no path. What is echoed never holds the credentials.
    static func proxy(_ value: JSON, _ field: String) throws(FieldError) -> ProxySetting {
        if value.isNull { return .direct }
        guard let text = value.stringValue else { throw .mistyped(field, expected: proxyExpectation, got: value) }
        let shown = JSON(URLRedaction.withoutCredentials(text))
        func refuse(_ problem: String) -> FieldError {
            FieldError(
                field: field, expected: proxyExpectation, got: shown, message: "\"\(field)\" must be \(proxyExpectation): \(problem)")
        }
        let scheme = text.firstRange(of: "://").map { text[..<$0.lowerBound].lowercased() }
        switch scheme {
        case "http"?:
            break
        case "https"?:
            throw refuse("https:// proxies (TLS to the proxy) are not supported; https requests go through an http:// proxy encrypted")
        case "socks4"?, "socks4a"?, "socks5"?, "socks5h"?:
            throw refuse("SOCKS proxies are not supported")
        default:
            throw refuse("it does not start with http://")
        }
        let afterScheme = text[text.index(text.startIndex, offsetBy: "http://".count)...]
        let authorityEnd = afterScheme.firstIndex { "/?#".contains($0) } ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        guard afterScheme[authorityEnd...].isEmpty || afterScheme[authorityEnd...] == "/" else { throw refuse("it has a path or a query") }
        if let problem = URLResolution.authorityProblem(in: text) { throw refuse(problem) }
        if let at = authority.lastIndex(of: "@"), !isPercentEncoded(authority[..<at]) {
            throw refuse("its user name or password is not validly percent-encoded")
        }
        return .url(text)
    }

    /// Every `%` starts a `%XX` escape.
    private static func isPercentEncoded(_ text: Substring) -> Bool {
        var bytes = text.utf8[...]
        while let percent = bytes.firstIndex(of: UInt8(ascii: "%")) {
            let escape = bytes[percent...].dropFirst().prefix(2)
            guard escape.count == 2,
                escape.allSatisfy({ UInt8(ascii: "0")...UInt8(ascii: "9") ~= $0 || UInt8(ascii: "a")...UInt8(ascii: "f") ~= ($0 | 0x20) })
            else {
                return false
            }
            bytes = bytes[percent...].dropFirst(3)
        }
        return true
    }

    /// `headers`: each value a string, or read when each request is made (issue 28).
    struct HeaderValues: Sendable {
        var literal: [(name: String, value: String)] = []
        var external: [ExternalHeader] = []
    }

    static let headerValueExpectation = "a string, or an object {env, prefix?} or {file, prefix?}"

    static func headers(_ value: JSON, _ field: String) throws(FieldError) -> HeaderValues {
        guard let members = value.objectMembers else {
            throw .mistyped(field, expected: "an object of header names to strings, {env, prefix?} or {file, prefix?}", got: value)
        }
        var headers = HeaderValues()
        for (name, member) in members {
            // The value itself is never echoed: it may be a secret.
            if let text = member.stringValue {
                headers.literal.append((name, text))
            } else if member.isObject {
                headers.external.append(try externalHeader(name: name, member, "\(field).\(name)"))
            } else {
                throw .mistyped("\(field).\(name)", expected: headerValueExpectation, got: member)
            }
        }
        return headers
    }

    // MARK: Header values from the environment or a file (issue 28)

    /// `{"env": "GITHUB_TOKEN", "prefix": "Bearer "}` or `{"file": "~/.config/x/token"}`. The
    /// value is read now, so that an unset variable or a missing file is refused here, naming
    /// it (and never what it holds); it is read again for each request.
    static func externalHeader(name: String, _ value: JSON, _ field: String) throws(FieldError) -> ExternalHeader {
        var reader = try ObjectReader(value, field: field, expected: headerValueExpectation)
        let variable = try reader.optionalString("env")
        let given = try reader.optionalString("file")
        let prefix = try reader.optionalString("prefix") ?? ""
        try reader.finish()
        if prefix.utf8.contains(where: { ($0 < 0x20 && $0 != UInt8(ascii: "\t")) || $0 == 0x7F }) {
            throw FieldError(
                field: reader.path("prefix"), expected: "a string without control characters", got: JSON(prefix),
                message: "\"\(reader.path("prefix"))\" must not hold line breaks or other control characters")
        }
        let header: ExternalHeader
        switch (variable, given) {
        case (let variable?, nil):
            guard ExternalValues.isVariableName(variable) else {
                throw FieldError(field: reader.path("env"), expected: "the name of an environment variable", got: JSON(variable))
            }
            header = ExternalHeader(name: name, source: .environment(variable), prefix: prefix)
        case (nil, let given?):
            switch ExternalValues.expandedPath(given) {
            case .success(let path):
                header = ExternalHeader(name: name, source: .file(given: given, path: path), prefix: prefix)
            case .failure(let reason):
                throw FieldError(
                    field: reader.path("file"), expected: "an absolute path, or one from ~/", got: JSON(given),
                    message: "\"\(reader.path("file"))\": the path \(reason.message)")
            }
        case (nil, nil):
            throw FieldError.missing(
                reader.path("env"), expected: "one of \"env\" (a variable of the daemon's environment) and \"file\" (a path)")
        case (_?, _?):
            throw FieldError(
                field: reader.path("file"), expected: "only one of env and file", got: JSON(given ?? ""),
                message: "\"\(field)\" must have one of \"env\" and \"file\", not both")
        }
        if case .failure(let problem) = header.read() {
            let member = variable == nil ? "file" : "env"
            let expected =
                variable == nil
                ? "a readable regular file of at most \(ExternalValues.maximumFileBytes) bytes holding the value"
                : "a variable set, and not empty, in the daemon's environment"
            throw FieldError(
                field: reader.path(member), expected: expected, got: JSON(variable ?? given ?? ""),
                message: "\"\(reader.path(member))\": \(problem.message)")
        }
        return header
    }

    static func queryParameters(_ value: JSON, _ field: String) throws(FieldError) -> [(name: String, value: String)] {
        guard let members = value.objectMembers else {
            throw .mistyped(field, expected: "an object of names to strings, numbers or booleans", got: value)
        }
        var parameters: [(name: String, value: String)] = []
        for (name, member) in members {
            let text: String
            switch member.kind {
            case .string: text = member.stringValue ?? ""
            case .integer, .real: text = member.description
            case .boolean: text = member.boolValue == true ? "true" : "false"
            default: throw .mistyped("\(field).\(name)", expected: "a string, a number or a boolean", got: member)
            }
            parameters.append((name, text))
        }
        return parameters
    }

    static let placeholderExpectation =
        "an integer made of the bits 2 (loading), 4 (noResults) and 8 (errors), or an array of \"loading\", \"noResults\", \"errors\""

    /// `2|4|8` bits or `["loading", "noResults", "errors"]`.
    static func placeholderOptions(_ value: JSON, _ field: String) throws(FieldError) -> PlaceholderStorageOptions {
        if value.kind == .integer, let bits = value.integerValue {
            guard bits >= 0, bits & ~0b1110 == 0 else { throw .invalid(field, expected: placeholderExpectation, got: value) }
            return PlaceholderStorageOptions(rawValue: bits)
        }
        guard let names = value.arrayValue else { throw .mistyped(field, expected: placeholderExpectation, got: value) }
        var options: PlaceholderStorageOptions = []
        for name in names {
            guard let text = name.stringValue, let option = PlaceholderStorageOptions.names.first(where: { $0.0 == text })?.1 else {
                throw .invalid(field, expected: placeholderExpectation, got: value)
            }
            options.insert(option)
        }
        return options
    }
}

extension RemoteConfigurationDecoding {
    static let refreshIntervalShape = Shape<Double?>(
        .anyOf([.number(in: refreshIntervalRange), .null]),
        expected: "a number of seconds in \(Int(refreshIntervalRange.lowerBound))...\(Int(refreshIntervalRange.upperBound)), or null"
    ) { value, field throws(FieldError) in try refreshInterval(value, field) }

    /// The query parameters as sent, once checked.
    static let queryParametersValue = Shape<JSON>(.ref("QueryParameters"), expected: "an object of query parameters") {
        value, field throws(FieldError) in
        _ = try queryParameters(value, field)
        return value
    }

    /// The headers as sent, once checked.
    static let headersValue = Shape<JSON>(.ref("Headers"), expected: "an object of headers") { value, field throws(FieldError) in
        _ = try headers(value, field)
        return value
    }
}
