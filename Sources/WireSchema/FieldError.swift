import JSONKit

/// A parameter refused, by the daemon's decoding (missing, of the wrong type, out of range,
/// unknown) or by the model (a `Refusal`, worded by `FieldError(_: Refusal)`). `field` names
/// the parameter at fault (`section`, `remoteConfiguration.baseURL`, `sources[2]`), `expected`
/// what would have been accepted and `got` what was sent; the daemon's wire layer turns it
/// into a `-32602` with `data: {field, expected, got}`.
package struct FieldError: Error, Sendable, CustomStringConvertible {
    package let field: String
    package let expected: String
    /// What was sent: a kind (`"string"`, `"nothing"`) or, when the kind was right but the
    /// value was not, the value itself (shortened when long).
    package let got: JSON
    /// For people: what is wrong, naming the field.
    package let message: String
    /// What else a client may want to know (the valid range's size, the existing sources,
    /// the closest known name...).
    package let context: [(String, JSON)]

    package init(field: String, expected: String, got: JSON, message: String? = nil, context: [(String, JSON)] = []) {
        self.field = field
        self.expected = expected
        self.got = FieldError.shortened(got)
        self.message = message ?? "\"\(field)\" must be \(expected), got \(FieldError.describe(self.got))"
        self.context = context
    }

    package var description: String { message }

    /// A member that is absent (or null where null is not allowed).
    package static func missing(_ field: String, expected: String) -> FieldError {
        FieldError(field: field, expected: expected, got: "nothing", message: "missing \"\(field)\": expected \(expected)")
    }

    /// A member of the wrong JSON kind.
    package static func mistyped(_ field: String, expected: String, got value: JSON) -> FieldError {
        FieldError(
            field: field, expected: expected, got: JSON(value.kind.rawValue),
            message: "\"\(field)\" must be \(expected), got \(value.kindDescription)")
    }

    /// A member of the right kind whose value is not accepted.
    package static func invalid(_ field: String, expected: String, got value: JSON) -> FieldError {
        FieldError(field: field, expected: expected, got: value)
    }

    /// Echoed values are bounded: a 10 MB name must not make a 20 MB error.
    package static let echoLimit = 200

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
