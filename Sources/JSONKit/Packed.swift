import CJansson
#if canImport(Glibc)
import Glibc
#endif

// A compact, immutable copy of a JSON value in one allocation, for values kept a long
// time in large numbers (the rows of a source). A jansson tree spends a node, and for
// an object a hash table, on every value: about 12 bytes of memory per byte of JSON text
// for small objects. Packed, a value takes about as many bytes as its text.
//
// Layout, in one byte buffer: a value is a tag (jansson's `json_type`), then
//   object, array:  count (varint), size of what follows (varint), then the members
//                   (key reference (varint, see PackedKeys.swift), [key bytes], value)
//                   or the elements
//   string:         length (varint), UTF-8 bytes
//   integer:        zigzag varint
//   real:           the 8 bytes of the double, little-endian
//   true, false, null: nothing
// Members keep their order. Reading walks the bytes; a container's size lets a reader
// skip it whole. Nothing here parses JSON text: values come from and go back to jansson.

/// A packed value at the start of the buffer: the box of a packed `JSON`. Not `Sendable`
/// itself (`ManagedBuffer` is not); it crosses threads only inside a `JSON`, written once
/// before it is shared and never after.
final class PackedBuffer: ManagedBuffer<Void, UInt8> {
    /// The first byte; valid while the buffer lives (its tail-allocated elements never move).
    var base: UnsafePointer<UInt8> { UnsafePointer(withUnsafeMutablePointerToElements { $0 }) }
}

/// A value inside a packed buffer (a member or element reached from a packed row). Crosses
/// threads only inside a `JSON`, as its buffer does.
final class PackedSlice {
    let buffer: PackedBuffer
    let offset: Int

    init(buffer: PackedBuffer, offset: Int) {
        self.buffer = buffer
        self.offset = offset
    }
}

enum PackedTag {
    static let object = UInt8(JSON_OBJECT.rawValue)
    static let array = UInt8(JSON_ARRAY.rawValue)
    static let string = UInt8(JSON_STRING.rawValue)
    static let integer = UInt8(JSON_INTEGER.rawValue)
    static let real = UInt8(JSON_REAL.rawValue)
    static let `true` = UInt8(JSON_TRUE.rawValue)
    static let `false` = UInt8(JSON_FALSE.rawValue)
    static let null = UInt8(JSON_NULL.rawValue)
}

// MARK: - Reading

/// Reads packed values at byte offsets of a buffer that outlives it.
struct PackedReader {
    let base: UnsafePointer<UInt8>

    @inline(__always) func tag(at offset: Int) -> UInt8 { base[offset] }

