import Basics
import DataSources
import JSONKit

/// `createSource` params: `name`, `kind`, `identityKey?`, and the members of that kind.
struct CreateSourceParams: WireParams {
    var spec: SourceSpec
    /// What names a remote or paginated source's entry in the persisted cache: every member
    /// that changes what the server returns or how it is mapped (secret values included: the
    /// store keeps only a hash). Not the name, placeholders, `cache` or `refreshIntervalSeconds`.
    var cacheKey: PageCacheKey?
    /// The params as sent (what `updateSource` starts from).
    var wire: JSON = .null

    static let membersOutsideCacheKey: Set = ["name", "placeholderStorageOptions", "cache", "refreshIntervalSeconds", "prefetchDistance"]

    static let kinds = ["simple", "sectioned", "multi", "remote", "paginated", "filtered"]

    init(_ reader: inout ObjectReader) throws(FieldError) {
        let name = try reader.string("name", nonEmpty: true)
        guard let kindValue = reader.value("kind") else { throw .missing("kind", expected: "one of \(Self.kinds.joined(separator: ", "))") }
        let kindName = try Decode.string(kindValue, "kind")
        let identityKey = try reader.optionalKeyPath("identityKey")
        let kind: SourceSpec.Kind
        switch kindName {
        case "simple":
            let objects = try reader.optional("objects") { value, field throws(FieldError) in try Decode.array(value, field) } ?? []
            kind = .simple(objects: objects)
        case "sectioned":
            kind = .sectioned(
                source: try reader.required("source", Decode.sourceName, expected: "the name of an existing source"),
                sectioningKey: try reader.required("sectioningKey", Decode.keyPath, expected: "a non-empty key path string"),
                sortDescriptors: try reader.optional("sortDescriptors", Self.sortDescriptors) ?? [])
        case "multi":
            let names = try reader.required(
                "sources",
                { value, field throws(FieldError) in
                    try Decode.array(value, field, expected: "an array of source names").enumerated().map {
                        index, element throws(FieldError) in
                        try Decode.sourceName(element, "\(field)[\(index)]")
                    }
                }, expected: "an array of source names")
            kind = .multi(sources: names, preserveSections: try reader.optionalBool("preserveSections") ?? false)
        case "filtered":
            kind = .filtered(
                source: try reader.required("source", Decode.sourceName, expected: "the name of an existing source"),
                filter: try reader.optional("filter", FilterDecoding.predicate),
                match: try reader.optional("match", FilterDecoding.match))
        case "remote":
            let configuration = try RemoteConfigurationDecoding.configuration(&reader)
            kind = .remote(configuration)
            cacheKey = Self.cacheKey(reader.wholeObject, configuration)
        case "paginated":
            let configuration = try RemoteConfigurationDecoding.configuration(&reader)
            kind = .paginated(configuration, try RemoteConfigurationDecoding.paginator(&reader))
            cacheKey = Self.cacheKey(reader.wholeObject, configuration)
        default:
            throw FieldError(
                field: "kind", expected: "one of \(Self.kinds.joined(separator: ", "))", got: kindValue,
                message: "\"kind\" must be one of \(Self.kinds.joined(separator: ", ")), got \"\(kindName)\"")
        }
        spec = SourceSpec(name: name, identityKey: identityKey, kind: kind)
        wire = reader.wholeObject
    }

    private static func cacheKey(_ params: JSON, _ configuration: RemoteConfiguration) -> PageCacheKey {
        var material = params
        for member in membersOutsideCacheKey { material = material.removing(member) }
        let label = URLResolution.redacted(
            URLResolution.requestURL(
                baseURL: configuration.baseURL, apiPath: configuration.apiPath,
                query: []))
        return PageCacheKey(material: "datasourced-cache-key-1 " + material.text(format: .sortedKeys), label: label)
    }

    /// `[{keyPath, ascending?}]`.
    private static func sortDescriptors(_ value: JSON, _ field: String) throws(FieldError) -> [SortDescriptor] {
        var descriptors: [SortDescriptor] = []
        for (index, element) in try Decode.array(value, field, expected: "an array of {keyPath, ascending}").enumerated() {
            var reader = try ObjectReader(element, field: "\(field)[\(index)]", expected: "an object {keyPath, ascending}")
            let keyPath = try reader.required("keyPath", Decode.keyPath, expected: "a non-empty key path string")
            let ascending = try reader.optionalBool("ascending") ?? true
            try reader.finish()
            descriptors.append(SortDescriptor(keyPath: keyPath, ascending: ascending))
        }
        return descriptors
    }
}

