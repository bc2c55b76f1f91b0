import JSONKit

/// How a source's rows changed, in the terms a list view applies them:
/// - `deletedSections` and `deleted` in the **old** coordinates (every object that left,
///   including those of deleted sections);
/// - `insertedSections` and `inserted` in the **new** coordinates (every object that arrived);
/// - `moved`: objects kept whose place changed relative to the other kept objects, old → new;
/// - `updated`: objects kept (same identity) whose value changed, in the **new** coordinates.
///
/// Applying it: remove `deleted` and the `from` of `moved` from the old rows; the objects
/// left keep their relative order and, with `inserted` and the `to` of `moved` filled in,
/// form the new rows.
public struct ChangeSet: Sendable, Equatable {
    public var deletedSections: [Int] = []
    public var insertedSections: [Int] = []
    public var deleted: [IndexPath] = []
    public var inserted: [IndexPath] = []
    public var moved: [Move] = []
    public var updated: [IndexPath] = []

    public struct Move: Sendable, Equatable {
        public var from: IndexPath
        public var to: IndexPath
    }

    public init() {}

    public var isEmpty: Bool {
        deletedSections.isEmpty && insertedSections.isEmpty && deleted.isEmpty && inserted.isEmpty && moved.isEmpty && updated.isEmpty
    }

    public var json: JSON {
        [
            "deletedSections": .array(deletedSections.map { JSON($0) }),
            "insertedSections": .array(insertedSections.map { JSON($0) }),
            "deleted": .array(deleted.map(\.json)),
            "inserted": .array(inserted.map(\.json)),
            "moved": .array(moved.map { ["from": $0.from.json, "to": $0.to.json] }),
            "updated": .array(updated.map(\.json)),
        ]
    }

    /// The changes from `old` to `new`. Sections are matched by their identities, objects
    /// by `identity`. Linear in the number of objects when the kept objects stay in order
    /// (the usual edit); when they were reordered, the fewest moves are found in
    /// O(k log k) for the k kept objects.
    public static func between(old: Layout, new: Layout, identity: Identity) -> ChangeSet {
        var changes = ChangeSet()
        var newSectionOfIdentity: [JSON: Int] = [:]
        for (index, key) in new.sectionIdentities.enumerated() where newSectionOfIdentity[key] == nil {
            newSectionOfIdentity[key] = index
        }
        var oldSectionKept = [Bool](repeating: false, count: old.sections.count)
        for (index, key) in old.sectionIdentities.enumerated() {
            if let match = newSectionOfIdentity[key], match >= 0 {
                oldSectionKept[index] = true
                newSectionOfIdentity[key] = -1 - match  // matched: later duplicates are new sections
            } else {
                changes.deletedSections.append(index)
            }
        }
        var newSectionMatched = [Bool](repeating: false, count: new.sections.count)
        for (key, value) in newSectionOfIdentity where value < 0 { _ = key; newSectionMatched[-1 - value] = true }
        changes.insertedSections = new.sections.indices.filter { !newSectionMatched[$0] }

        // Old positions of each identity, in order, so duplicates pair up first to first.
        var oldPositions: [JSON: [IndexPath]] = [:]
        oldPositions.reserveCapacity(old.count)
        for (section, objects) in old.sections.enumerated() {
            for (item, object) in objects.enumerated() {
                oldPositions[identity.of(object), default: []].append(IndexPath(section: section, item: item))
            }
        }
        var kept: [(old: IndexPath, new: IndexPath)] = []
        kept.reserveCapacity(min(old.count, new.count))
        for (section, objects) in new.sections.enumerated() {
            for (item, object) in objects.enumerated() {
                let key = identity.of(object)
                let here = IndexPath(section: section, item: item)
                guard var queue = oldPositions[key], !queue.isEmpty else {
                    changes.inserted.append(here)
                    continue
                }
                let from = queue.removeFirst()
                oldPositions[key] = queue
                kept.append((from, here))
                if old.sections[from.section][from.item] != object { changes.updated.append(here) }
            }
        }
        for queue in oldPositions.values { changes.deleted.append(contentsOf: queue) }
        changes.deleted.sort()

        // Kept objects whose old order is not increasing in new order are moves; keep the
        // longest increasing run in place.
        let steady = longestIncreasingSubsequence(kept.map(\.old))
        for (index, pair) in kept.enumerated() where !steady.contains(index) {
            changes.moved.append(Move(from: pair.old, to: pair.new))
        }
        return changes
    }

    /// The same changes with every item index moved `offset` places down (section 0 only):
    /// for a diff of the rows after an unchanged head.
    func shifted(by offset: Int) -> ChangeSet {
        guard offset != 0 else { return self }
        func shift(_ path: IndexPath) -> IndexPath { IndexPath(section: path.section, item: path.item + offset) }
        var result = self
        result.deleted = deleted.map(shift)
        result.inserted = inserted.map(shift)
        result.moved = moved.map { Move(from: shift($0.from), to: shift($0.to)) }
        result.updated = updated.map(shift)
        return result
    }

    /// Indexes of a longest strictly increasing subsequence (patience sorting), with a
    /// linear fast path for an already increasing sequence.
    static func longestIncreasingSubsequence(_ values: [IndexPath]) -> IndexSet {
        if zip(values, values.dropFirst()).allSatisfy({ $0 < $1 }) { return IndexSet(all: values.count) }
        var tails: [Int] = []
        var previous = [Int](repeating: -1, count: values.count)
        for (index, value) in values.enumerated() {
            var low = 0, high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var result = IndexSet()
        var cursor = tails.last ?? -1
        while cursor >= 0 {
            result.insert(cursor)
            cursor = previous[cursor]
        }
        return result
    }
}

/// A set of small non-negative integers, as a bit vector.
struct IndexSet {
    private var bits: [Bool] = []
    private var all = false

    init() {}
    init(all count: Int) { all = true }

    mutating func insert(_ index: Int) {
        if index >= bits.count { bits.append(contentsOf: repeatElement(false, count: index - bits.count + 1)) }
        bits[index] = true
    }

    func contains(_ index: Int) -> Bool { all || (index < bits.count && bits[index]) }
}

/// A source's rows, section titles and the identity of each section, as one value to diff.
public struct Layout: Sendable {
    public var sections: [[JSON]]
    public var titles: [JSON]
    /// What makes a section the same section across changes: its title for sectioned
    /// sources, its child (and the child's section) for multi sources.
    public var sectionIdentities: [JSON]

    public init(sections: [[JSON]], titles: [JSON], sectionIdentities: [JSON]? = nil) {
        self.sections = sections
        self.titles = titles
        self.sectionIdentities = sectionIdentities ?? titles
    }

    public static let empty = Layout(sections: [], titles: [])

    var count: Int { sections.reduce(0) { $0 + $1.count } }
}
