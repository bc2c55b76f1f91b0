import JSONKit

/// How a source tells two objects apart: by the value at `identityKey` when given (objects
/// lacking it fall back to their whole value), else by whole-value equality.
public struct Identity: Sendable {
    public let key: JSONKeyPath?

    public init(key: JSONKeyPath?) { self.key = key }

    /// The value two objects must share to be the same object. Placeholders are compared
    /// whole, so a loading row never matches data.
    public func of(_ object: JSON) -> JSON {
        guard let key, object.isObject, object[Placeholder.key] == nil, let value = object.value(at: key) else { return object }
        return value
    }

    /// The hash of `of(object)`. Sources compute it once per row as the row arrives and
    /// keep it, because reaching into a row's tree costs cache misses that dominate diffs
    /// and indexing of large lists.
    func hash(of object: JSON) -> Int {
        var hash: Int?
        withIdentityScalar(of: object) { hash = Self.hash(of: $0) }
        return hash ?? of(object).hashValue
    }

    /// Calls `body` with the object's identity read in place, when it has a key and is a data
    /// object (not a placeholder); a missing value or a container is `of(_:)`'s to handle.
    /// A million rows hashed or compared this way make no value each.
    private func withIdentityScalar(of object: JSON, _ body: (JSON.Scalar) -> Void) {
        guard let key, object.isObject, object[Placeholder.key] == nil else { return }
        object.withScalar(at: key, body)
    }

    /// A hash of a scalar identity, nil for what `JSON.hashValue` hashes (a missing value,
    /// a container). Scalars that `JSON` equality calls equal hash alike (-0.0 and 0.0).
    private static func hash(of scalar: JSON.Scalar) -> Int? {
        var hasher = Hasher()
        switch scalar {
        case .missing, .container: return nil
        case .null: hasher.combine(0 as UInt8)
        case .boolean(let value): hasher.combine(1 as UInt8); hasher.combine(value)
        case .integer(let value): hasher.combine(2 as UInt8); hasher.combine(value)
        case .real(let value): hasher.combine(3 as UInt8); hasher.combine(value == 0 ? 0 : value)
        case .string(let bytes): hasher.combine(4 as UInt8); hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        }
        return hasher.finalize()
    }

    /// Whether two scalar identities are equal as `JSON` equality has it (an integer never
    /// equals a real); nil when either is not a scalar.
    private static func equal(_ left: JSON.Scalar, _ right: JSON.Scalar) -> Bool? {
        switch (left, right) {
        case (.missing, _), (_, .missing), (.container, _), (_, .container): return nil
        case (.null, .null): return true
        case (.boolean(let a), .boolean(let b)): return a == b
        case (.integer(let a), .integer(let b)): return a == b
        case (.real(let a), .real(let b)): return a == b
        case (.string(let a), .string(let b)): return a.elementsEqual(b)
        default: return false
        }
    }

    func hashes(of objects: some Collection<JSON>) -> [Int] {
        var result: [Int] = []
        result.reserveCapacity(objects.count)
        for object in objects { result.append(hash(of: object)) }
        return result
    }

    func hashes(of sections: [RowArray<JSON>]) -> [RowArray<Int>] { sections.map { RowArray(hashes(of: $0)) } }

    /// Whether two objects are the same object. Rows kept across an edit are usually the
    /// very same storage, which is checked first; then, with an identity key, the two
    /// identities (a few bytes), not the whole values: equal values always have equal
    /// identities, so comparing them too would only cost an updated row a second walk.
    func same(_ left: JSON, _ right: JSON) -> Bool {
        if left.isIdentical(to: right) { return true }
        guard key != nil else { return left == right }
        var result: Bool?
        withIdentityScalar(of: left) { leftScalar in
            withIdentityScalar(of: right) { rightScalar in result = Self.equal(leftScalar, rightScalar) }
        }
        return result ?? (of(left) == of(right))
    }
}

/// Objects by identity, for telling whether one like it was already seen (a paginated
/// list dropping a later page's duplicates). Keyed by the identity hash, read in place, so
/// adding a row makes no value of its identity; rows are compared only when hashes meet.
struct IdentitySet {
    let identity: Identity
    private var rowsByHash: [Int: JSON] = [:]
    /// Rows of other identities whose hash was taken (a 64-bit collision: in practice never).
    private var collisions: [Int: [JSON]] = [:]

    init(identity: Identity) { self.identity = identity }

    /// Adds the row's identity; false when one like it is already here.
    mutating func insert(_ row: JSON) -> Bool {
        let hash = identity.hash(of: row)
        guard let first = rowsByHash[hash] else {
            rowsByHash[hash] = row
            return true
        }
        if identity.same(first, row) { return false }
        if collisions[hash]?.contains(where: { identity.same($0, row) }) == true { return false }
        collisions[hash, default: []].append(row)
        return true
    }
}

/// Where each object sits, by identity: O(1) `indexPath(for:)`.
///
/// Keyed by the identity hash alone, which costs no reference counting per probe; the row
/// found is then checked for the same identity. A row whose hash is already taken by a row
/// of another identity (a 64-bit collision: in practice never) goes to `collisions`. Rows
/// are named by their position counted across sections, in 32 bits: for a million rows the
/// table is about 25 bytes a row, where index paths would take twice that.
///
/// A one-section source edited in place (an insertion or removal) keeps its index: the
/// positions stored stay as they were when stored, and a log of the shifts since then
/// turns them into current ones when a lookup reads them. The log is short (a long one, or
/// an edit the index cannot follow cheaply, drops the index, rebuilt at the next lookup),
/// so an edit costs its own rows, not a re-indexing of every row after it.
struct IdentityIndex {
    /// Hash → the position of the first row with that hash, before any shift in `shifts`.
    private var first: [Int: UInt32] = [:]
    private var collisions: [Int: [UInt32]] = [:]
    /// The position of each section's first row.
    private var sectionStarts: [Int] = []
    /// Hashes of more than one row (repeated identities, or collisions): an edit touching
    /// one of them is not followed (which row is "first" would need a search).
    private var repeated: Set<Int> = []
    /// Rows inserted since the index was built: hash → position and the number of shifts
    /// logged before it was stored.
    private var added: [Int: (position: Int, shifts: Int)] = [:]
    /// In order: rows at or after `at` moved by `by`.
    private var shifts: [(at: Int, by: Int)] = []
    /// Beyond this many logged edits, rebuilding is cheaper than reading the log.
    static let longestLog = 1024

