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
/// of another identity (a 64-bit collision: in practice never) goes to `collisions`.
struct IdentityIndex {
    /// Hash → the first row with that hash.
    private var first: [Int: IndexPath] = [:]
    private var collisions: [Int: [IndexPath]] = [:]

    init(sections: [[JSON]], hashes: [[Int]], identity: Identity) {
        first.reserveCapacity(sections.reduce(0) { $0 + $1.count })
        for (section, objects) in sections.enumerated() {
            let sectionHashes = hashes[section]
            for (item, object) in objects.enumerated() {
                add(object, hash: sectionHashes[item], at: IndexPath(section: section, item: item), sections: sections, identity: identity)
            }
        }
    }

    /// Indexes a row unless an earlier row has its identity: the first of equal objects
    /// wins, as `indexOf` did in the original.
    private mutating func add(_ object: JSON, hash: Int, at path: IndexPath, sections: [[JSON]], identity: Identity) {
        guard let taken = first[hash] else {
            first[hash] = path
            return
        }
        guard !identity.same(sections[taken.section][taken.item], object) else { return }
        let others = collisions[hash] ?? []
        guard !others.contains(where: { identity.same(sections[$0.section][$0.item], object) }) else { return }
        collisions[hash] = others + [path]
    }

    func indexPath(of object: JSON, identity: Identity, sections: [[JSON]]) -> IndexPath? {
        let hash = identity.hash(of: object)
        guard let path = first[hash] else { return nil }
        if identity.same(sections[path.section][path.item], object) { return path }
        return collisions[hash]?.first { identity.same(sections[$0.section][$0.item], object) }
    }

    /// Re-indexes a single section whose first `start` objects did not move: only the rows
    /// after them are forgotten and indexed again, so appending a page costs the page.
    /// `sections` is the new layout.
    mutating func reindex(from start: Int, oldHashes: ArraySlice<Int>, new sections: [[JSON]], newHashes: ArraySlice<Int>, identity: Identity) {
        // A hash whose first row is at or after `start` has no row before it.
        for hash in oldHashes {
            if let path = first[hash], path.item >= start { first[hash] = nil }
        }
        collisions = collisions.compactMapValues { paths in
            let kept = paths.filter { $0.item < start }
            return kept.isEmpty ? nil : kept
        }
        for (offset, hash) in newHashes.enumerated() {
            let item = start + offset
            add(sections[0][item], hash: hash, at: IndexPath(section: 0, item: item), sections: sections, identity: identity)
        }
    }
}
