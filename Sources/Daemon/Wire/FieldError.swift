import DataSources
import JSONKit
import JSONRPC

/// A parameter the daemon refuses: missing, of the wrong type, out of range, unknown, or
/// refused by the model (no such source, a name taken). Every `-32602` the daemon sends
/// is made here, always with `data: {field, expected, got}`.
package struct FieldError: Error {
    /// Where the member is in `params`: `section`, `remoteConfiguration.baseURL`, `sources[2]`.
    package let field: String
    package let expected: String
    /// What was sent: a kind (`"string"`, `"nothing"`) or, when the kind was right but the
    /// value was not, the value itself (shortened when long).
    package let got: JSON
    package let message: String
    /// Further members of `data` (the valid range's size, the closest known name...).
    let context: [(String, JSON)]

    package init(field: String, expected: String, got: JSON, message: String? = nil, context: [(String, JSON)] = []) {
        self.field = field
        self.expected = expected
        self.got = FieldError.shortened(got)
        self.message = message ?? "\"\(field)\" must be \(expected), got \(FieldError.describe(self.got))"
        self.context = context
    }

    /// A member that is absent (or null where null is not allowed).
    package static func missing(_ field: String, expected: String) -> FieldError {
        FieldError(field: field, expected: expected, got: "nothing", message: "missing \"\(field)\": expected \(expected)")
    }

    /// A member of the wrong JSON kind.
    package static func mistyped(_ field: String, expected: String, got value: JSON) -> FieldError {
        FieldError(field: field, expected: expected, got: JSON(value.kind.rawValue),
                   message: "\"\(field)\" must be \(expected), got \(value.kindDescription)")
    }

    /// A member of the right kind whose value is not accepted.
    package static func invalid(_ field: String, expected: String, got value: JSON) -> FieldError {
        FieldError(field: field, expected: expected, got: value)
    }

    init(_ refusal: DataSourceError) {
        self.init(field: refusal.field, expected: refusal.expected, got: refusal.got, message: refusal.message, context: refusal.context)
    }

    var responseError: ResponseError {
        .invalidParams(message, data: .object([("field", JSON(field)), ("expected", JSON(expected)), ("got", got)] + context))
    }

    /// Echoed values are bounded: a 10 MB name must not make a 20 MB error.
    static let echoLimit = 200

    static func shortened(_ value: JSON) -> JSON {
        if let text = value.stringValue, text.utf8.count > echoLimit {
            return JSON(String(decoding: text.utf8.prefix(echoLimit), as: UTF8.self) + "…")
        }
        if value.isObject || value.isArray {
            let text = value.text()
            if text.utf8.count > echoLimit { return JSON(String(decoding: text.utf8.prefix(echoLimit), as: UTF8.self) + "…") }
        }
        return value
    }

    private static func describe(_ value: JSON) -> String {
        value.stringValue.map { "\"\($0)\"" } ?? value.text()
    }
}

extension ResponseError {
    init(_ error: FieldError) { self = error.responseError }
}

/// Runs a model call, turning its refusals into field errors.
func refusalsAsFieldErrors<T>(_ body: () throws(DataSourceError) -> T) throws(FieldError) -> T {
    do {
        return try body()
    } catch {
        throw FieldError(error)
    }
}
