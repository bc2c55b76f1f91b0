import JSONKit

/// A request the model refuses: an unknown source, an index path out of range, a
/// malformed configuration. `field` names the parameter at fault; the daemon turns this
/// into a JSON-RPC `-32602` whose `data` is `detail`.
public struct DataSourceError: Error, Sendable, CustomStringConvertible {
    public let field: String
    public let message: String
    public let detail: JSON

    public init(field: String, message: String, detail: [(String, JSON)] = []) {
        self.field = field
        self.message = message
        self.detail = .object([("field", JSON(field))] + detail)
    }

    public var description: String { message }

    static func expected(_ field: String, _ expected: String, got: JSON?) -> DataSourceError {
        DataSourceError(field: field, message: "\"\(field)\" must be \(expected), got \(got?.kindDescription ?? "nothing")",
                        detail: [("expected", JSON(expected)), ("got", JSON(got?.kind.rawValue ?? "nothing"))])
    }

    init(_ error: ConfigurationError) {
        self.init(field: error.field, message: "\"\(error.field)\" must be \(error.expected)\(error.got.map { ", got \($0)" } ?? "")",
                  detail: [("expected", JSON(error.expected))] + (error.got.map { [("got", JSON($0))] } ?? []))
    }
}
