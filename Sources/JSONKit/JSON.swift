import CJansson

/// An immutable JSON value backed by a jansson tree.
///
/// `JSON` has value semantics: nothing mutates a tree after it is built, and the
/// "editing" operations (`setting(_:to:)`, `appending(_:)`) return new values that share
/// unchanged subtrees.
public struct JSON: Sendable {
    let reference: Reference

    init(_ reference: Reference) { self.reference = reference }

    var pointer: UnsafeMutablePointer<json_t> { reference.pointer }

    public enum Kind: String, Sendable {
        case object, array, string, integer, real, boolean, null
    }

    public var kind: Kind {
        switch pointer.pointee.type {
        case JSON_OBJECT: return .object
        case JSON_ARRAY: return .array
        case JSON_STRING: return .string
        case JSON_INTEGER: return .integer
        case JSON_REAL: return .real
        case JSON_TRUE, JSON_FALSE: return .boolean
        default: return .null
        }
    }

    /// A short description of the kind for error messages: "an object", "a string", ...
    public var kindDescription: String {
        switch kind {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .integer: return "an integer"
        case .real: return "a number"
        case .boolean: return "a boolean"
        case .null: return "null"
        }
    }

    public var isNull: Bool { pointer.pointee.type == JSON_NULL }
    public var isObject: Bool { pointer.pointee.type == JSON_OBJECT }
    public var isArray: Bool { pointer.pointee.type == JSON_ARRAY }
    public var isNumber: Bool { kind == .integer || kind == .real }

    // MARK: Scalars

    public var stringValue: String? {
        guard let chars = json_string_value(pointer) else { return nil }
        let length = json_string_length(pointer)
        return chars.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    /// The value of an integer; nil for any other kind, reals included.
    public var integerValue: Int? {
        guard pointer.pointee.type == JSON_INTEGER else { return nil }
        return Int(json_integer_value(pointer))
    }

    /// The value of an integer or real.
    public var doubleValue: Double? {
        switch pointer.pointee.type {
        case JSON_INTEGER: return Double(json_integer_value(pointer))
        case JSON_REAL: return json_real_value(pointer)
        default: return nil
        }
    }

    public var boolValue: Bool? {
        switch pointer.pointee.type {
        case JSON_TRUE: return true
        case JSON_FALSE: return false
        default: return nil
        }
    }

    // MARK: Containers

    /// Members of an object or elements of an array; 0 for scalars.
    public var count: Int {
        switch pointer.pointee.type {
        case JSON_OBJECT: return json_object_size(pointer)
        case JSON_ARRAY: return json_array_size(pointer)
        default: return 0
        }
    }

    public subscript(key: String) -> JSON? {
        guard pointer.pointee.type == JSON_OBJECT else { return nil }
        return withCChars(key) { chars, count in
            json_object_getn(pointer, chars, count).map { JSON(Reference(borrowed: $0)) }
        }
    }

    public subscript(index: Int) -> JSON? {
        guard pointer.pointee.type == JSON_ARRAY, index >= 0, index < json_array_size(pointer) else { return nil }
        return json_array_get(pointer, index).map { JSON(Reference(borrowed: $0)) }
    }

    /// The elements of an array; nil for any other kind.
    public var arrayValue: [JSON]? {
        guard pointer.pointee.type == JSON_ARRAY else { return nil }
        let size = json_array_size(pointer)
        var elements: [JSON] = []
        elements.reserveCapacity(size)
        for index in 0..<size {
            elements.append(JSON(Reference(borrowed: json_array_get(pointer, index)!)))
        }
        return elements
    }

    /// The members of an object in document order; nil for any other kind.
    public var objectMembers: [(key: String, value: JSON)]? {
        guard pointer.pointee.type == JSON_OBJECT else { return nil }
        var members: [(key: String, value: JSON)] = []
        members.reserveCapacity(json_object_size(pointer))
        var iterator = json_object_iter(pointer)
        while let current = iterator {
            let keyPointer = json_object_iter_key(current)!
            let keyLength = json_object_iter_key_len(current)
            let key = keyPointer.withMemoryRebound(to: UInt8.self, capacity: keyLength) {
                String(decoding: UnsafeBufferPointer(start: $0, count: keyLength), as: UTF8.self)
            }
            members.append((key, JSON(Reference(borrowed: json_object_iter_value(current)!))))
            iterator = json_object_iter_next(pointer, current)
        }
        return members
    }

    public var objectKeys: [String] { objectMembers?.map(\.key) ?? [] }
}
