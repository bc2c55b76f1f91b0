import CJansson

// Packed values as a file keeps them (the persisted page cache): the layout of Packed.swift
// with every key written inline. A shared key's reference is an id into this process's
// key table (PackedKeys.swift), which means nothing to the next process, so it is written
// out as its bytes; reading takes each key back into the table, so a value read costs the
// same to keep and to compare as one that came from the network.
//
// What is read is input (a file another process or a person can edit): every count,
// length and size is range-checked against the bytes there are, every container must hold
// exactly the bytes its size says, strings and keys must be UTF-8 (what jansson takes
// back), reals finite (what jansson can make), object keys distinct, tags known, and the
// nesting bounded. A value that passes is one `PackedReader` reads without leaving the
// buffer, and one jansson can always turn into a tree.

/// Why bytes are not a portable packed value: what is wrong, and at which byte.
package struct PortablePackedError: Error, Equatable, CustomStringConvertible {
    package let reason: String
    package let offset: Int

    package var description: String { "\(reason) (at byte \(offset))" }
}

extension JSON {
    /// This value packed with every key inline (see the top of this file): a tree is packed
    /// from where it lies, a packed value rewritten with its shared keys spelled out.
    package func portablePacked() -> [UInt8] {
        var steps: [PackedWriter.Step] = []
        let size = withExtendedLifetime(self) { PortablePacking.measure(storage, steps: &steps) }
        var bytes = [UInt8](repeating: 0, count: size)
        withExtendedLifetime(self) {
            bytes.withUnsafeMutableBufferPointer { buffer in
                var cursor = buffer.baseAddress!
                steps.withUnsafeBufferPointer { _ = PackedWriter.write($0, to: &cursor) }
                assert(cursor - buffer.baseAddress! == size)
            }
        }
        return bytes
    }

    /// The value `bytes` hold (all of them, one value), packed in a buffer of its own with
    /// this process's shared keys, after checking everything the top of this file lists.
    /// `maximumDepth`: how many containers may nest (the outermost is the first).
    package static func portablePacked(
        _ bytes: UnsafeRawBufferPointer, maximumDepth: Int
    ) throws(PortablePackedError) -> JSON {
        guard let start = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !bytes.isEmpty else {
            throw PortablePackedError(reason: "no value", offset: 0)
        }
        var reader = PortableReader(base: start, count: bytes.count, maximumDepth: maximumDepth)
        var offset = 0
        let size = try reader.value(at: &offset, end: bytes.count, depth: 0)
        guard offset == bytes.count else { throw PortablePackedError(reason: "bytes after the value", offset: offset) }
        let made = PackedBuffer.create(minimumCapacity: size) { _ in }
        let buffer = unsafeDowncast(made, to: PackedBuffer.self)
        buffer.withUnsafeMutablePointerToElements { destination in
            var cursor = destination
            reader.steps.withUnsafeBufferPointer { _ = PackedWriter.write($0, to: &cursor) }
            assert(cursor - destination == size)
        }
        return JSON(packed: buffer)
    }
}

/// Measures a value for `portablePacked()`: `PackedWriter.measure`'s steps, with each key
/// inline.
enum PortablePacking {
    static func inlineReference(_ key: UnsafeBufferPointer<UInt8>) -> UInt64 { UInt64(key.count) << 1 | 1 }

    static func measure(_ storage: JSON.Storage, steps: inout [PackedWriter.Step]) -> Int {
        switch storage {
        case .tree(let tree): return measure(tree, steps: &steps)
        case .packed(let reader, let offset): return measure(reader, offset, steps: &steps)
        }
    }

    private static func containerSize(count: Int, payload: Int) -> Int {
        1 + PackedWriter.varintSize(UInt64(count)) + PackedWriter.varintSize(UInt64(payload)) + payload
    }

    private static func measure(_ tree: UnsafeMutablePointer<json_t>, steps: inout [PackedWriter.Step]) -> Int {
        let type = tree.pointee.type
        let tag = UInt8(type.rawValue)
        switch type {
        case JSON_OBJECT:
            let slot = steps.count
            let count = json_object_size(tree)
            steps.append(PackedWriter.Step(tag: tag, number: UInt64(count)))
            var payload = 0
            var iterator = json_object_iter(tree)
            while let current = iterator {
                let length = json_object_iter_key_len(current)
                let reference = UInt64(length) << 1 | 1
                steps.append(
                    PackedWriter.Step(tag: PackedWriter.Step.key, number: reference, bytes: UnsafeRawPointer(json_object_iter_key(current)))
                )
                payload += PackedWriter.keySize(reference) + measure(json_object_iter_value(current)!, steps: &steps)
                iterator = json_object_iter_next(tree, current)
            }
            steps[slot].payload = payload
            return containerSize(count: count, payload: payload)
        case JSON_ARRAY:
            let slot = steps.count
            let count = json_array_size(tree)
            steps.append(PackedWriter.Step(tag: tag, number: UInt64(count)))
            var payload = 0
            for index in 0..<count { payload += measure(json_array_get(tree, index)!, steps: &steps) }
            steps[slot].payload = payload
            return containerSize(count: count, payload: payload)
        default:
            // A scalar is written as the packed writer writes it.
            var scratch = PackingScratch()
            let size = PackedWriter.measure(tree, scratch: &scratch)
            steps.append(contentsOf: scratch.steps)
            return size
        }
    }