/// A filtered source's `filter` and `match` (`createSource`, `setFilter`).
enum FilterDecoding {
    static let predicateExpectation = "an object {keyPath, op, value}, {and: [...]}, {or: [...]} or {not: {...}}"
    static let operators = Predicate.Operator.allCases.map(\.rawValue)

    /// `{keyPath, op, value}`, `{and: [P, ...]}`, `{or: [P, ...]}` or `{not: P}`, nested at most
    /// `Predicate.maximumDepth` levels deep, each `and`, `or` and `not` a level (Protocol.md): a
    /// comparison alone is 0 levels, `{not: comparison}` 1; 32 nested `not`s around a
    /// comparison are taken, and a 33rd is refused, naming its field.
    static func predicate(_ value: JSON, _ field: String) throws(FieldError) -> Predicate {
        try predicate(value, field, levels: 0)
    }

    /// `levels`: how many `and`, `or` and `not` hold this predicate.
    private static func predicate(_ value: JSON, _ field: String, levels: Int) throws(FieldError) -> Predicate {
        var reader = try ObjectReader(value, field: field, expected: predicateExpectation)
        /// This predicate is an `and`, `or` or `not`: a level more than the ones holding it.
        func level() throws(FieldError) {
            guard levels < Predicate.maximumDepth else {
                throw FieldError(
                    field: field, expected: "a predicate nested at most \(Predicate.maximumDepth) levels deep (and, or, not)",
                    got: JSON(value.kind.rawValue),
                    message: "\"\(field)\": the filter nests more than \(Predicate.maximumDepth) levels deep (each and, or, not is a level)"
                )
            }
        }
        func list(_ key: String) throws(FieldError) -> [Predicate]? {
            guard let member = reader.rawValue(key) else { return nil }
            try level()
            var predicates: [Predicate] = []
            for (index, element) in try Decode.array(member, reader.path(key), expected: "an array of predicates").enumerated() {
                predicates.append(try predicate(element, "\(reader.path(key))[\(index)]", levels: levels + 1))
            }
            return predicates
        }
        let result: Predicate
        if let predicates = try list("and") {
            result = .and(predicates)
        } else if let predicates = try list("or") {
            result = .or(predicates)
        } else if let inner = reader.rawValue("not") {
            try level()
            result = .not(try predicate(inner, reader.path("not"), levels: levels + 1))
        } else {
            let keyPath = try reader.required("keyPath", Decode.keyPath, expected: "a non-empty key path string")
            let op = try reader.required(
                "op",
                { value, field throws(FieldError) in
                    guard let name = value.stringValue else {
                        throw .mistyped(field, expected: "one of " + operators.joined(separator: ", "), got: value)
                    }
                    guard let op = Predicate.Operator(rawValue: name) else {
                        throw FieldError(
                            field: field, expected: "one of " + operators.joined(separator: ", "), got: value,
                            message: "\"\(field)\": unknown operator \"\(name)\"; expected one of " + operators.joined(separator: ", "))
                    }
                    return op
                }, expected: "one of " + operators.joined(separator: ", "))
            let operand: JSON
            if let given = reader.rawValue("value") {
                operand = given
            } else if op == .exists {
                operand = true
            } else {
                throw .missing(reader.path("value"), expected: "the value to compare with")
            }
            try checkOperand(operand, of: op, reader.path("value"))
            result = .comparison(keyPath: keyPath, op: op, value: Predicate.Operand(operand.packed()))
        }
        try reader.finish()
        return result
    }

    /// An operand of the kind its operator compares.
    private static func checkOperand(_ value: JSON, of op: Predicate.Operator, _ field: String) throws(FieldError) {
        let expected: String
        switch op {
        case .lt, .le, .gt, .ge:
            guard ![.integer, .real, .string].contains(value.kind) else { return }
            expected = "a number or a string (\"\(op.rawValue)\" orders numbers with numbers, strings with strings)"
        case .in:
            guard value.kind != .array else { return }
            expected = "an array of values (\"in\" matches a value equal to one of them)"
        case .prefix:
            guard value.kind != .string else { return }
            expected = "a string (\"prefix\" matches strings that start with it)"
        case .exists:
            guard value.kind != .boolean else { return }
            expected = "a boolean (\"exists\": true matches rows that have the key path)"
        case .eq, .ne, .contains:
            return
        }
        throw FieldError(
            field: field, expected: expected, got: JSON(value.kind.rawValue),
            message: "\"\(field)\" must be \(expected), got \(value.kindDescription)")
    }

