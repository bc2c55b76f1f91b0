import JSONKit
import JSONRPC

/// A request's `params`, read by name. Every accessor names the field and what was
/// expected when it throws, so a client learns exactly what to fix.
public struct Params {
    public let object: JSON

    /// Absent params read as an empty object; positional (array) params are refused,
    /// since every method here takes named parameters.
    public init(_ params: JSON?) throws(ResponseError) {
        guard let params else {
            object = [:]
            return
        }
        guard params.isObject else {
            throw .invalidParams("params must be an object with named members, got \(params.kindDescription)",
                                 data: ["field": "params", "expected": "an object"])
        }
        object = params
    }

    public subscript(key: String) -> JSON? {
        guard let value = object[key], !value.isNull else { return nil }
        return value
    }

    public static func mistyped(_ field: String, expected: String, got value: JSON) -> ResponseError {
        .invalidParams("\"\(field)\" must be \(expected), got \(value.kindDescription)",
                       data: ["field": JSON(field), "expected": JSON(expected), "got": JSON(value.kind.rawValue)])
    }

    public static func missing(_ field: String, expected: String) -> ResponseError {
        .invalidParams("missing \"\(field)\": expected \(expected)",
                       data: ["field": JSON(field), "expected": JSON(expected)])
    }

    public func required(_ key: String, expected: String) throws(ResponseError) -> JSON {
        guard let value = self[key] else { throw Params.missing(key, expected: expected) }
        return value
    }

    public func string(_ key: String) throws(ResponseError) -> String {
        let value = try required(key, expected: "a string")
        guard let string = value.stringValue else { throw Params.mistyped(key, expected: "a string", got: value) }
        return string
    }

    public func optionalString(_ key: String) throws(ResponseError) -> String? {
        guard let value = self[key] else { return nil }
        guard let string = value.stringValue else { throw Params.mistyped(key, expected: "a string", got: value) }
        return string
    }

    public func integer(_ key: String, in range: ClosedRange<Int>? = nil) throws(ResponseError) -> Int {
        let expected = range.map { "an integer in \($0.lowerBound)...\($0.upperBound)" } ?? "an integer"
        return try checkedInteger(key, try required(key, expected: expected), range: range, expected: expected)
    }

    public func optionalInteger(_ key: String, in range: ClosedRange<Int>? = nil) throws(ResponseError) -> Int? {
        guard let value = self[key] else { return nil }
        let expected = range.map { "an integer in \($0.lowerBound)...\($0.upperBound)" } ?? "an integer"
        return try checkedInteger(key, value, range: range, expected: expected)
    }

    private func checkedInteger(_ key: String, _ value: JSON, range: ClosedRange<Int>?, expected: String) throws(ResponseError) -> Int {
        guard let integer = value.integerValue else { throw Params.mistyped(key, expected: expected, got: value) }
        if let range, !range.contains(integer) {
            throw .invalidParams("\"\(key)\" must be \(expected), got \(integer)",
                                 data: ["field": JSON(key), "expected": JSON(expected), "got": JSON(integer)])
        }
        return integer
    }

    public func optionalBool(_ key: String) throws(ResponseError) -> Bool? {
        guard let value = self[key] else { return nil }
        guard let bool = value.boolValue else { throw Params.mistyped(key, expected: "a boolean", got: value) }
        return bool
    }
}