    private static func measure(_ reader: PackedReader, _ offset: Int, steps: inout [PackedWriter.Step]) -> Int {
        let tag = reader.tag(at: offset)
        switch tag {
        case PackedTag.object:
            let slot = steps.count
            let count = reader.container(at: offset).count
            steps.append(PackedWriter.Step(tag: tag, number: UInt64(count)))
            var payload = 0
            reader.forEachMember(of: offset) { key, value in
                let reference = inlineReference(key)
                steps.append(PackedWriter.Step(tag: PackedWriter.Step.key, number: reference, bytes: UnsafeRawPointer(key.baseAddress)))
                payload += PackedWriter.keySize(reference) + measure(reader, value, steps: &steps)
                return true
            }
            steps[slot].payload = payload
            return containerSize(count: count, payload: payload)
        case PackedTag.array:
            let slot = steps.count
            let (count, first, _) = reader.container(at: offset)
            steps.append(PackedWriter.Step(tag: tag, number: UInt64(count)))
            var payload = 0, cursor = first
            for _ in 0..<count {
                payload += measure(reader, cursor, steps: &steps)
                cursor = reader.end(of: cursor)
            }
            steps[slot].payload = payload
            return containerSize(count: count, payload: payload)
        case PackedTag.string:
            let bytes = reader.string(at: offset)
            steps.append(PackedWriter.Step(tag: tag, number: UInt64(bytes.count), bytes: UnsafeRawPointer(bytes.baseAddress)))
            return 1 + PackedWriter.varintSize(UInt64(bytes.count)) + bytes.count
        case PackedTag.integer:
            var cursor = offset + 1
            let zigzag = reader.varint(&cursor)
            steps.append(PackedWriter.Step(tag: tag, number: zigzag))
            return cursor - offset
        case PackedTag.real:
            steps.append(PackedWriter.Step(tag: tag, number: reader.real(at: offset).bitPattern))
            return 9
        default:
            steps.append(PackedWriter.Step(tag: tag))
            return 1
        }
    }
}

/// Checks portable packed bytes and notes, as it goes, the steps that write them in this
/// process's form (shared keys where the table has them): one pass over the bytes.
struct PortableReader {
    let base: UnsafePointer<UInt8>
    let count: Int
    let maximumDepth: Int
    var steps: [PackedWriter.Step] = []
    private var keys = KeyCache()
    /// The keys of the objects being read, innermost last (see `members`).
    private var keyStack: [UnsafeBufferPointer<UInt8>] = []

    init(base: UnsafePointer<UInt8>, count: Int, maximumDepth: Int) {
        self.base = base
        self.count = count
        self.maximumDepth = maximumDepth
    }

    private func fail(_ reason: String, _ offset: Int) -> PortablePackedError { PortablePackedError(reason: reason, offset: offset) }

    /// A varint ending before `end`: at most 10 bytes, and no bits past the 64th.
    private func varint(_ offset: inout Int, end: Int, what: String) throws(PortablePackedError) -> UInt64 {
        let start = offset
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < end else { throw fail("\(what) runs past the end of its container", start) }
            let byte = base[offset]
            offset += 1
            if shift == 63, byte > 1 { throw fail("\(what) does not fit in 64 bits", start) }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
    }

    /// A length that fits in what is left before `end`.
    private func length(_ offset: inout Int, end: Int, what: String) throws(PortablePackedError) -> Int {
        let start = offset
        let value = try varint(&offset, end: end, what: what)
        guard value <= UInt64(end - offset) else { throw fail("\(what) (\(value)) is longer than the \(end - offset) bytes left", start) }
        return Int(value)
    }