    static let matchExpectation = "an object {query, keyPaths}"

    /// `{query, keyPaths: [KEYPATH, ...]}`, at least one key path.
    static func match(_ value: JSON, _ field: String) throws(FieldError) -> MatchQuery {
        var reader = try ObjectReader(value, field: field, expected: matchExpectation)
        let query = try reader.required(
            "query", { value, field throws(FieldError) in try Decode.string(value, field) }, expected: "a string")
        guard query.unicodeScalars.count <= maximumQueryLength else {
            throw FieldError(
                field: reader.path("query"), expected: "a string of at most \(maximumQueryLength) characters", got: JSON(query))
        }
        let keyPaths = try reader.required(
            "keyPaths",
            { value, field throws(FieldError) in
                let elements = try Decode.array(value, field, expected: "an array of key paths")
                guard !elements.isEmpty else {
                    throw FieldError(
                        field: field, expected: "at least one key path", got: value,
                        message: "\"\(field)\" must name at least one key path to match the query in")
                }
                var keyPaths: [JSONKeyPath] = []
                for (index, element) in elements.enumerated() { keyPaths.append(try Decode.keyPath(element, "\(field)[\(index)]")) }
                return keyPaths
            }, expected: "an array of key paths")
        try reader.finish()
        return MatchQuery(query: query, keyPaths: keyPaths)
    }

    /// A query is typed: past this, scoring every row would cost more than any list is worth.
    static let maximumQueryLength = 256
}

/// The collection fetcher's members of `createSource` (remote and paginated).
enum RemoteConfigurationDecoding {
    static func configuration(_ reader: inout ObjectReader) throws(FieldError) -> RemoteConfiguration {
        guard var remote = try reader.optionalObject("remoteConfiguration", expected: "an object {baseURL, headers?, timeoutSeconds?}")
        else {
            throw .missing("remoteConfiguration", expected: "an object {baseURL, headers?, timeoutSeconds?}")
        }
        let baseURL = try remote.required("baseURL", baseURLValue, expected: "an http or https URL string")
        let headers = try remote.optional("headers", Self.headers) ?? HeaderValues()
        let timeout = try remote.optionalNumber(
            "timeoutSeconds", in: 0...RemoteConfiguration.maximumTimeoutSeconds, excludingLowerBound: true)
        // TLS (issue 28): trust and client certificate files, checked here (TLSDecoding).
        let tls = try remote.optional("tls", TLSDecoding.files) ?? nil
        // Networks: compression and proxy.
        let compression = try remote.optionalBool("compression") ?? true
        var proxy = ProxySetting.environment
        if let value = remote.rawValue("proxy") { proxy = try Self.proxy(value, remote.path("proxy")) }
        try remote.finish()

        let apiPath = try reader.required(
            "apiPath", { value, field throws(FieldError) in try Decode.string(value, field) },
            expected: "a string: a path relative to baseURL, or a full URL")
        // Credentials belong in baseURL (sent as Basic to its origin only) or a header: in a
        // path they would be shown wherever the path is, and go wherever it leads.
        if URLResolution.hasUserInfo(apiPath) {
            throw FieldError(
                field: "apiPath", expected: "a path or URL without user:password@ (give credentials in baseURL or a header)",
                got: JSON(URLResolution.redacted(apiPath)),
                message:
                    "\"apiPath\" must not hold credentials (user:password@): give them in baseURL, where they are sent as Basic authorization to its origin only, or in a header"
            )
        }
        // A full URL in apiPath replaces the base's host and port: they are checked as the base's are.
        if let problem = URLResolution.authorityProblem(in: URLResolution.requestURL(baseURL: baseURL, apiPath: apiPath, query: [])) {
            throw FieldError(
                field: "apiPath", expected: "a path relative to baseURL, or a full URL with a host and a port in 1...65535",
                got: JSON(URLResolution.redacted(apiPath)),
                message: "\"apiPath\" must resolve against baseURL to a URL with a host and a port in 1...65535: \(problem)")
        }
        let query = try reader.optional("queryParameters", Self.queryParameters) ?? []
        let keyPath =
            try reader.optional("keyPath") { value, field throws(FieldError) in
                let text = try Decode.string(value, field)
                return text.isEmpty ? nil : JSONKeyPath(text)
            } ?? nil
        let mapping = try reader.optional("mapping") { value, field throws(FieldError) in try MappingDecoding.mapping(value, field) }
        let placeholders = try reader.optional("placeholderStorageOptions", Self.placeholderOptions) ?? .standard
        var maximumBodySize = RemoteConfiguration.defaultMaximumBodySize, maximumDepth = RemoteConfiguration.defaultMaximumDepth
        var maximumObjects = RemoteConfiguration.defaultMaximumObjectsPerPage
        if var limits = try reader.optionalObject("limits", expected: "an object {maxBodyBytes?, maxDepth?, maxObjectsPerPage?}") {
            maximumBodySize =
                try limits.optionalInteger("maxBodyBytes", in: 1...RemoteConfiguration.maximumBodySizeLimit) ?? maximumBodySize
            maximumDepth = try limits.optionalInteger("maxDepth", in: 1...RemoteConfiguration.maximumDepthLimit) ?? maximumDepth
            maximumObjects =
                try limits.optionalInteger("maxObjectsPerPage", in: 1...RemoteConfiguration.maximumObjectsPerPageLimit) ?? maximumObjects
            try limits.finish()
        }
        var configuration = RemoteConfiguration(
            baseURL: baseURL, headers: headers.literal, timeoutSeconds: timeout ?? RemoteConfiguration.defaultTimeoutSeconds,
            apiPath: apiPath, queryParameters: query, keyPath: keyPath, mapping: mapping,
            placeholders: placeholders, maximumBodySize: maximumBodySize, maximumDepth: maximumDepth)
        configuration.compression = compression
        configuration.proxy = proxy
        configuration.maximumObjectsPerPage = maximumObjects
        configuration.cache = try reader.optional("cache", cacheSettings) ?? CacheSettings()
        configuration.refreshIntervalSeconds = try reader.optional("refreshIntervalSeconds", refreshInterval) ?? nil
        configuration.tls = tls
        configuration.externalHeaders = headers.external
        try Self.checkCredentialRoute(configuration)
        return configuration
    }

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

