import JSONKit

/// `{keyPath, ascending}`: one key of a stable sort, as `NSSortDescriptor` was.
package struct SortDescriptor: Sendable {
    package let keyPath: JSONKeyPath
    package let ascending: Bool

    package init(keyPath: JSONKeyPath, ascending: Bool) {
        self.keyPath = keyPath
        self.ascending = ascending
    }

    /// Sorts stably: objects with equal keys keep their order.
    static func sorted(_ objects: [JSON], by descriptors: [SortDescriptor]) -> [JSON] {
        guard !descriptors.isEmpty else { return objects }
        var keys = SortKeys(descriptors)
        for object in objects { keys.append(object) }
        return keys.sortedOrder().map { objects[$0] }
    }
}

/// The sort keys of a list of objects, read once each (not once per comparison: reaching
/// into a tree is what costs), then the stable order they give.
///
/// The order, total across kinds: missing and null first, then booleans (false before
/// true), numbers (by value; an integer and a real compare as doubles), strings (by Unicode
/// code points, which is the order of their UTF-8 bytes), arrays, then objects (the last
/// two by their compact encoding with sorted keys: arbitrary but fixed). A descending
/// descriptor reverses all of it, missing values included.
struct SortKeys {
    let descriptors: [SortDescriptor]
    /// Row-major: the keys of object `i` are at `i * descriptors.count ..< (i + 1) * descriptors.count`.
    private var keys: [SortKey] = []
    /// The bytes of every string, array and object key, back to back.
    private var bytes: [UInt8] = []
    private(set) var count = 0

    init(_ descriptors: [SortDescriptor]) { self.descriptors = descriptors }

    mutating func append(_ object: JSON) {
        for descriptor in descriptors {
            // Scalars are read in place; objects and arrays need their encoding.
            var scalarKey: SortKey?
            object.withScalar(at: descriptor.keyPath) { scalar in
                switch scalar {
                case .missing, .null: scalarKey = SortKey(rank: .null)
                case .boolean(let value): scalarKey = SortKey(rank: .boolean, bits: value ? 1 : 0)
                case .integer(let value): scalarKey = SortKey(rank: .number, bits: UInt64(bitPattern: value))
                case .real(let value): scalarKey = SortKey(rank: .number, isReal: true, bits: value.bitPattern)
                case .string(let bytes): scalarKey = byteKey(.string, bytes)
                case .container: break
                }
            }
            keys.append(scalarKey ?? key(object.value(at: descriptor.keyPath)))
        }
        count += 1
    }

    private mutating func key(_ value: JSON?) -> SortKey {
        guard let value else { return SortKey(rank: .null) }
        switch value.kind {
        case .null: return SortKey(rank: .null)
        case .boolean: return SortKey(rank: .boolean, bits: value.boolValue! ? 1 : 0)
        case .integer: return SortKey(rank: .number, bits: UInt64(bitPattern: Int64(value.integerValue!)))
        case .real: return SortKey(rank: .number, isReal: true, bits: value.doubleValue!.bitPattern)
        case .string: return byteKey(.string, Array(value.stringValue!.utf8))
        case .array: return byteKey(.array, value.encoded(format: .sortedKeys))
        case .object: return byteKey(.object, value.encoded(format: .sortedKeys))
        }
    }

    private mutating func byteKey<Text: RandomAccessCollection>(_ rank: SortKey.Rank, _ text: Text) -> SortKey
    where Text.Element == UInt8, Text.Index == Int {
        // The first eight bytes, big-endian, decide most comparisons without a memory
        // access; zero padding orders a prefix before its extensions, as it should.
        var prefix: UInt64 = 0
        for index in 0..<8 { prefix = prefix << 8 | UInt64(index < text.count ? text[index] : 0) }
        let key = SortKey(rank: rank, bits: prefix, start: bytes.count, length: text.count)
        bytes.append(contentsOf: text)
        return key
    }

    /// -1, 0 or 1: how object `item` orders against object `otherItem` of `other` (keys
    /// read with the same descriptors), descending descriptors reversed; 0 for ties.
    func compare(_ item: Int, with other: SortKeys, _ otherItem: Int) -> Int {
        let width = descriptors.count
        return bytes.withUnsafeBufferPointer { bytes in
            other.bytes.withUnsafeBufferPointer { otherBytes in
                for position in 0..<width {
                    let result = keys[item * width + position].compare(
                        to: other.keys[otherItem * width + position], bytes: bytes, otherBytes: otherBytes)
                    if result != 0 { return descriptors[position].ascending ? result : -result }
                }
                return 0
            }
        }
    }