    /// Checks the value at `offset` (ending at or before `end`), appends its steps, moves
    /// `offset` past it; returns its size in this process's form.
    mutating func value(at offset: inout Int, end: Int, depth: Int) throws(PortablePackedError) -> Int {
        let start = offset
        guard offset < end else { throw fail("a value is missing", offset) }
        let tag = base[offset]
        offset += 1
        switch tag {
        case PackedTag.object, PackedTag.array:
            guard depth < maximumDepth else { throw fail("it nests deeper than \(maximumDepth) levels", start) }
            let elements = try varint(&offset, end: end, what: "a count")
            let size = try length(&offset, end: end, what: "a container's size")
            let payloadEnd = offset + size
            // Each element takes a byte at least (a member two): a count cannot promise more.
            guard elements <= UInt64(tag == PackedTag.object ? size / 2 : size) else {
                throw fail("a count (\(elements)) larger than its container's \(size) bytes can hold", start)
            }
            let slot = steps.count
            steps.append(PackedWriter.Step(tag: tag, number: elements))
            var payload = 0
            if tag == PackedTag.array {
                for _ in 0..<Int(elements) { payload += try value(at: &offset, end: payloadEnd, depth: depth + 1) }
            } else {
                payload = try members(Int(elements), at: &offset, end: payloadEnd, depth: depth)
            }
            guard offset == payloadEnd else {
                throw fail("a container's size says \(size) bytes, its values take \(offset - (payloadEnd - size))", start)
            }
            steps[slot].payload = payload
            return 1 + PackedWriter.varintSize(elements) + PackedWriter.varintSize(UInt64(payload)) + payload
        case PackedTag.string:
            let bytesLength = try length(&offset, end: end, what: "a string's length")
            let bytes = UnsafeBufferPointer(start: base + offset, count: bytesLength)
            guard UTF8Check.isValid(bytes) else { throw fail("a string that is not UTF-8", start) }
            steps.append(PackedWriter.Step(tag: tag, number: UInt64(bytesLength), bytes: UnsafeRawPointer(base + offset)))
            offset += bytesLength
            // Sizes as written here (a varint in the file may have been written longer).
            return 1 + PackedWriter.varintSize(UInt64(bytesLength)) + bytesLength
        case PackedTag.integer:
            let zigzag = try varint(&offset, end: end, what: "an integer")
            steps.append(PackedWriter.Step(tag: tag, number: zigzag))
            return 1 + PackedWriter.varintSize(zigzag)
        case PackedTag.real:
            guard end - offset >= 8 else { throw fail("a real runs past the end of its container", start) }
            var bits: UInt64 = 0
            withUnsafeMutableBytes(of: &bits) { $0.copyMemory(from: UnsafeRawBufferPointer(start: base + offset, count: 8)) }
            let real = Double(bitPattern: UInt64(littleEndian: bits))
            guard real.isFinite else { throw fail("a real that is not finite (\(real))", start) }
            steps.append(PackedWriter.Step(tag: tag, number: real.bitPattern))
            offset += 8
            return 9
        case PackedTag.true, PackedTag.false, PackedTag.null:
            steps.append(PackedWriter.Step(tag: tag))
            return 1
        default:
            throw fail("an unknown tag \(tag)", start)
        }
    }

    /// An object's members: inline keys, distinct, each followed by its value.
    private mutating func members(_ count: Int, at offset: inout Int, end: Int, depth: Int) throws(PortablePackedError) -> Int {
        var payload = 0
        // This object's keys so far are the top of `keyStack` from here (a nested object's
        // are pushed above them and popped before its value returns).
        let firstKey = keyStack.count
        defer { keyStack.removeSubrange(firstKey...) }
        var seen = Set<[UInt8]>()
        for _ in 0..<count {
            let start = offset
            let reference = try varint(&offset, end: end, what: "a key")
            guard reference & 1 == 1 else {
                throw fail("a key by reference (\(reference)), which only a process's own values hold", start)
            }
            guard reference >> 1 <= UInt64(end - offset) else { throw fail("a key longer than the bytes left", start) }
            let key = UnsafeBufferPointer(start: base + offset, count: Int(reference >> 1))
            offset += key.count
            guard UTF8Check.isValid(key) else { throw fail("a key that is not UTF-8", start) }
            // Rows have a few members, compared pairwise; a large object goes through a set.
            if count > 16 {
                guard seen.insert(Array(key)).inserted else { throw fail("a key repeated in one object", start) }
            } else {
                for earlier in keyStack[firstKey...] where PackedKeys.equal(earlier, key) {
                    throw fail("a key repeated in one object", start)
                }
                keyStack.append(key)
            }
            let shared = PackedKeys.reference(of: key, cache: &keys)
            steps.append(PackedWriter.Step(tag: PackedWriter.Step.key, number: shared, bytes: UnsafeRawPointer(key.baseAddress)))
            payload += PackedWriter.keySize(shared) + (try value(at: &offset, end: end, depth: depth + 1))
        }
        return payload
    }
}
/// UTF-8 as RFC 3629 has it, which is what jansson accepts: no overlong forms, no
/// surrogates, nothing past U+10FFFF.
enum UTF8Check {
    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            let length: Int
            var lowest: UInt8 = 0x80, highest: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0:
                length = 3
                lowest = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED:
                length = 3
                highest = 0x9F
            case 0xF0:
                length = 4
                lowest = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4:
                length = 4
                highest = 0x8F
            default: return false
            }
            guard count - index >= length else { return false }
            let second = bytes[index + 1]
            guard second >= lowest, second <= highest else { return false }
            for next in (index + 2)..<(index + length) where bytes[next] & 0xC0 != 0x80 { return false }
            index += length
        }
        return true
    }
}
