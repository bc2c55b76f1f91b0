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

// MARK: - Writing

/// Packs jansson trees: one pass over the tree measures it and notes what to write (the
/// steps), one over the steps writes into a buffer of that size, with no call into jansson.
enum PackedWriter {
    /// One value, container header or member key to write, in the order written.
    struct Step {
        /// The value's tag, or `Step.key`.
        var tag: UInt8
        /// A container's count, a string's length, an integer's zigzag form, a real's bits,
        /// a key's reference.
        var number: UInt64 = 0
        /// A container's payload size.
        var payload = 0
        /// A string's bytes, an inline key's bytes (the tree's, valid while it lives).
        var bytes: UnsafeRawPointer?

        static let key: UInt8 = 0xFF
    }

    static func pack(_ tree: UnsafeMutablePointer<json_t>) -> PackedBuffer {
        var scratch = PackingScratch()
        return pack(tree, scratch: &scratch)
    }

    /// `scratch`: kept by a caller packing many values (one allocation for all of them, not
    /// one each, and their keys found in its cache).
    static func pack(_ tree: UnsafeMutablePointer<json_t>, scratch: inout PackingScratch) -> PackedBuffer {
        // Each container's payload size is measured once, not again at every level above
        // (which made packing deep values quadratic).
        scratch.steps.removeAll(keepingCapacity: true)
        let size = measure(tree, scratch: &scratch)
        let made = PackedBuffer.create(minimumCapacity: size) { _ in }
        let buffer = unsafeDowncast(made, to: PackedBuffer.self)
        buffer.withUnsafeMutablePointerToElements { start in
            var cursor = start
            _ = scratch.steps.withUnsafeBufferPointer { write($0, to: &cursor) }
            assert(cursor - start == size)
        }
        return buffer
    }

    /// A packed array of packed values, by copying their bytes: no tree is built, so a
    /// large result of kept rows costs the main loop a copy, and the tree jansson needs to
    /// encode it is built where it is encoded (the writer thread).
    static func array(of elements: [JSON]) -> PackedBuffer {
        var payload = 0
        for element in elements {
            let (buffer, offset) = element.packedLocation!
            payload += PackedReader(base: buffer.base).end(of: offset) - offset
        }
        return container(PackedTag.array, count: elements.count, payload: payload) { cursor in
            for element in elements {
                let (buffer, offset) = element.packedLocation!
                let length = PackedReader(base: buffer.base).end(of: offset) - offset
                withExtendedLifetime(buffer) { putBytes(buffer.base + offset, count: length, &cursor) }
            }
        }
    }

    /// A buffer of its own holding a copy of the value at `offset` of `buffer` (a member or
    /// element of a larger packed value): its bytes as they are, keys included (a shared
    /// key's reference is the process's, an inline key is inline).
    static func copy(of buffer: PackedBuffer, at offset: Int) -> PackedBuffer {
        let length = PackedReader(base: buffer.base).end(of: offset) - offset
        let made = PackedBuffer.create(minimumCapacity: length) { _ in }
        let result = unsafeDowncast(made, to: PackedBuffer.self)
        result.withUnsafeMutablePointerToElements { start in
            withExtendedLifetime(buffer) { start.update(from: buffer.base + offset, count: length) }
        }
        return result
    }

    /// A new buffer holding one container: its tag, count and payload size, then the payload
    /// `body` writes (exactly `payload` bytes).
    private static func container(
        _ tag: UInt8, count: Int, payload: Int, _ body: (inout UnsafeMutablePointer<UInt8>) -> Void
    ) -> PackedBuffer {
        let size = 1 + varintSize(UInt64(count)) + varintSize(UInt64(payload)) + payload
        let made = PackedBuffer.create(minimumCapacity: size) { _ in }
        let result = unsafeDowncast(made, to: PackedBuffer.self)
        result.withUnsafeMutablePointerToElements { start in
            var cursor = start
            put(tag, &cursor)
            putVarint(UInt64(count), &cursor)
            putVarint(UInt64(payload), &cursor)
            body(&cursor)
            assert(cursor - start == size)
        }
        return result
    }

    /// A member of an object to write (`PackedObjectWriter` collects them): its key
    /// reference, for an inline key where its bytes are in `inlineKeys`, and its value,
    /// whose owner must outlive the write.
    struct Member {
        var reference: UInt64
        var inlineKeyOffset: Int
        var value: JSON.Storage
    }

