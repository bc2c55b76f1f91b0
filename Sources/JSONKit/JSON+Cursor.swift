import CJansson

extension JSON {
    /// A place inside a value, read where it lies: stepping into members and elements makes
    /// no value per step (a `JSON` of a member is an allocation, and for a tree a reference
    /// count). What a mapping reads a thousand objects a page through.
    ///
    /// A cursor holds the value it was made from, so what it points into lives as long as
    /// the cursor does: it cannot dangle.
    public struct Cursor {
        /// Keeps `storage`'s tree or buffer alive.
        let root: JSON
        let storage: Storage

        public var kind: Kind { withExtendedLifetime(root) { Kind(storage.rawType) } }
        public var isNull: Bool { kind == .null }
        public var isObject: Bool { kind == .object }

        /// "an object", "a string", ... for error messages.
        public var kindDescription: String { kind.description }

        /// The value at `path` from here, or nil when a step is missing.
        public func at(_ path: JSONKeyPath) -> Cursor? {
            withExtendedLifetime(root) { storage.at(path).map { Cursor(root: root, storage: $0) } }
        }

        /// The member named `name` of an object; nil when missing or not an object.
        public func member(_ name: String) -> Cursor? {
            withExtendedLifetime(root) {
                switch storage {
                case .tree(let pointer):
                    guard pointer.pointee.type == JSON_OBJECT else { return nil }
                    return withCChars(name) { chars, count in
                        json_object_getn(pointer, chars, count).map { Cursor(root: root, storage: .tree($0)) }
                    }
                case .packed(let reader, let offset):
                    guard reader.tag(at: offset) == PackedTag.object else { return nil }
                    var name = name
                    return name.withUTF8 { reader.member(of: offset, key: $0) }.map { Cursor(root: root, storage: .packed(reader, $0)) }
                }
            }
        }

        /// Calls `body` with the scalar here (`.container` for an object or an array).
        public func withScalar(_ body: (Scalar) -> Void) {
            withExtendedLifetime(root) { storage.withScalar(body) }
        }

        /// The string here, as a `String`; nil for any other kind.
        public var stringValue: String? {
            var text: String?
            withScalar { if case .string(let bytes) = $0 { text = String(decoding: bytes, as: UTF8.self) } }
            return text
        }

        /// Calls `body` with each element of an array, in order, and its index; nothing for
        /// any other kind.
        public func forEachElement<E: Error>(_ body: (Int, Cursor) throws(E) -> Void) throws(E) {
            switch storage {
            case .tree(let pointer):
                guard pointer.pointee.type == JSON_ARRAY else { return }
                for index in 0..<json_array_size(pointer) {
                    try body(index, Cursor(root: root, storage: .tree(json_array_get(pointer, index)!)))
                }
            case .packed(let reader, let offset):
                guard reader.tag(at: offset) == PackedTag.array else { return }
                let (count, first, _) = reader.container(at: offset)
                var cursor = first
                for index in 0..<count {
                    try body(index, Cursor(root: root, storage: .packed(reader, cursor)))
                    cursor = reader.end(of: cursor)
                }
            }
            withExtendedLifetime(root) {}
        }

        /// The value here as a `JSON` of its own.
        public var value: JSON {
            withExtendedLifetime(root) {
                switch storage {
                case .tree(let pointer):
                    return pointer == root.treePointer ? root : JSON(Reference(borrowed: pointer))
                case .packed(_, let offset):
                    return offset == 0 && root.packedLocation?.offset == 0 ? root : root.packedChild(at: offset)
                }
            }
        }

        /// The value here packed, for keeping: a tree is packed straight from where it lies.
        public func packed() -> JSON {
            var scratch = PackingScratch()
            return packed(using: &scratch)
        }

        /// The same, with storage kept from one value to the next.
        public func packed(using scratch: inout PackingScratch) -> JSON {
            withExtendedLifetime(root) {
                switch storage {
                case .tree(let pointer): return JSON(packed: PackedWriter.pack(pointer, scratch: &scratch))
                case .packed: return value
                }
            }
        }
    }

    /// A cursor at this value.
    public var cursor: Cursor { Cursor(root: self, storage: storage) }

    /// The tree's pointer, nil for a packed value.
    var treePointer: UnsafeMutablePointer<json_t>? {
        if case .tree(let pointer) = storage { return pointer }
        return nil
    }
}

/// What packing a value needs besides its result, kept by a caller that packs many (the
/// rows of a page, of a list replaced), so that each costs one allocation: its own.
public struct PackingScratch {
    var steps: [PackedWriter.Step] = []
    var keyReferences: [UInt64] = []
    var keys = KeyCache()
    public init() {}
}

/// Writes packed objects member by member, from values read in place through cursors or
/// made whole, keeping its storage from one object to the next: a page of mapped objects
/// is written with no tree, no member value and no member list allocated per object.
public struct PackedObjectWriter {
    private var members: [(key: String, value: JSON.Cursor)] = []
    private var scratch = PackingScratch()

    public init() {}

    /// Adds a member. Keys must be distinct within an object (the caller's to ensure:
    /// a packed object, unlike a tree, does not replace a repeated key).
    public mutating func append(_ key: String, _ value: JSON.Cursor) {
        members.append((key, value))
    }

    public mutating func append(_ key: String, _ value: JSON) {
        members.append((key, value.cursor))
    }

    /// The object of the members appended since the last one, packed; starts the next.
    public mutating func finish() -> JSON {
        assert(Set(members.map(\.key)).count == members.count, "repeated key in a packed object")
        let object = withExtendedLifetime(members) { JSON(packed: PackedWriter.object(members.lazy.map { ($0.key, $0.value.storage) }, scratch: &scratch)) }
        members.removeAll(keepingCapacity: true)
        return object
    }
}
