import CJansson

extension JSON {
    /// A place inside a value, read where it lies: stepping into members and elements makes
    /// no value per step (a `JSON` of a member is an allocation, and for a tree a reference
    /// count). What a mapping reads a thousand objects a page through.
    ///
    /// A cursor holds the value it was made from, so what it points into lives as long as
    /// the cursor does: it cannot dangle.
    package struct Cursor {
        /// Keeps `storage`'s tree or buffer alive.
        let root: JSON
        let storage: Storage

        /// The same place without the reference that keeps it alive: for a loop that holds
        /// this cursor itself while it reads through many places under it.
        package var borrowed: BorrowedCursor { BorrowedCursor(root: root.box, storage: storage) }

        package var kind: Kind { withExtendedLifetime(root) { borrowed.kind } }
        package var isNull: Bool { kind == .null }
        package var isObject: Bool { kind == .object }

        /// "an object", "a string", ... for error messages.
        package var kindDescription: String { kind.description }

        /// The value at `path` from here, or nil when a step is missing.
        package func at(_ path: JSONKeyPath) -> Cursor? {
            withExtendedLifetime(root) { borrowed.at(path).map { Cursor(root: root, storage: $0.storage) } }
        }

        /// The member named `name` of an object; nil when missing or not an object.
        package func member(_ name: String) -> Cursor? {
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

        /// The same, by a name worked out once.
        package func member(_ name: MemberName) -> Cursor? {
            withExtendedLifetime(root) { borrowed.member(name).map { Cursor(root: root, storage: $0.storage) } }
        }

        /// Calls `body` with the scalar here (`.container` for an object or an array).
        package func withScalar(_ body: (Scalar) -> Void) {
            withExtendedLifetime(root) { storage.withScalar(body) }
        }

        /// The string here, as a `String`; nil for any other kind.
        package var stringValue: String? { withExtendedLifetime(root) { borrowed.stringValue } }

        /// Calls `body` with each element of an array, in order, and its index; nothing for
        /// any other kind.
        package func forEachElement<E: Error>(_ body: (Int, Cursor) throws(E) -> Void) throws(E) {
            try withExtendedLifetime(root) { () throws(E) in
                try borrowed.forEachElement { (index, element) throws(E) in try body(index, Cursor(root: root, storage: element.storage)) }
            }
        }

        /// The value here as a `JSON` of its own.
        package var value: JSON { withExtendedLifetime(root) { borrowed.value } }

        /// The value here packed in a buffer of its own, for keeping (see `JSON.packed()`): a
        /// tree is packed straight from where it lies.
        package func packed() -> JSON {
            var scratch = PackingScratch()
            return packed(using: &scratch)
        }

        /// The same, with storage kept from one value to the next.
        package func packed(using scratch: inout PackingScratch) -> JSON {
            withExtendedLifetime(root) {
                switch storage {
                case .tree(let pointer): return JSON(packed: PackedWriter.pack(pointer, scratch: &scratch))
                case .packed(_, let offset):
                    // A buffer of its own is kept whole; a value inside one is copied out of it.
                    let (buffer, rootOffset) = root.packedLocation!
                    return offset == 0 && rootOffset == 0 ? root : JSON(packed: PackedWriter.copy(of: buffer, at: offset))
                }
            }
        }
    }

    /// A cursor that does not keep what it points into alive: valid only while something
    /// else holds the value it came from (a `Cursor`, inside `withExtendedLifetime`). For
    /// mapping a page, where taking and dropping a reference for every field read was a
    /// large part of the work; everywhere else, a `Cursor`.
    package struct BorrowedCursor {
        /// The box of the value this came from, not retained.
        unowned(unsafe) let root: AnyObject
        let storage: Storage

        package var kind: Kind { Kind(storage.rawType) }
        package var isNull: Bool { storage.rawType == JSON_NULL }
        package var isObject: Bool { storage.rawType == JSON_OBJECT }
        package var kindDescription: String { kind.description }

        package func at(_ path: JSONKeyPath) -> BorrowedCursor? {
            storage.at(path).map { BorrowedCursor(root: root, storage: $0) }
        }

        package func member(_ name: MemberName) -> BorrowedCursor? {
            storage.member(name).map { BorrowedCursor(root: root, storage: $0) }
        }

        package func withScalar(_ body: (Scalar) -> Void) { storage.withScalar(body) }

        package var stringValue: String? {
            var text: String?
            storage.withScalar { if case .string(let bytes) = $0 { text = String(decoding: bytes, as: UTF8.self) } }
            return text
        }

        package func forEachElement<E: Error>(_ body: (Int, BorrowedCursor) throws(E) -> Void) throws(E) {
            switch storage {
            case .tree(let pointer):
                guard pointer.pointee.type == JSON_ARRAY else { return }
                for index in 0..<json_array_size(pointer) {
                    try body(index, BorrowedCursor(root: root, storage: .tree(json_array_get(pointer, index)!)))
                }
            case .packed(let reader, let offset):
                guard reader.tag(at: offset) == PackedTag.array else { return }
                let (count, first, _) = reader.container(at: offset)
                var cursor = first
                for index in 0..<count {
                    try body(index, BorrowedCursor(root: root, storage: .packed(reader, cursor)))
                    cursor = reader.end(of: cursor)
                }
            }
        }

        /// The value here as a `JSON` of its own, which does keep it alive.
        package var value: JSON {
            let whole = JSON(box: root)
            switch storage {
            case .tree(let pointer):
                return pointer == whole.treePointer ? whole : JSON(Reference(borrowed: pointer))
            case .packed(_, let offset):
                return offset == 0 && whole.packedLocation?.offset == 0 ? whole : whole.packedChild(at: offset)
            }
        }
    }

    /// A member name that many objects are read by and written with, worked out once: its
    /// bytes for jansson's lookups, and its key reference in packed objects (`PackedKeys`).
    package struct MemberName: Sendable, Hashable, CustomStringConvertible {
        package let description: String
        /// Its reference in packed objects: a shared key's id (the key is added to the table
        /// here, if there is room, and keeps that id for good), or the inline form.
        let reference: UInt64
        /// A shared key's id in the table, which never frees its bytes: a name copied (for
        /// every field of every object mapped) takes no reference count. -1: none.
        private let sharedID: Int
        /// A key the table does not hold (too long, or the table full).
        private let ownBytes: [UInt8]

        package init(_ name: String) {
            description = name
            let bytes = Array(name.utf8)
            if let id = bytes.withUnsafeBufferPointer({ PackedKeys.id(of: $0) }) {
                reference = UInt64(id) << 1
                sharedID = id
                ownBytes = []
            } else {
                reference = UInt64(bytes.count) << 1 | 1
                sharedID = -1
                // Never empty, so that its bytes have an address to pass to jansson.
                ownBytes = bytes.isEmpty ? [0] : bytes
            }
        }

        /// Calls `body` with the name's bytes; their base address is never nil.
        @inline(__always) func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
            if sharedID >= 0 { return body(PackedKeys.bytes(ofID: sharedID)) }
            return ownBytes.withUnsafeBufferPointer { body(UnsafeBufferPointer(start: $0.baseAddress, count: Int(reference >> 1))) }
        }

        /// Names are equal when their bytes are, as members are matched (a `String` comparison
        /// would make two spellings of one character equal).
        package static func == (left: MemberName, right: MemberName) -> Bool { left.description.utf8.elementsEqual(right.description.utf8) }
        package func hash(into hasher: inout Hasher) { withBytes { hasher.combine(bytes: UnsafeRawBufferPointer($0)) } }
    }