    static let cacheExpectation = "an object {enabled, maxAgeSeconds?, maxPages?}"

    /// `cache: {enabled, maxAgeSeconds?, maxPages?}`.
    static func cacheSettings(_ value: JSON, _ field: String) throws(FieldError) -> CacheSettings {
        var reader = try ObjectReader(value, field: field, expected: cacheExpectation)
        let enabled = try reader.required("enabled", Decode.bool, expected: "a boolean")
        let maximumAge = try reader.optionalNumber("maxAgeSeconds", in: 0...CacheSettings.maximumAgeLimit)
        let maximumPages = try reader.optionalInteger("maxPages", in: 1...CacheSettings.maximumPagesLimit)
        try reader.finish()
        return CacheSettings(
            enabled: enabled, maximumAgeSeconds: maximumAge, maximumPages: maximumPages ?? CacheSettings.defaultMaximumPages)
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
    struct HeaderValues {
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

    /// The paginated members: `paginatorKeys?`, `requestKeys?`, `pageSize?`, `firstPage?`, `metadataKeyPath?`.
    static func paginator(_ reader: inout ObjectReader) throws(FieldError) -> PaginatorConfiguration {
        var keys = PaginatorConfiguration.Keys()
        if var given = try reader.optionalObject(
            "paginatorKeys", expected: "an object {pageSize?, currentPage?, numberOfPages?, numberOfTotalObjects?}")
        {
            keys.pageSize = try given.optionalString("pageSize", nonEmpty: true) ?? keys.pageSize
            keys.currentPage = try given.optionalString("currentPage", nonEmpty: true) ?? keys.currentPage
            keys.numberOfPages = try given.optionalString("numberOfPages", nonEmpty: true) ?? keys.numberOfPages
            keys.numberOfTotalObjects = try given.optionalString("numberOfTotalObjects", nonEmpty: true) ?? keys.numberOfTotalObjects
            try given.finish()
        }
        var pageQueryKey: String?, pageSizeQueryKey: String?
        if var given = try reader.optionalObject("requestKeys", expected: "an object {currentPage?, pageSize?}") {
            pageQueryKey = try given.optionalString("currentPage", nonEmpty: true)
            pageSizeQueryKey = try given.optionalString("pageSize", nonEmpty: true)
            try given.finish()
        }
        let pageSize = try reader.optionalInteger("pageSize", in: 1...PaginatorConfiguration.maximumPageSize)
        let firstPage = try reader.optionalInteger("firstPage", in: 0...PaginatorConfiguration.maximumFirstPage) ?? 1
        let metadataKeyPath =
            try reader.optional("metadataKeyPath") { value, field throws(FieldError) in
                let text = try Decode.string(value, field)
                return text.isEmpty ? nil : JSONKeyPath(text)
            } ?? nil
        var paginator = PaginatorConfiguration(
            keys: keys, pageQueryKey: pageQueryKey, pageSizeQueryKey: pageSizeQueryKey, pageSize: pageSize,
            firstPage: firstPage, metadataKeyPath: metadataKeyPath)
        paginator.prefetchDistance =
            try reader.optionalInteger("prefetchDistance", in: 0...PaginatorConfiguration.maximumPrefetchDistance) ?? 0
        if var pagination = try reader.optionalObject("pagination", expected: "an object {strategy, ...}") {
            try Self.pagination(&pagination, into: &paginator)
            // Unknown members first: a misspelt "cursorPath" is named as such.
            try pagination.finish()
            if case .cursor(_, nil, nil, _) = paginator.strategy {
                throw FieldError(
                    field: pagination.path("cursorPath"), expected: "one of cursorPath and cursorFromLastObject", got: "nothing",
                    message:
                        "a cursor strategy needs \"pagination.cursorPath\" (where the next cursor is) or \"pagination.cursorFromLastObject\" (the identity sent as the cursor)"
                )
            }
        }
        paginator.initialPosition = try initialPosition(&reader, paginator: paginator)
        if var window = try reader.optionalObject("window", expected: "an object {maxPages?, maxObjects?}") {
            let pages = try window.optionalInteger("maxPages", in: 1...PaginatorConfiguration.maximumPagesLimit)
            let objects = try window.optionalInteger("maxObjects", in: 1...PaginatorConfiguration.maximumWindowObjects)
            try window.finish()
            guard pages != nil || objects != nil else {
                throw FieldError(
                    field: reader.path("window"), expected: "an object with maxPages or maxObjects", got: [:],
                    message: "\"window\" must give maxPages or maxObjects (or be left out: every page loaded is held)")
            }
            paginator.window = PaginatorConfiguration.Window(maximumPages: pages, maximumObjects: objects)
        }
        if let mode = try reader.optionalString("placeholders", nonEmpty: true) {
            guard let known = PaginatorConfiguration.PlaceholderMode(rawValue: mode) else {
                throw FieldError(
                    field: reader.path("placeholders"), expected: "\"trailing\" or \"counted\"", got: JSON(mode),
                    message: "\"placeholders\" must be \"trailing\" (the default) or \"counted\", got \"\(mode.prefix(100))\"")
            }
            paginator.placeholderMode = known
        }
        paginator.jumpThreshold = try reader.optionalInteger("jumpThreshold", in: 1...PaginatorConfiguration.maximumJumpThreshold)
        return paginator
    }

    /// `initialPage` (page numbers, from `firstPage` on), `initialOffset` (offsets),
    /// `initialCursor` (cursors): where a run starts; at most one, of the source's strategy.
    private static func initialPosition(
        _ reader: inout ObjectReader, paginator: PaginatorConfiguration
    ) throws(FieldError) -> PaginatorConfiguration.InitialPosition? {
        let page = try reader.optionalInteger("initialPage", in: paginator.firstPage...PaginatorConfiguration.maximumFirstPage)
        let offset = try reader.optionalInteger("initialOffset", in: 0...PaginatorConfiguration.maximumInitialOffset)
        let cursor = try reader.optionalString("initialCursor", nonEmpty: true)
        let given: [(field: String, strategy: String, position: PaginatorConfiguration.InitialPosition)] =
            [
                page.map { ("initialPage", "pageNumber", .page($0)) }, offset.map { ("initialOffset", "offset", .offset($0)) },
                cursor.map { ("initialCursor", "cursor", .cursor($0)) },
            ].compactMap { $0 }
        guard let first = given.first else { return nil }
        let strategy = paginator.strategy.name
        guard first.strategy == strategy else {
            let own = given.first { $0.strategy == strategy }.map(\.field) ?? Self.initialMember(of: strategy)
            throw FieldError(
                field: reader.path(first.field), expected: "\(first.field) only with the \(first.strategy) strategy",
                got: reader.value(first.field) ?? .null,
                message:
                    "\"\(first.field)\" needs pagination.strategy \"\(first.strategy)\"; this source's strategy is \(strategy)\(own.map { ", which starts from \"\($0)\"" } ?? ", which cannot start in the middle")"
            )
        }
        if given.count > 1 {
            throw FieldError(
                field: reader.path(given[1].field), expected: "one of initialPage, initialOffset and initialCursor",
                got: reader.value(given[1].field) ?? .null,
                message: "\"\(given[1].field)\" and \"\(first.field)\" both say where a run starts; give one")
        }
        return first.position
    }