    @inline(__always) func varint(_ offset: inout Int) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = base[offset]
            offset += 1
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
    }

    /// The key of the member at `offset`, moving `offset` to its value: a shared key's
    /// bytes (`PackedKeys`), or the key written inline.
    @inline(__always) func key(_ offset: inout Int) -> UnsafeBufferPointer<UInt8> {
        let reference = varint(&offset)
        if reference & 1 == 0 { return PackedKeys.bytes(ofID: Int(reference >> 1)) }
        let length = Int(reference >> 1)
        defer { offset += length }
        return UnsafeBufferPointer(start: base + offset, count: length)
    }

    /// A container's element or member count, and the offset of its first one.
    func container(at offset: Int) -> (count: Int, first: Int, end: Int) {
        var cursor = offset + 1
        let count = Int(varint(&cursor))
        let size = Int(varint(&cursor))
        return (count, cursor, cursor + size)
    }

    func string(at offset: Int) -> UnsafeBufferPointer<UInt8> {
        var cursor = offset + 1
        let length = Int(varint(&cursor))
        return UnsafeBufferPointer(start: base + cursor, count: length)
    }

    func integer(at offset: Int) -> Int64 {
        var cursor = offset + 1
        let zigzag = varint(&cursor)
        return Int64(bitPattern: (zigzag >> 1) ^ (0 &- (zigzag & 1)))
    }

    func real(at offset: Int) -> Double {
        var bits: UInt64 = 0
        withUnsafeMutableBytes(of: &bits) { $0.copyMemory(from: UnsafeRawBufferPointer(start: base + offset + 1, count: 8)) }
        return Double(bitPattern: UInt64(littleEndian: bits))
    }

    /// The offset just past the value at `offset`.
    func end(of offset: Int) -> Int {
        switch tag(at: offset) {
        case PackedTag.object, PackedTag.array:
            return container(at: offset).end
        case PackedTag.string:
            let bytes = string(at: offset)
            return bytes.baseAddress! - base + bytes.count
        case PackedTag.integer:
            var cursor = offset + 1
            _ = varint(&cursor)
            return cursor
        case PackedTag.real:
            return offset + 9
        default:
            return offset + 1
        }
    }

    /// Calls `body` with each member's key and value offset, in order, until it returns false.
    func forEachMember(of offset: Int, _ body: (UnsafeBufferPointer<UInt8>, Int) -> Bool) {
        let (count, first, _) = container(at: offset)
        var cursor = first
        for _ in 0..<count {
            let key = key(&cursor)
            guard body(key, cursor) else { return }
            cursor = end(of: cursor)
        }
    }

    /// The offset of member `key` of the object at `offset`, or nil.
    func member(of offset: Int, key: UnsafeBufferPointer<UInt8>) -> Int? {
        var found: Int?
        forEachMember(of: offset) { candidate, value in
            if PackedKeys.equal(candidate, key) {
                found = value
                return false
            }
            return true
        }
        return found
    }

    /// The same, for a key whose reference is known (`JSON.MemberName` works it out once): a
    /// shared key is found by its id alone, with no key bytes read. A key keeps the one id it
    /// was given for good, or never gets one (`PackedKeys`): a key without an id is never
    /// written as one, so its inline reference (odd) never equals a member's id (even), and
    /// inline keys are compared by their bytes.
    func member(of offset: Int, key: UnsafeBufferPointer<UInt8>, reference: UInt64) -> Int? {
        let (count, first, _) = container(at: offset)
        var cursor = first
        for _ in 0..<count {
            let candidate = varint(&cursor)
            if candidate & 1 == 0 {
                if candidate == reference { return cursor }
            } else {
                let length = Int(candidate >> 1)
                if PackedKeys.equal(UnsafeBufferPointer(start: base + cursor, count: length), key) { return cursor + length }
                cursor += length
            }
            cursor = end(of: cursor)
        }
        return nil
    }

    /// The offset of element `index` of the array at `offset`, or nil.
    func element(of offset: Int, index: Int) -> Int? {
        let (count, first, _) = container(at: offset)
        guard index >= 0, index < count else { return nil }
        var cursor = first
        for _ in 0..<index { cursor = end(of: cursor) }
        return cursor
    }

    /// A new jansson tree with the value at `offset`.
    func tree(at offset: Int) -> UnsafeMutablePointer<json_t> {
        let made: UnsafeMutablePointer<json_t>?
        switch tag(at: offset) {
        case PackedTag.object:
            let object = json_object()
            forEachMember(of: offset) { key, value in
                // Never a null pointer: a packed key's start points into the buffer even when empty.
                key.withMemoryRebound(to: CChar.self) { chars in
                    // _new steals the child's count; the key is copied.
                    _ = json_object_setn_new(object, chars.baseAddress!, chars.count, tree(at: value))
                }
                return true
            }
            made = object
        case PackedTag.array:
            let array = json_array()
            let (count, first, _) = container(at: offset)
            var cursor = first
            for _ in 0..<count {
                json_array_append_new(array, tree(at: cursor))
                cursor = end(of: cursor)
            }
            made = array
        case PackedTag.string:
            let bytes = string(at: offset)
            made = bytes.withMemoryRebound(to: CChar.self) { json_stringn($0.baseAddress!, $0.count) }
        case PackedTag.integer:
            made = json_integer(json_int_t(integer(at: offset)))
        case PackedTag.real:
            made = json_real(real(at: offset))
        case PackedTag.true:
            made = json_true()
        case PackedTag.false:
            made = json_false()
        default:
            made = json_null()
        }
        guard let made else { fatalError("jansson: out of memory") }
        return made
    }

    /// Whether the value at `leftOffset` equals the one at `rightOffset` of another (or the
    /// same) buffer, exactly as `json_equal` would answer for their trees: objects regardless
    /// of member order, an integer never equal to a real, `-0.0` equal to `0.0`.
    static func equal(_ left: PackedReader, _ leftOffset: Int, _ right: PackedReader, _ rightOffset: Int) -> Bool {
        let tag = left.tag(at: leftOffset)
        guard tag == right.tag(at: rightOffset) else { return false }
        switch tag {
        case PackedTag.object, PackedTag.array:
            let (count, leftFirst, leftEnd) = left.container(at: leftOffset)
            let (rightCount, rightFirst, rightEnd) = right.container(at: rightOffset)
            guard count == rightCount else { return false }
            // The same bytes are the same value, whatever they hold.
            if leftEnd - leftFirst == rightEnd - rightFirst,
                memcmp(left.base + leftFirst, right.base + rightFirst, leftEnd - leftFirst) == 0
            {
                return true
            }
            if tag == PackedTag.array {
                var leftCursor = leftFirst, rightCursor = rightFirst
                for _ in 0..<count {
                    guard equal(left, leftCursor, right, rightCursor) else { return false }
                    leftCursor = left.end(of: leftCursor)
                    rightCursor = right.end(of: rightCursor)
                }
                return true
            }
            // Keys are unique in an object, so equal counts and every left member found equal
            // on the right make the objects equal. Members usually come in the same order:
            // the right member at the same place is tried before a search.
            var rightCursor = rightFirst, result = true
            left.forEachMember(of: leftOffset) { key, value in
                var found: Int?
                if rightCursor < rightEnd {
                    var cursor = rightCursor
                    if PackedKeys.equal(right.key(&cursor), key) { found = cursor }
                    rightCursor = right.end(of: cursor)
                }
                guard let other = found ?? right.member(of: rightOffset, key: key), equal(left, value, right, other) else {
                    result = false
                    return false
                }
                return true
            }
            return result
        case PackedTag.string:
            let a = left.string(at: leftOffset), b = right.string(at: rightOffset)
            return a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
        case PackedTag.integer:
            return left.integer(at: leftOffset) == right.integer(at: rightOffset)
        case PackedTag.real:
            return left.real(at: leftOffset) == right.real(at: rightOffset)
        default:
            return true
        }
    }

    /// Hashes the value at `offset` exactly as `JSON.hash(_:into:)` hashes the same value
    /// held as a tree, so the two representations of one value hash alike. A container starts
    /// with its type and count, a scalar as `FoldHasher.combine(_: JSON.Scalar)` has it:
    /// values side by side never hash as if one ran into the next.
    func hash(at offset: Int, into hasher: inout FoldHasher) {
        let tag = tag(at: offset)
        switch tag {
        case PackedTag.object:
            var sum = 0
            forEachMember(of: offset) { key, value in
                var member = hasher.fresh()
                member.combine(UInt64(key.count))
                member.combine(bytes: UnsafeRawBufferPointer(key))
                hash(at: value, into: &member)
                sum &+= member.finish()
                return true
            }
            hasher.combine(UInt64(tag) | UInt64(container(at: offset).count) << 8)
            hasher.combine(UInt64(bitPattern: Int64(sum)))
        case PackedTag.array:
            let (count, first, _) = container(at: offset)
            hasher.combine(UInt64(tag) | UInt64(count) << 8)
            var cursor = first
            for _ in 0..<count {
                hash(at: cursor, into: &hasher)
                cursor = end(of: cursor)
            }
        default:
            JSON.Storage.packed(self, offset).withScalar { hasher.combine($0) }
        }
    }
}