    /// A cursor at this value.
    package var cursor: Cursor { Cursor(root: self, storage: storage) }

    /// The tree's pointer, nil for a packed value.
    var treePointer: UnsafeMutablePointer<json_t>? {
        if case .tree(let pointer) = storage { return pointer }
        return nil
    }
}

/// What packing a value needs besides its result, kept by a caller that packs many (the
/// rows of a page, of a list replaced), so that each costs one allocation: its own.
package struct PackingScratch {
    var steps: [PackedWriter.Step] = []
    var keys = KeyCache()
    package init() {}
}

/// Writes packed objects member by member, from values read in place through cursors or
/// made whole, keeping its storage from one object to the next: a page of mapped objects
/// is written with no tree, no member value and no member list allocated per object.
package struct PackedObjectWriter {
    private var members: [PackedWriter.Member] = []
    /// The bytes of the object's inline keys (keys the shared table does not hold).
    private var inlineKeys: [UInt8] = []
    /// What keeps the members' values alive until the object is written (nothing for those
    /// appended borrowed).
    private var owners: [JSON] = []
    private var scratch = PackingScratch()

    package init() {}

    /// Adds a member. Keys must be distinct within an object (the caller's to ensure:
    /// a packed object, unlike a tree, does not replace a repeated key).
    package mutating func append(_ key: String, _ value: JSON.Cursor) {
        owners.append(value.root)
        append(key, storage: value.storage)
    }

    package mutating func append(_ key: String, _ value: JSON) {
        owners.append(value)
        append(key, storage: value.storage)
    }

    package mutating func append(_ name: JSON.MemberName, _ value: JSON) {
        owners.append(value)
        append(name, storage: value.storage)
    }

    /// Adds a member whose value the caller keeps alive until `finish()`: no reference is
    /// taken.
    package mutating func append(_ name: JSON.MemberName, borrowed value: JSON.BorrowedCursor) {
        append(name, storage: value.storage)
    }

    private mutating func append(_ key: String, storage: JSON.Storage) {
        var key = key
        key.withUTF8 { bytes in
            let reference = PackedKeys.reference(of: bytes, cache: &scratch.keys)
            members.append(PackedWriter.Member(reference: reference, inlineKeyOffset: inlineKeys.count, value: storage))
            if reference & 1 == 1 { inlineKeys.append(contentsOf: bytes) }
        }
    }

    private mutating func append(_ name: JSON.MemberName, storage: JSON.Storage) {
        members.append(PackedWriter.Member(reference: name.reference, inlineKeyOffset: inlineKeys.count, value: storage))
        if name.reference & 1 == 1 { name.withBytes { inlineKeys.append(contentsOf: $0) } }
    }

    /// The object of the members appended since the last one, packed; starts the next.
    package mutating func finish() -> JSON {
        assert(keysAreDistinct, "repeated key in a packed object")
        let object = members.withUnsafeBufferPointer { members in
            inlineKeys.withUnsafeBufferPointer { inlineKeys in
                JSON(packed: PackedWriter.object(members, inlineKeys: inlineKeys, scratch: &scratch))
            }
        }
        abandon()
        return object
    }

    /// Drops the members appended since the last object, for an object that will not be
    /// written (a field of it was wrong): the next object must not start with them, and what
    /// was appended borrowed may not outlive this call.
    package mutating func abandon() {
        members.removeAll(keepingCapacity: true)
        inlineKeys.removeAll(keepingCapacity: true)
        owners.removeAll(keepingCapacity: true)
    }

    private var keysAreDistinct: Bool {
        let keys = members.map { member in
            member.reference & 1 == 0
                ? Array(PackedKeys.bytes(ofID: Int(member.reference >> 1)))
                : Array(inlineKeys[member.inlineKeyOffset..<member.inlineKeyOffset + Int(member.reference >> 1)])
        }
        return Set(keys).count == keys.count
    }
}
