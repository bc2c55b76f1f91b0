import JSONKit

/// Numbers the distinct values found at a key path, in order of first appearance, as
/// `JSON` equality tells them apart (an integer never equals a real; a missing value is
/// null). A scalar is read in place and found by a hash of its bytes, so numbering a
/// million rows allocates per distinct value, not per row; objects and arrays, rare as
/// section keys, go through a dictionary of values.
struct GroupNumbering {
    let keyPath: JSONKeyPath
    /// The value of each group, in order of first appearance.
    private(set) var values: [JSON] = []
    /// Each scalar group's hash, kind and bytes, to confirm a match.
    private var scalars: [(hash: Int, kind: UInt8, bytes: [UInt8])] = []
    /// Open addressing by the scalar's hash as it is (a `Dictionary` would hash it again):
    /// each slot holds a group of `scalars`, or -1.
    private var slots = [Int](repeating: -1, count: 64)
    private var byValue: [JSON: Int] = [:]

    init(keyPath: JSONKeyPath) { self.keyPath = keyPath }

    /// The group of `object`'s value at the key path, a new one for a value not seen before.
    mutating func group(of object: JSON) -> Int {
        var found: Int?
        object.withScalar(at: keyPath) { scalar in
            let (kind, number): (UInt8, UInt64)
            switch scalar {
            case .container: return
            case .missing, .null: (kind, number) = (0, 0)
            case .boolean(let value): (kind, number) = (1, value ? 1 : 0)
            case .integer(let value): (kind, number) = (2, UInt64(bitPattern: value))
            // -0.0 equals 0.0, as `JSON` equality has it.
            case .real(let value): (kind, number) = (3, (value == 0 ? 0 : value).bitPattern)
            case .string(let bytes):
                found = group(kind: 4, bytes: bytes, object: object)
                return
            }
            found = withUnsafeBytes(of: number) { group(kind: kind, bytes: $0.bindMemory(to: UInt8.self), object: object) }
        }
        if let found { return found }
        let value = object.value(at: keyPath) ?? .null
        if let known = byValue[value] { return known }
        byValue[value] = values.count
        values.append(value)
        scalars.append((hash: 0, kind: Self.container, bytes: []))
        return values.count - 1
    }

    private mutating func group(kind: UInt8, bytes: UnsafeBufferPointer<UInt8>, object: JSON) -> Int {
        var hasher = Hasher()
        hasher.combine(kind)
        hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        let hash = hasher.finalize()
        let mask = slots.count - 1
        var slot = hash & mask
        while slots[slot] >= 0 {
            let group = slots[slot]
            if scalars[group].hash == hash, scalars[group].kind == kind, scalars[group].bytes.elementsEqual(bytes) { return group }
            slot = (slot + 1) & mask
        }
        let group = values.count
        values.append(object.value(at: keyPath) ?? .null)
        scalars.append((hash: hash, kind: kind, bytes: Array(bytes)))
        slots[slot] = group
        if scalars.count * 2 > slots.count { grow() }
        return group
    }

    /// Doubles the slots, at most half of them used.
    private mutating func grow() {
        slots = [Int](repeating: -1, count: slots.count * 2)
        let mask = slots.count - 1
        for (group, scalar) in scalars.enumerated() where scalar.kind != Self.container {
            var slot = scalar.hash & mask
            while slots[slot] >= 0 { slot = (slot + 1) & mask }
            slots[slot] = group
        }
    }

    /// The kind recorded for a group of an object or array (found through `byValue`).
    private static let container: UInt8 = 255
}
