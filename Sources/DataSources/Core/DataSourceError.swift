import JSONKit

/// A request the model refuses: an unknown source, an index path out of range, a name
/// already taken. `field` names the parameter at fault, `expected` what would have been
/// accepted and `got` what was sent; the daemon's wire layer turns it into a `-32602`.
public struct DataSourceError: Error, Sendable, CustomStringConvertible {
    public let field: String
    public let expected: String
    public let got: JSON
    /// For people: what is wrong, naming the field.
    public let message: String
    /// What else a client may want to know (the valid range's size, the existing sources...).
    public let context: [(String, JSON)]

    public init(field: String, expected: String, got: JSON, message: String, context: [(String, JSON)] = []) {
        self.field = field
        self.expected = expected
        self.got = got
        self.message = message
        self.context = context
    }

    public var description: String { message }

    /// An integer outside the range that exists: "\"index\" 9 is out of range: 0...3".
    static func outOfRange(_ field: String, _ value: Int, valid: String, context: [(String, JSON)] = []) -> DataSourceError {
        DataSourceError(field: field, expected: "an integer in \(valid)", got: JSON(value),
                        message: "\"\(field)\" \(value) is out of range: \(valid)", context: context)
    }
}