    private static func initialMember(of strategy: String) -> String? {
        switch strategy {
        case "pageNumber": "initialPage"
        case "offset": "initialOffset"
        case "cursor": "initialCursor"
        default: nil
        }
    }

    static let strategies = ["pageNumber", "offset", "cursor", "nextURL", "linkHeader"]

    /// `pagination`: the strategy and its keys, and the rules every strategy shares.
    private static func pagination(_ reader: inout ObjectReader, into paginator: inout PaginatorConfiguration) throws(FieldError) {
        let strategy =
            try reader.optional("strategy") { value, field throws(FieldError) in
                let name = try Decode.string(value, field)
                guard strategies.contains(name) else {
                    throw FieldError(field: field, expected: "one of \(strategies.joined(separator: ", "))", got: value)
                }
                return name
            } ?? "pageNumber"
        switch strategy {
        case "offset":
            paginator.strategy = .offset(
                offsetKey: try reader.optionalString("offsetKey", nonEmpty: true) ?? "offset",
                limitKey: try reader.optionalString("limitKey", nonEmpty: true) ?? "limit",
                nextOffsetPath: try reader.optionalKeyPath("nextOffsetPath"))
        case "cursor":
            let cursorKey = try reader.optionalString("cursorKey", nonEmpty: true) ?? "cursor"
            let cursorPath = try reader.optionalKeyPath("cursorPath")
            let fromLastObject = try reader.optionalKeyPath("cursorFromLastObject")
            if cursorPath != nil, fromLastObject != nil {
                throw FieldError(
                    field: reader.path("cursorFromLastObject"), expected: "only one of cursorPath and cursorFromLastObject",
                    got: JSON(fromLastObject?.description ?? ""))
            }
            paginator.strategy = .cursor(
                cursorKey: cursorKey, cursorPath: cursorPath, fromLastObject: fromLastObject,
                hasMorePath: try reader.optionalKeyPath("hasMorePath"))
            paginator.previousCursorPath = try reader.optionalKeyPath("prevCursorPath")
        case "nextURL":
            paginator.strategy = .nextURL(
                path: try reader.optionalKeyPath("nextURLPath") ?? JSONKeyPath("next"),
                hasMorePath: try reader.optionalKeyPath("hasMorePath"))
            paginator.previousURLPath = try reader.optionalKeyPath("previousURLPath")
        case "linkHeader":
            paginator.strategy = .linkHeader
        default:
            paginator.strategy = .pageNumber
        }
        paginator.totalPath = try reader.optionalKeyPath("totalPath")
        paginator.totalHeader = try reader.optionalString("totalHeader", nonEmpty: true)
        paginator.metadataHeader = try reader.optional("metadataHeader", headerName)
        paginator.maximumPages =
            try reader.optionalInteger("maxPages", in: 1...PaginatorConfiguration.maximumPagesLimit) ?? paginator.maximumPages
        paginator.stalledPagesLimit = try reader.optionalInteger("maxPagesWithoutNewObjects", in: 1...1000) ?? paginator.stalledPagesLimit
        paginator.endOnNotFound = try reader.optionalBool("endOnNotFound") ?? paginator.endOnNotFound
        paginator.allowCrossOrigin = try reader.optionalBool("allowCrossOrigin") ?? paginator.allowCrossOrigin
        paginator.duplicates =
            try reader.optional("duplicates") { value, field throws(FieldError) in
                let names = PaginatorConfiguration.DuplicatePolicy.allCases.map(\.rawValue)
                guard let policy = value.stringValue.flatMap(PaginatorConfiguration.DuplicatePolicy.init(rawValue:)) else {
                    throw FieldError(field: field, expected: "one of \(names.joined(separator: ", "))", got: value)
                }
                return policy
            } ?? paginator.duplicates
        if var retry = try reader.optionalObject("retryAfter", expected: "an object {maxRetries?, maxDelaySeconds?}") {
            paginator.retryAfterRetries = try retry.optionalInteger("maxRetries", in: 0...10) ?? paginator.retryAfterRetries
            paginator.retryAfterMaximumSeconds =
                try retry.optionalNumber("maxDelaySeconds", in: 0...3600) ?? paginator.retryAfterMaximumSeconds
            try retry.finish()
        }
    }
}