    /// The positions of the appended objects in sorted order; ties keep appending order.
    ///
    /// What is sorted is a record per object holding its first key's leading bits (see
    /// `SortKey.prefix`) and its position, not positions that reach into the keys: most
    /// comparisons are then decided by two integers already in the records being moved, and
    /// the sort walks memory in order instead of missing the cache on every comparison of a
    /// million keys. Records whose prefixes tie compare their whole keys.
    func sortedOrder() -> [Int] {
        guard !descriptors.isEmpty else { return Array(0..<count) }
        let width = descriptors.count
        let ascending = descriptors.map(\.ascending)
        var records: [SortRecord] = []
        records.reserveCapacity(count)
        bytes.withUnsafeBufferPointer { bytes in
            for item in 0..<count {
                let (major, minor) = keys[item * width].prefix(bytes: bytes)
                records.append(
                    ascending[0]
                        ? SortRecord(major: major, minor: minor, item: item)
                        : SortRecord(major: ~major, minor: ~minor, item: item))
            }
        }
        keys.withUnsafeBufferPointer { keys in
            bytes.withUnsafeBufferPointer { bytes in
                records.sort { left, right in
                    if left.major != right.major { return left.major < right.major }
                    if left.minor != right.minor { return left.minor < right.minor }
                    for position in 0..<width {
                        let result = keys[left.item * width + position].compare(
                            to: keys[right.item * width + position], bytes: bytes, otherBytes: bytes)
                        if result != 0 { return ascending[position] ? result < 0 : result > 0 }
                    }
                    return left.item < right.item
                }
            }
        }
        return records.map(\.item)
    }
}

/// An object's place in `SortKeys.sortedOrder()`: its first key's prefix, then its position.
private struct SortRecord {
    var major: UInt64
    var minor: UInt64
    var item: Int
}

/// One value reduced to what ordering needs, in a few machine words.
struct SortKey {
    enum Rank: UInt8 { case null, boolean, number, string, array, object }

    var rank: Rank
    var isReal = false
    /// A boolean as 0 or 1, an integer's or a real's bits, or the first eight bytes of a
    /// string or encoding.
    var bits: UInt64 = 0
    /// Where the whole string or encoding lies in the shared bytes.
    var start = 0
    var length = 0

    /// 128 bits whose order never contradicts `compare`: when two prefixes differ they
    /// order the keys as `compare` does, and when they are equal `compare` decides. The rank
    /// fills the top byte; then a number's value as an order-preserving double (an integer
    /// converted, which can only make distinct integers tie), or the first 15 bytes of a
    /// string or encoding (zero padding orders a prefix before its extensions).
    func prefix(bytes: UnsafeBufferPointer<UInt8>) -> (major: UInt64, minor: UInt64) {
        let top = UInt64(rank.rawValue) << 56
        switch rank {
        case .null:
            return (top, 0)
        case .boolean:
            return (top | bits, 0)
        case .number:
            var value = isReal ? Double(bitPattern: bits) : Double(Int64(bitPattern: bits))
            if value == 0 { value = 0 }  // -0.0 and 0.0 are equal to `compare`
            let raw = value.bitPattern
            let ordered = raw >> 63 == 1 ? ~raw : raw | 1 << 63
            return (top | ordered >> 8, ordered << 56)
        case .string, .array, .object:
            // `bits` is bytes 0..<8; the major word takes 7 of them, the minor the next 8.
            var minor: UInt64 = 0
            for index in 8..<15 { minor = minor << 8 | UInt64(index < length ? bytes[start + index] : 0) }
            return (top | bits >> 8, (bits & 0xFF) << 56 | minor)
        }
    }

    /// -1, 0 or 1; `bytes` holds this key's string or encoding, `otherBytes` the other's.
    func compare(to other: SortKey, bytes: UnsafeBufferPointer<UInt8>, otherBytes: UnsafeBufferPointer<UInt8>) -> Int {
        guard rank == other.rank else { return rank.rawValue < other.rank.rawValue ? -1 : 1 }
        switch rank {
        case .null:
            return 0
        case .boolean:
            return Self.compare(bits, other.bits)
        case .number:
            switch (isReal, other.isReal) {
            case (false, false): return Self.compare(Int64(bitPattern: bits), Int64(bitPattern: other.bits))
            case (false, true): return Self.compare(Double(Int64(bitPattern: bits)), Double(bitPattern: other.bits))
            case (true, false): return Self.compare(Double(bitPattern: bits), Double(Int64(bitPattern: other.bits)))
            case (true, true): return Self.compare(Double(bitPattern: bits), Double(bitPattern: other.bits))
            }
        case .string, .array, .object:
            if bits != other.bits { return bits < other.bits ? -1 : 1 }
            let shorter = min(length, other.length)
            var index = min(8, shorter)
            while index < shorter {
                let a = bytes[start + index], b = otherBytes[other.start + index]
                if a != b { return a < b ? -1 : 1 }
                index += 1
            }
            return Self.compare(length, other.length)
        }
    }

    private static func compare<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a == b ? 0 : 1) }
}
