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
    /// Each scalar group's kind and bytes, to confirm a hash match.
    private var scalars: [(kind: UInt8, bytes: [UInt8])] = []
    /// Hash of a scalar → the groups with that hash (one, but for a collision).
    private var byHash: [Int: [Int]] = [:]
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
        scalars.append((kind: 255, bytes: []))
        return values.count - 1
    }

    private mutating func group(kind: UInt8, bytes: UnsafeBufferPointer<UInt8>, object: JSON) -> Int {
        var hasher = Hasher()
        hasher.combine(kind)
        hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        let hash = hasher.finalize()
        if let candidates = byHash[hash] {
            for group in candidates where scalars[group].kind == kind && scalars[group].bytes.elementsEqual(bytes) { return group }
        }
        byHash[hash, default: []].append(values.count)
        values.append(object.value(at: keyPath) ?? .null)
        scalars.append((kind: kind, bytes: Array(bytes)))
        return values.count - 1
    }
}