extension RemoteConfigurationDecoding {
    /// A header's name: an RFC 9110 token.
    static func headerName(_ value: JSON, _ field: String) throws(FieldError) -> String {
        let expected = "a header name (letters, digits and !#$%&'*+-.^_`|~)"
        let name = try Decode.string(value, field, nonEmpty: true)
        guard name.utf8.count <= 256,
            name.utf8.allSatisfy({ byte in
                (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || "!#$%&'*+-.^_`|~".utf8.contains(byte)
            })
        else { throw .invalid(field, expected: expected, got: value) }
        return name
    }
}

/// `mapping`: output field names to a key path string or `{keyPath?, type?, default?, mapping?, items?}`.
enum MappingDecoding {
    static func mapping(_ value: JSON, _ field: String) throws(FieldError) -> ObjectMapping {
        guard let members = value.objectMembers else {
            throw .mistyped(field, expected: "an object of output field names to field specifications", got: value)
        }
        var fields: [(name: String, spec: ObjectMapping.FieldSpec)] = []
        for (name, spec) in members {
            fields.append((name, try self.spec(spec, "\(field).\(name)")))
        }
        return ObjectMapping(fields: fields)
    }

    static let types = ObjectMapping.FieldType.allCases.map(\.rawValue)

    private static func spec(_ value: JSON, _ field: String) throws(FieldError) -> ObjectMapping.FieldSpec {
        if let keyPath = value.stringValue {
            return .field(keyPath: JSONKeyPath(keyPath), type: .any, defaultValue: nil, nested: nil, items: nil)
        }
        var reader = try ObjectReader(
            value, field: field, expected: "a key path string or an object {keyPath?, type?, default?, mapping?, items?}")
        let keyPath = try reader.optionalKeyPath("keyPath")
        var type =
            try reader.optional("type") { value, field throws(FieldError) in
                guard let name = value.stringValue else {
                    throw .mistyped(field, expected: "one of " + types.joined(separator: ", "), got: value)
                }
                guard let type = ObjectMapping.FieldType(rawValue: name) else {
                    throw .invalid(field, expected: "one of " + types.joined(separator: ", "), got: value)
                }
                return type
            } ?? .any
        // `default: null` is a default (null), unlike an absent default. Kept for the source's
        // life, so packed on its own, not as a part of the request's params.
        let defaultValue = reader.rawValue("default")?.packed()
        var nested: ObjectMapping?
        if let member = reader.value("mapping") {
            guard type == .object || type == .any else {
                throw FieldError(
                    field: reader.path("mapping"), expected: "no \"mapping\" unless type is \"object\"", got: JSON(type.rawValue))
            }
            nested = try mapping(member, reader.path("mapping"))
            type = .object
        }
        var items: ObjectMapping.FieldSpec?
        if let member = reader.value("items") {
            guard type == .array || type == .any else {
                throw FieldError(field: reader.path("items"), expected: "no \"items\" unless type is \"array\"", got: JSON(type.rawValue))
            }
            items = try spec(member, reader.path("items"))
            type = .array
        }
        try reader.finish()
        return .field(keyPath: keyPath, type: type, defaultValue: defaultValue, nested: nested, items: items)
    }
}

extension SourceSpec {
    /// Decodes `createSource` params as the daemon does (benchmarks and tests of the model
    /// use it to build sources from protocol JSON).
    package static func decoding(createSourceParams params: JSON) throws -> SourceSpec {
        do {
            var reader = try ObjectReader(params, field: "")
            let decoded = try CreateSourceParams(&reader)
            try reader.finish()
            return decoded.spec
        } catch {
            throw error.responseError
        }
    }
}
