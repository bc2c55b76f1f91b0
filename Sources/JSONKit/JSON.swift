import CJansson

/// An immutable JSON value: a jansson tree, or a packed copy of one (see `packed()`).
///
/// `JSON` has value semantics: nothing mutates a value after it is built, and the
/// "editing" operations (`setting(_:to:)`, `removing(_:)`) return new values that share
/// unchanged subtrees. Both representations answer every operation alike; they differ in
/// cost only: a tree is what jansson parses and encodes, a packed value is a few times
/// smaller and is what sources keep.
package struct JSON: @unchecked Sendable {
    /// A `Reference` (a tree), a `PackedBuffer` (a packed value) or a `PackedSlice` (a value
    /// inside one). One pointer, so arrays of values stay small.
    ///
    /// `JSON` is unchecked `Sendable`, and why that is safe: none of the three is mutated
    /// once the value is built (a jansson tree is frozen once wrapped, and jansson's reference
    /// counts are atomic; a packed buffer is written before it is wrapped), so threads that
    /// share one only read it. The compiler cannot see that through a C `json_t` or a `ManagedBuffer`, so the
    /// three classes are not `Sendable` themselves: they cross threads only inside a `JSON`.
    let box: AnyObject

    init(_ reference: Reference) { box = reference }
    init(packed buffer: PackedBuffer) { box = buffer }

    enum Storage {
        case tree(UnsafeMutablePointer<json_t>)
        case packed(PackedReader, Int)

        /// jansson's type of the value here, whichever the representation.
        var rawType: json_type {
            switch self {
            case .tree(let pointer): return pointer.pointee.type
            case .packed(let reader, let offset): return json_type(rawValue: UInt32(reader.tag(at: offset)))
            }
        }
    }

    /// How to read the value. A packed reader's pointer is valid while `self` lives: use it
    /// only inside a function that holds `self`.
    @inline(__always) var storage: Storage {
        // The box's exact class, compared by identity: all three are final, and this is
        // far cheaper than a dynamic cast on every access.
        let type = ObjectIdentifier(Swift.type(of: box))
        if type == ObjectIdentifier(Reference.self) { return .tree(unsafeDowncast(box, to: Reference.self).pointer) }
        if type == ObjectIdentifier(PackedBuffer.self) {
            return .packed(PackedReader(base: unsafeDowncast(box, to: PackedBuffer.self).base), 0)
        }
        let slice = unsafeDowncast(box, to: PackedSlice.self)
        return .packed(PackedReader(base: slice.buffer.base), slice.offset)
    }

    /// The packed buffer holding this value, and where in it; nil for a tree.
    var packedLocation: (buffer: PackedBuffer, offset: Int)? {
        let type = ObjectIdentifier(Swift.type(of: box))
        if type == ObjectIdentifier(PackedBuffer.self) { return (unsafeDowncast(box, to: PackedBuffer.self), 0) }
        if type == ObjectIdentifier(PackedSlice.self) {
            let slice = unsafeDowncast(box, to: PackedSlice.self)
            return (slice.buffer, slice.offset)
        }
        return nil
    }

    /// The value at `offset` of the same packed buffer as `self`.
    func packedChild(at offset: Int) -> JSON {
        JSON(box: PackedSlice(buffer: packedLocation!.buffer, offset: offset))
    }

    init(box: AnyObject) { self.box = box }

    /// Calls `body` with a jansson tree of this value: its own, or for a packed value a
    /// temporary one built from it (released after `body`; jansson takes its own count of
    /// whatever it keeps).
    func withTree<R>(_ body: (UnsafeMutablePointer<json_t>) throws -> R) rethrows -> R {
        switch storage {
        case .tree(let pointer):
            return try withExtendedLifetime(self) { try body(pointer) }
        case .packed(let reader, let offset):
            let tree = withExtendedLifetime(self) { newReference(reader.tree(at: offset)) }
            return try withExtendedLifetime(tree) { try body(tree.pointer) }
        }
    }

    /// A compact copy of this value in a buffer of its own, for keeping: a tree is packed, a
    /// value inside a larger packed one (a member of a packed request's params) is copied out
    /// of it, so that keeping it does not keep the rest; a packed value of its own is itself.
    /// Reading it is as cheap as reading a tree; encoding it builds a tree first.
    package func packed() -> JSON { cursor.packed() }

    /// Whether this value is packed (for tests and measurements).
    package var isPacked: Bool { packedLocation != nil }

    package enum Kind: String, Sendable {
        case object, array, string, integer, real, boolean, null

        init(_ type: json_type) {
            switch type {
            case JSON_OBJECT: self = .object
            case JSON_ARRAY: self = .array
            case JSON_STRING: self = .string
            case JSON_INTEGER: self = .integer
            case JSON_REAL: self = .real
            case JSON_TRUE, JSON_FALSE: self = .boolean
            default: self = .null
            }
        }

        /// For error messages: "an object", "a string", ...
        var description: String {
            switch self {
            case .object: return "an object"
            case .array: return "an array"
            case .string: return "a string"
            case .integer: return "an integer"
            case .real: return "a number"
            case .boolean: return "a boolean"
            case .null: return "null"
            }
        }
    }

    package var kind: Kind { Kind(rawType) }

    /// A short description of the kind for error messages: "an object", "a string", ...
    package var kindDescription: String { kind.description }

    /// jansson's type of the value, whichever the representation.
    var rawType: json_type { withExtendedLifetime(self) { storage.rawType } }

    package var isNull: Bool { rawType == JSON_NULL }
    package var isObject: Bool { rawType == JSON_OBJECT }
    package var isArray: Bool { rawType == JSON_ARRAY }
    package var isNumber: Bool { kind == .integer || kind == .real }

    // MARK: Scalars

    package var stringValue: String? {
        switch storage {
        case .tree(let pointer):
            guard let chars = json_string_value(pointer) else { return nil }
            let length = json_string_length(pointer)
            return chars.withMemoryRebound(to: UInt8.self, capacity: length) {
                String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
            }
        case .packed(let reader, let offset):
            return withExtendedLifetime(self) {
                reader.tag(at: offset) == PackedTag.string ? String(decoding: reader.string(at: offset), as: UTF8.self) : nil
            }
        }
    }

    /// The value of an integer; nil for any other kind, reals included.
    package var integerValue: Int? {
        switch storage {
        case .tree(let pointer):
            guard pointer.pointee.type == JSON_INTEGER else { return nil }
            return Int(json_integer_value(pointer))
        case .packed(let reader, let offset):
            return withExtendedLifetime(self) { reader.tag(at: offset) == PackedTag.integer ? Int(reader.integer(at: offset)) : nil }
        }
    }

    /// The value of an integer or real.
    package var doubleValue: Double? {
        switch storage {
        case .tree(let pointer):
            switch pointer.pointee.type {
            case JSON_INTEGER: return Double(json_integer_value(pointer))
            case JSON_REAL: return json_real_value(pointer)
            default: return nil
            }
        case .packed(let reader, let offset):
            return withExtendedLifetime(self) {
                switch reader.tag(at: offset) {
                case PackedTag.integer: return Double(reader.integer(at: offset))
                case PackedTag.real: return reader.real(at: offset)
                default: return nil
                }
            }
        }
    }

    package var boolValue: Bool? {
        switch rawType {
        case JSON_TRUE: return true
        case JSON_FALSE: return false
        default: return nil
        }
    }

    // MARK: Containers

    /// Members of an object or elements of an array; 0 for scalars.
    package var count: Int {
        switch storage {
        case .tree(let pointer):
            switch pointer.pointee.type {
            case JSON_OBJECT: return json_object_size(pointer)
            case JSON_ARRAY: return json_array_size(pointer)
            default: return 0
            }
        case .packed(let reader, let offset):
            return withExtendedLifetime(self) {
                switch reader.tag(at: offset) {
                case PackedTag.object, PackedTag.array: return reader.container(at: offset).count
                default: return 0
                }
            }
        }
    }

    package subscript(key: String) -> JSON? {
        switch storage {
        case .tree(let pointer):
            guard pointer.pointee.type == JSON_OBJECT else { return nil }
            return withCChars(key) { chars, count in
                json_object_getn(pointer, chars, count).map { JSON(Reference(borrowed: $0)) }
            }
        case .packed(let reader, let offset):
            return withExtendedLifetime(self) {
                guard reader.tag(at: offset) == PackedTag.object else { return nil }
                return withCChars(key) { chars, count in
                    chars.withMemoryRebound(to: UInt8.self, capacity: count) {
                        reader.member(of: offset, key: UnsafeBufferPointer(start: $0, count: count))
                    }
                }.map { packedChild(at: $0) }
            }
        }
    }

    /// Whether an object has a member `name`, read in place (no value made of it).
    package func hasMember(_ name: MemberName) -> Bool {
        withExtendedLifetime(self) { storage.member(name) != nil }
    }

    package subscript(index: Int) -> JSON? {
        switch storage {
        case .tree(let pointer):
            guard pointer.pointee.type == JSON_ARRAY, index >= 0, index < json_array_size(pointer) else { return nil }
            return json_array_get(pointer, index).map { JSON(Reference(borrowed: $0)) }
        case .packed(let reader, let offset):
            return withExtendedLifetime(self) {
                guard reader.tag(at: offset) == PackedTag.array else { return nil }
                return reader.element(of: offset, index: index).map { packedChild(at: $0) }
            }
        }
    }

    /// The elements of an array; nil for any other kind.
    package var arrayValue: [JSON]? {
        switch storage {
        case .tree(let pointer):
            guard pointer.pointee.type == JSON_ARRAY else { return nil }
            let size = json_array_size(pointer)
            var elements: [JSON] = []
            elements.reserveCapacity(size)
            for index in 0..<size {
                elements.append(JSON(Reference(borrowed: json_array_get(pointer, index)!)))
            }
            return elements
        case .packed(let reader, let offset):
            return withExtendedLifetime(self) {
                guard reader.tag(at: offset) == PackedTag.array else { return nil }
                let (count, first, _) = reader.container(at: offset)
                var elements: [JSON] = []
                elements.reserveCapacity(count)
                var cursor = first
                for _ in 0..<count {
                    elements.append(packedChild(at: cursor))
                    cursor = reader.end(of: cursor)
                }
                return elements
            }
        }
    }

    /// The members of an object in document order; nil for any other kind.
    package var objectMembers: [(key: String, value: JSON)]? {
        switch storage {
        case .tree(let pointer):
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
        case .packed(let reader, let offset):
            return withExtendedLifetime(self) {
                guard reader.tag(at: offset) == PackedTag.object else { return nil }
                var members: [(key: String, value: JSON)] = []
                members.reserveCapacity(reader.container(at: offset).count)
                reader.forEachMember(of: offset) { key, value in
                    members.append((String(decoding: key, as: UTF8.self), packedChild(at: value)))
                    return true
                }
                return members
            }
        }
    }

    package var objectKeys: [String] { objectMembers?.map(\.key) ?? [] }
}