    init(sections: [RowArray<JSON>], hashes: [RowArray<Int>], identity: Identity) {
        var start = 0
        for objects in sections {
            sectionStarts.append(start)
            start += objects.count
        }
        first.reserveCapacity(start)
        for (section, objects) in sections.enumerated() {
            let sectionHashes = hashes[section]
            for (item, object) in objects.enumerated() {
                add(object, hash: sectionHashes[item], at: sectionStarts[section] + item, sections: sections, identity: identity)
            }
        }
    }

    private func indexPath(at position: UInt32) -> IndexPath {
        let position = Int(position)
        // The last section starting at or before the position (empty sections share starts).
        var low = 0, high = sectionStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if sectionStarts[middle] <= position { low = middle } else { high = middle - 1 }
        }
        return IndexPath(section: low, item: position - sectionStarts[low])
    }

    private func row(at position: UInt32, in sections: [RowArray<JSON>]) -> JSON {
        let path = indexPath(at: position)
        return sections[path.section][path.item]
    }

    /// Indexes a row unless an earlier row has its identity: the first of equal objects
    /// wins, as `indexOf` did in the original.
    private mutating func add(_ object: JSON, hash: Int, at position: Int, sections: [RowArray<JSON>], identity: Identity) {
        guard let position = UInt32(exactly: position) else { preconditionFailure("more than 2^32 rows") }
        guard let taken = first[hash] else {
            first[hash] = position
            return
        }
        repeated.insert(hash)
        guard !identity.same(row(at: taken, in: sections), object) else { return }
        let others = collisions[hash] ?? []
        guard !others.contains(where: { identity.same(row(at: $0, in: sections), object) }) else { return }
        collisions[hash] = others + [position]
    }

    func indexPath(of object: JSON, identity: Identity, sections: [RowArray<JSON>]) -> IndexPath? {
        let hash = identity.hash(of: object)
        guard let position = currentPosition(of: hash) else { return nil }
        if identity.same(row(at: position, in: sections), object) { return indexPath(at: position) }
        return collisions[hash]?.first { identity.same(row(at: $0, in: sections), object) }.map { indexPath(at: $0) }
    }

    /// Where the first row with `hash` is now, after the shifts logged since it was stored.
    private func currentPosition(of hash: Int) -> UInt32? {
        var position: Int, from: Int
        if let recent = added[hash] {
            (position, from) = recent
        } else if let stored = first[hash] {
            (position, from) = (Int(stored), 0)
        } else {
            return nil
        }
        for shift in shifts[from...] where position >= shift.at { position += shift.by }
        return UInt32(position)
    }

    /// Follows rows inserted at `start` of a one-section source (`sections` is the new
    /// layout); false when it cannot, and the index must be dropped.
    mutating func inserted(_ hashes: [Int], at start: Int, sections: [RowArray<JSON>]) -> Bool {
        guard sectionStarts == [0], collisions.isEmpty, shifts.count < Self.longestLog, added.count + hashes.count <= 1 << 16 else { return false }
        // A repeated identity (or a collision) would need comparing which row is first.
        var seen = Set<Int>()
        for hash in hashes {
            guard first[hash] == nil, added[hash] == nil, seen.insert(hash).inserted else { return false }
        }
        shifts.append((start, hashes.count))
        for (offset, hash) in hashes.enumerated() { added[hash] = (start + offset, shifts.count) }
        return true
    }

    /// Follows the removal of rows `start..<start + hashes.count` (their hashes given) from a
    /// one-section source; false when it cannot, and the index must be dropped.
    mutating func removed(_ hashes: ArraySlice<Int>, at start: Int) -> Bool {
        guard sectionStarts == [0], collisions.isEmpty, shifts.count < Self.longestLog else { return false }
        guard !hashes.contains(where: repeated.contains) else { return false }
        for hash in hashes {
            if added.removeValue(forKey: hash) == nil { first[hash] = nil }
        }
        shifts.append((start + hashes.count, -hashes.count))
        return true
    }

    /// Whether positions have been shifted since the index was built.
    var isShifted: Bool { !shifts.isEmpty }

    /// Re-indexes a single section whose first `start` objects did not move: only the rows
    /// after them are forgotten and indexed again, so appending a page costs the page.
    /// `sections` is the new layout.
    mutating func reindex(from start: Int, oldHashes: some Collection<Int>, new sections: [RowArray<JSON>], newHashes: some Collection<Int>, identity: Identity) {
        // A hash whose first row is at or after `start` has no row before it.
        for hash in oldHashes {
            if let position = first[hash], position >= start { first[hash] = nil }
        }
        collisions = collisions.compactMapValues { positions in
            let kept = positions.filter { $0 < start }
            return kept.isEmpty ? nil : kept
        }
        sectionStarts = [0]
        for (offset, hash) in newHashes.enumerated() {
            add(sections[0][start + offset], hash: hash, at: start + offset, sections: sections, identity: identity)
        }
    }
}