    /// `[[a, b], [a, b, c], ...]`: each element the pair, or with its third integer when that is
    /// not nil.
    static func integerTuples(_ tuples: [(Int, Int, Int?)]) -> PackedBuffer {
        @inline(__always) func payloadSize(_ tuple: (Int, Int, Int?)) -> Int {
            2 + varintSize(zigzag(Int64(tuple.0))) + varintSize(zigzag(Int64(tuple.1)))
                + (tuple.2.map { 1 + varintSize(zigzag(Int64($0))) } ?? 0)
        }
        var payload = 0
        for tuple in tuples {
            let inner = payloadSize(tuple)
            payload += 2 + varintSize(UInt64(inner)) + inner
        }
        return container(PackedTag.array, count: tuples.count, payload: payload) { cursor in
            for tuple in tuples {
                put(PackedTag.array, &cursor)
                putVarint(tuple.2 == nil ? 2 : 3, &cursor)
                putVarint(UInt64(payloadSize(tuple)), &cursor)
                put(PackedTag.integer, &cursor)
                putVarint(zigzag(Int64(tuple.0)), &cursor)
                put(PackedTag.integer, &cursor)
                putVarint(zigzag(Int64(tuple.1)), &cursor)
                if let third = tuple.2 {
                    put(PackedTag.integer, &cursor)
                    putVarint(zigzag(Int64(third)), &cursor)
                }
            }
        }
    }

    /// `[{first: [a, b], second: [c, d]}, ...]`: objects of two integer pairs each (a change
    /// set's moves), written straight from the integers.
    static func pairObjects(_ first: JSON.MemberName, _ second: JSON.MemberName, _ values: [(Int, Int, Int, Int)]) -> PackedBuffer {
        precondition(first != second, "an object's keys are distinct")
        @inline(__always) func pairSize(_ a: Int, _ b: Int) -> Int {
            let inner = 2 + varintSize(zigzag(Int64(a))) + varintSize(zigzag(Int64(b)))
            return 2 + varintSize(UInt64(inner)) + inner
        }
        let keys = keySize(first.reference) + keySize(second.reference)
        @inline(__always) func objectPayload(_ value: (Int, Int, Int, Int)) -> Int {
            keys + pairSize(value.0, value.1) + pairSize(value.2, value.3)
        }
        @inline(__always) func putPair(_ a: Int, _ b: Int, _ cursor: inout UnsafeMutablePointer<UInt8>) {
            put(PackedTag.array, &cursor)
            putVarint(2, &cursor)
            putVarint(UInt64(2 + varintSize(zigzag(Int64(a))) + varintSize(zigzag(Int64(b)))), &cursor)
            put(PackedTag.integer, &cursor)
            putVarint(zigzag(Int64(a)), &cursor)
            put(PackedTag.integer, &cursor)
            putVarint(zigzag(Int64(b)), &cursor)
        }
        var payload = 0
        for value in values {
            let inner = objectPayload(value)
            payload += 2 + varintSize(UInt64(inner)) + inner
        }
        return first.withBytes { firstKey in
            second.withBytes { secondKey in
                container(PackedTag.array, count: values.count, payload: payload) { cursor in
                    for value in values {
                        put(PackedTag.object, &cursor)
                        putVarint(2, &cursor)
                        putVarint(UInt64(objectPayload(value)), &cursor)
                        putKey(first.reference, bytes: UnsafeRawPointer(firstKey.baseAddress), &cursor)
                        putPair(value.0, value.1, &cursor)
                        putKey(second.reference, bytes: UnsafeRawPointer(secondKey.baseAddress), &cursor)
                        putPair(value.2, value.3, &cursor)
                    }
                }
            }
        }
    }

    /// A packed object of the members (unique keys), written straight from where their
    /// values lie: trees are packed in place, packed values copied. No tree of the object is
    /// built.
    static func object(
        _ members: UnsafeBufferPointer<Member>, inlineKeys: UnsafeBufferPointer<UInt8>, scratch: inout PackingScratch
    ) -> PackedBuffer {
        scratch.steps.removeAll(keepingCapacity: true)
        var payload = 0
        for member in members {
            let size: Int
            switch member.value {
            case .tree(let pointer): size = measure(pointer, scratch: &scratch)
            case .packed(let reader, let offset): size = reader.end(of: offset) - offset
            }
            payload += keySize(member.reference) + size
        }
        return container(PackedTag.object, count: members.count, payload: payload) { cursor in
            scratch.steps.withUnsafeBufferPointer { steps in
                var next = 0
                for member in members {
                    putKey(member.reference, bytes: inlineKeys.baseAddress.map { UnsafeRawPointer($0 + member.inlineKeyOffset) }, &cursor)
                    switch member.value {
                    case .tree:
                        // The tree's steps, up to the next member's.
                        next = write(steps, from: next, to: &cursor)
                    case .packed(let reader, let offset):
                        putBytes(reader.base + offset, count: reader.end(of: offset) - offset, &cursor)
                    }
                }
            }
        }
    }

    /// The bytes a member's key takes: its reference, and for an inline key the key itself.
    @inline(__always) static func keySize(_ reference: UInt64) -> Int {
        varintSize(reference) + (reference & 1 == 1 ? Int(reference >> 1) : 0)
    }

    @inline(__always) static func varintSize(_ value: UInt64) -> Int {
        var value = value, size = 1
        while value >= 0x80 {
            value >>= 7
            size += 1
        }
        return size
    }

