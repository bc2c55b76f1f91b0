import CJansson
#if canImport(Glibc)
import Glibc
#endif

// The writing half of the packed format (Packed.swift describes the layout).

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
