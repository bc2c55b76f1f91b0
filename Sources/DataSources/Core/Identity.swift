import JSONKit

/// How a source tells two objects apart: by the value at `identityKey` when given (objects
/// lacking it fall back to their whole value), else by whole-value equality.
public struct Identity: Sendable {
    public let key: KeyPath?

    public init(key: KeyPath?) { self.key = key }

    /// The value two objects must share to be the same object. Placeholders are compared
    /// whole, so a loading row never matches data.
    public func of(_ object: JSON) -> JSON {
        guard let key, object.isObject, object[Placeholder.key] == nil, let value = object.value(at: key) else { return object }
        return value
    }

    /// The hash of `of(object)`. Sources compute it once per row as the row arrives and
    /// keep it, because reaching into a row's tree costs cache misses that dominate diffs
    /// and indexing of large lists.
    func hash(of object: JSON) -> Int { of(object).hashValue }

    func hashes(of objects: some Collection<JSON>) -> [Int] {
        var result: [Int] = []
        result.reserveCapacity(objects.count)
        for object in objects { result.append(hash(of: object)) }
        return result
    }

    func hashes(of sections: [[JSON]]) -> [[Int]] { sections.map { hashes(of: $0) } }

    /// Whether two objects are the same object. Equal values always are, and rows kept
    /// across an edit are usually the very same tree, so `json_equal` (a pointer comparison
    /// for the same tree) goes first.
    func same(_ left: JSON, _ right: JSON) -> Bool { left == right || of(left) == of(right) }
}

/// Where each object sits, by identity: O(1) `indexPath(for:)`.
///
/// Keyed by the identity hash alone, which costs no reference counting per probe; the row
/// found is then checked for the same identity. A row whose hash is already taken by a row
/// of another identity (a 64-bit collision: in practice never) goes to `collisions`. Rows
/// are named by their position counted across sections, in 32 bits: for a million rows the
/// table is about 25 bytes a row, where index paths would take twice that.
struct IdentityIndex {
    /// Hash → the position of the first row with that hash.
    private var first: [Int: UInt32] = [:]
    private var collisions: [Int: [UInt32]] = [:]
    /// The position of each section's first row.
    private var sectionStarts: [Int] = []

    init(sections: [[JSON]], hashes: [[Int]], identity: Identity) {
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

    private func row(at position: UInt32, in sections: [[JSON]]) -> JSON {
        let path = indexPath(at: position)
        return sections[path.section][path.item]
    }

    /// Indexes a row unless an earlier row has its identity: the first of equal objects
    /// wins, as `indexOf` did in the original.
    private mutating func add(_ object: JSON, hash: Int, at position: Int, sections: [[JSON]], identity: Identity) {
        guard let position = UInt32(exactly: position) else { preconditionFailure("more than 2^32 rows") }
        guard let taken = first[hash] else {
            first[hash] = position
            return
        }
        guard !identity.same(row(at: taken, in: sections), object) else { return }
        let others = collisions[hash] ?? []
        guard !others.contains(where: { identity.same(row(at: $0, in: sections), object) }) else { return }
        collisions[hash] = others + [position]
    }

    func indexPath(of object: JSON, identity: Identity, sections: [[JSON]]) -> IndexPath? {
        let hash = identity.hash(of: object)
        guard let position = first[hash] else { return nil }
        if identity.same(row(at: position, in: sections), object) { return indexPath(at: position) }
        return collisions[hash]?.first { identity.same(row(at: $0, in: sections), object) }.map { indexPath(at: $0) }
    }

    /// Re-indexes a single section whose first `start` objects did not move: only the rows
    /// after them are forgotten and indexed again, so appending a page costs the page.
    /// `sections` is the new layout.
    mutating func reindex(from start: Int, oldHashes: ArraySlice<Int>, new sections: [[JSON]], newHashes: ArraySlice<Int>, identity: Identity) {
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