    @inline(__always) static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    /// The packed size of `tree`; appends to `scratch.steps` what writing it takes, in the
    /// order written (a container before what it holds).
    static func measure(_ tree: UnsafeMutablePointer<json_t>, scratch: inout PackingScratch) -> Int {
        let type = tree.pointee.type
        let tag = UInt8(type.rawValue)
        switch type {
        case JSON_OBJECT:
            let slot = scratch.steps.count
            let count = json_object_size(tree)
            scratch.steps.append(Step(tag: tag, number: UInt64(count)))
            var payload = 0
            var iterator = json_object_iter(tree)
            while let current = iterator {
                let key = key(current)
                let reference = PackedKeys.reference(of: key, cache: &scratch.keys)
                scratch.steps.append(Step(tag: Step.key, number: reference, bytes: UnsafeRawPointer(key.baseAddress)))
                payload += keySize(reference) + measure(json_object_iter_value(current)!, scratch: &scratch)
                iterator = json_object_iter_next(tree, current)
            }
            scratch.steps[slot].payload = payload
            return 1 + varintSize(UInt64(count)) + varintSize(UInt64(payload)) + payload
        case JSON_ARRAY:
            let slot = scratch.steps.count
            let count = json_array_size(tree)
            scratch.steps.append(Step(tag: tag, number: UInt64(count)))
            var payload = 0
            for index in 0..<count { payload += measure(json_array_get(tree, index)!, scratch: &scratch) }
            scratch.steps[slot].payload = payload
            return 1 + varintSize(UInt64(count)) + varintSize(UInt64(payload)) + payload
        case JSON_STRING:
            let length = json_string_length(tree)
            scratch.steps.append(Step(tag: tag, number: UInt64(length), bytes: UnsafeRawPointer(json_string_value(tree))))
            return 1 + varintSize(UInt64(length)) + length
        case JSON_INTEGER:
            let zigzag = zigzag(json_integer_value(tree))
            scratch.steps.append(Step(tag: tag, number: zigzag))
            return 1 + varintSize(zigzag)
        case JSON_REAL:
            scratch.steps.append(Step(tag: tag, number: json_real_value(tree).bitPattern))
            return 9
        default:
            scratch.steps.append(Step(tag: tag))
            return 1
        }
    }

    @inline(__always) private static func put(_ byte: UInt8, _ cursor: inout UnsafeMutablePointer<UInt8>) {
        cursor.pointee = byte
        cursor += 1
    }

    @inline(__always) private static func putVarint(_ value: UInt64, _ cursor: inout UnsafeMutablePointer<UInt8>) {
        var value = value
        while value >= 0x80 {
            put(UInt8(truncatingIfNeeded: value) | 0x80, &cursor)
            value >>= 7
        }
        put(UInt8(value), &cursor)
    }

    /// The key of an object iterator's member, as bytes (valid while the object lives).
    @inline(__always) private static func key(_ iterator: UnsafeMutableRawPointer) -> UnsafeBufferPointer<UInt8> {
        let length = json_object_iter_key_len(iterator)
        return UnsafeRawPointer(json_object_iter_key(iterator)!).withMemoryRebound(to: UInt8.self, capacity: length) {
            UnsafeBufferPointer(start: $0, count: length)
        }
    }

    /// A member's key reference, then for an inline key its bytes (`bytes`, as many as the
    /// reference says).
    @inline(__always) private static func putKey(_ reference: UInt64, bytes: UnsafeRawPointer?, _ cursor: inout UnsafeMutablePointer<UInt8>)
    {
        putVarint(reference, &cursor)
        if reference & 1 == 1, let bytes { putBytes(bytes, count: Int(reference >> 1), &cursor) }
    }

    private static func putBytes(_ bytes: UnsafeRawPointer, count: Int, _ cursor: inout UnsafeMutablePointer<UInt8>) {
        if count > 0 { UnsafeMutableRawPointer(cursor).copyMemory(from: bytes, byteCount: count) }
        cursor += count
    }

    /// Writes the value whose steps start at `first`; returns the index after its last step.
    @discardableResult
    static func write(_ steps: UnsafeBufferPointer<Step>, from first: Int = 0, to cursor: inout UnsafeMutablePointer<UInt8>) -> Int {
        var next = first, pending = 1  // values still to write: the one asked for, then what containers hold
        while pending > 0 {
            let step = steps[next]
            next += 1
            if step.tag == Step.key {
                putKey(step.number, bytes: step.bytes, &cursor)
                continue
            }
            pending -= 1
            put(step.tag, &cursor)
            switch step.tag {
            case PackedTag.object, PackedTag.array:
                putVarint(step.number, &cursor)
                putVarint(UInt64(step.payload), &cursor)
                pending += Int(step.number)
            case PackedTag.string:
                putVarint(step.number, &cursor)
                if let bytes = step.bytes { putBytes(bytes, count: Int(step.number), &cursor) }
            case PackedTag.integer:
                putVarint(step.number, &cursor)
            case PackedTag.real:
                var bits = step.number.littleEndian
                withUnsafeBytes(of: &bits) { putBytes($0.baseAddress!, count: 8, &cursor) }
            default:
                break
            }
        }
        return next
    }
}
