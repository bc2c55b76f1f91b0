import JSONKit

/// A configuration member that is missing or malformed, named by its path in the
/// `createSource` params (`remoteConfiguration.baseURL`, `paginatorKeys.pageSize`).
public struct ConfigurationError: Error, Sendable {
    public let field: String
    public let expected: String
    /// What was found instead (a kind such as "a string", or the offending value).
    public let got: String?

    public init(field: String, expected: String, got: String? = nil) {
        self.field = field
        self.expected = expected
        self.got = got
    }
}

/// The collection fetcher's settings, shared by remote and paginated sources.
public struct RemoteConfiguration: Sendable {
    public var baseURL: String
    /// Sent with every request; `Accept: application/json` unless overridden here.
    public var headers: [(name: String, value: String)]
    public var timeoutSeconds: Double
    public var apiPath: String
    /// Stringified: numbers as JSON writes them, booleans as `true`/`false`.
    public var queryParameters: [(name: String, value: String)]
    /// Dot path to the array in the response; nil for the response itself.
    public var keyPath: KeyPath?
    public var mapping: ObjectMapping?
    public var placeholders: PlaceholderStorageOptions
    public var maximumBodySize: Int
    /// Deepest nesting of arrays and objects accepted in a response.
    public var maximumDepth: Int

    public static let defaultTimeoutSeconds = 120.0
    public static let defaultMaximumBodySize = 32 << 20
    public static let defaultMaximumDepth = 64

    /// Reads the members of `createSource` params that configure fetching.
    public init(params: JSON) throws(ConfigurationError) {
        guard let remote = params["remoteConfiguration"], remote.isObject else {
            throw ConfigurationError(field: "remoteConfiguration", expected: "an object {baseURL, headers?, timeoutSeconds?}",
                                     got: params["remoteConfiguration"]?.kindDescription ?? "nothing")
        }
        guard let base = remote["baseURL"]?.stringValue else {
            throw ConfigurationError(field: "remoteConfiguration.baseURL", expected: "an http or https URL string",
                                     got: remote["baseURL"]?.kindDescription ?? "nothing")
        }
        let scheme = base.split(separator: ":", maxSplits: 1).first.map { $0.lowercased() } ?? ""
        guard base.contains("://"), scheme == "http" || scheme == "https" else {
            throw ConfigurationError(field: "remoteConfiguration.baseURL", expected: "an http or https URL", got: "\"\(base)\"")
        }
        baseURL = base
        headers = []
        if let given = remote["headers"] {
            guard let members = given.objectMembers else {
                throw ConfigurationError(field: "remoteConfiguration.headers", expected: "an object of header names to strings", got: given.kindDescription)
            }
            for (name, value) in members {
                guard let text = value.stringValue else {
                    throw ConfigurationError(field: "remoteConfiguration.headers.\(name)", expected: "a string", got: value.kindDescription)
                }
                headers.append((name, text))
            }
        }
        if !headers.contains(where: { $0.name.lowercased() == "accept" }) {
            headers.insert(("Accept", "application/json"), at: 0)
        }
        timeoutSeconds = try Self.positiveNumber(remote["timeoutSeconds"], field: "remoteConfiguration.timeoutSeconds") ?? Self.defaultTimeoutSeconds

        guard let path = params["apiPath"]?.stringValue else {
            throw ConfigurationError(field: "apiPath", expected: "a string: a path relative to baseURL, or a full URL",
                                     got: params["apiPath"]?.kindDescription ?? "nothing")
        }
        apiPath = path
        queryParameters = []
        if let given = params["queryParameters"] {
            guard let members = given.objectMembers else {
                throw ConfigurationError(field: "queryParameters", expected: "an object of names to strings, numbers or booleans", got: given.kindDescription)
            }
            for (name, value) in members {
                guard let text = Self.queryValue(value) else {
                    throw ConfigurationError(field: "queryParameters.\(name)", expected: "a string, a number or a boolean", got: value.kindDescription)
                }
                queryParameters.append((name, text))
            }
        }
        if let given = params["keyPath"] {
            guard let text = given.stringValue else { throw ConfigurationError(field: "keyPath", expected: "a dot-separated key path string", got: given.kindDescription) }
            keyPath = text.isEmpty ? nil : KeyPath(text)
        }
        if let given = params["mapping"] {
            do {
                mapping = try ObjectMapping(given)
            } catch {
                throw ConfigurationError(field: error.field, expected: error.expected)
            }
        }
        placeholders = .standard
        if let given = params["placeholderStorageOptions"] {
            guard let options = PlaceholderStorageOptions(json: given) else {
                throw ConfigurationError(field: "placeholderStorageOptions", expected: PlaceholderStorageOptions.expected, got: given.description)
            }
            placeholders = options
        }
        let limits = params["limits"]
        maximumBodySize = try Self.positiveInteger(limits?["maxBodyBytes"], field: "limits.maxBodyBytes") ?? Self.defaultMaximumBodySize
        maximumDepth = try Self.positiveInteger(limits?["maxDepth"], field: "limits.maxDepth") ?? Self.defaultMaximumDepth
    }

    static func queryValue(_ value: JSON) -> String? {
        switch value.kind {
        case .string: return value.stringValue
        case .integer, .real: return value.description
        case .boolean: return value.boolValue! ? "true" : "false"
        default: return nil
        }
    }

    private static func positiveNumber(_ value: JSON?, field: String) throws(ConfigurationError) -> Double? {
        guard let value, !value.isNull else { return nil }
        guard let number = value.doubleValue, number > 0 else {
            throw ConfigurationError(field: field, expected: "a positive number", got: value.description)
        }
        return number
    }

    static func positiveInteger(_ value: JSON?, field: String) throws(ConfigurationError) -> Int? {
        guard let value, !value.isNull else { return nil }
        guard let number = value.integerValue, number > 0 else {
            throw ConfigurationError(field: field, expected: "a positive integer", got: value.description)
        }
        return number
    }

    /// The configuration as `describeSource` shows it, with secret header values redacted.
    public var json: JSON {
        var members: [(String, JSON)] = [
            ("remoteConfiguration", .object([
                ("baseURL", JSON(baseURL)),
                ("headers", .object(headers.map { ($0.name, JSON(Self.isSecretHeader($0.name) ? "<redacted>" : $0.value)) })),
                ("timeoutSeconds", JSON(timeoutSeconds)),
            ])),
            ("apiPath", JSON(apiPath)),
            ("queryParameters", .object(queryParameters.map { ($0.name, JSON($0.value)) })),
            ("placeholderStorageOptions", placeholders.json),
            ("limits", ["maxBodyBytes": JSON(maximumBodySize), "maxDepth": JSON(maximumDepth)]),
        ]
        if let keyPath { members.append(("keyPath", JSON(keyPath.description))) }
        return .object(members)
    }

    /// Header values that must never reach logs, errors or `describeSource`.
    public static func isSecretHeader(_ name: String) -> Bool {
        let lower = name.lowercased()
        return ["authorization", "proxy-authorization", "cookie", "set-cookie"].contains(lower)
            || ["token", "secret", "api-key", "apikey", "password", "session"].contains { lower.contains($0) }
    }
}
