import JSONKit

/// Why a remote fetch failed: what `dataSource/failedWithError` carries.
public struct FetchError: Error, Sendable, Equatable {
    public enum Kind: String, Sendable {
        case http, timeout, transport, decode, keyPath, mapping, cancelled, tooLarge
    }

    public let kind: Kind
    public let message: String
    /// The request's URL without credentials, when there was one.
    public let url: String?
    /// The HTTP status, when a response arrived.
    public let status: Int?
    /// Kind-specific detail: the key path, the mapping issue, the limit...
    public let detail: [(String, JSON)]

    public init(kind: Kind, message: String, url: String? = nil, status: Int? = nil, detail: [(String, JSON)] = []) {
        self.kind = kind
        self.message = message
        self.url = url
        self.status = status
        self.detail = detail
    }

    public var json: JSON {
        var members: [(String, JSON)] = [("kind", JSON(kind.rawValue)), ("message", JSON(message))]
        if let status { members.append(("status", JSON(status))) }
        if let url { members.append(("url", JSON(url))) }
        members.append(contentsOf: detail)
        return .object(members)
    }

    public static func == (lhs: FetchError, rhs: FetchError) -> Bool { lhs.json == rhs.json }
}
