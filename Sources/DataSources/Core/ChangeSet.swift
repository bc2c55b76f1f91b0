import Basics
import JSONKit

/// How a source's rows changed, in the terms a list view applies them in one batch:
/// - `deletedSections`, `deleted`: in the **old** coordinates; `deleted` lists every object
///   that left, including those of deleted sections.
/// - `insertedSections`, `inserted`: in the **new** coordinates, every object that arrived,
///   including those of inserted sections.
/// - `moved`: objects kept (same identity) that changed section, or whose order relative to
///   the other kept objects of their section changed, old → new; the fewest such moves.
/// - `updated`: objects kept whose value changed, in the **new** coordinates (an object may
///   be both moved and updated).
///
/// Applying it: the old sections not deleted are, in order, the new sections not inserted.
/// In each of them, the old rows neither deleted nor moved away are, in order, the new rows
/// neither inserted nor moved in. Sections are matched by identity (a sectioned source's
/// title, a multi source's child and child section); a matched section whose order changed
/// relative to the others is deleted and inserted, since a change set has no section moves.
package struct ChangeSet: Sendable, Equatable {
    package var deletedSections: [Int] = []
    package var insertedSections: [Int] = []
    package var deleted = IndexPathList()
    package var inserted = IndexPathList()
    package var moved: [Move] = []
    package var updated = IndexPathList()

    package struct Move: Sendable, Equatable {
        package var from: IndexPath
        package var to: IndexPath
    }

    package init() {}

    package var isEmpty: Bool {
        deletedSections.isEmpty && insertedSections.isEmpty && deleted.isEmpty && inserted.isEmpty && moved.isEmpty && updated.isEmpty
    }

    /// The changes from `old` to `new`, matching objects by `identity`; duplicates pair up
    /// first to first. Linear in the number of objects when the kept objects stay in order
    /// (the usual edit); when they were reordered, the fewest moves are found in
    /// O(k log k) for the k kept objects.
    package static func between(old: Layout, new: Layout, identity: Identity) -> ChangeSet {
        between(
            old: old, oldHashes: identity.hashes(of: old.sections), new: new, newHashes: identity.hashes(of: new.sections),
            identity: identity)
    }

    /// The same, with every row's identity hash given (sources keep them, see `Identity.hash(of:)`).
    /// `keptHead`: a number of leading rows the caller knows are the same on both sides (rows
    /// appended after them, say), which need no comparing.
    static func between(
        old: Layout, oldHashes: [RowArray<Int>], new: Layout, newHashes: [RowArray<Int>], identity: Identity, keptHead: Int = 0
    ) -> ChangeSet {
        var changes = ChangeSet()
        let sectionMap = matchSections(old: old, new: new, into: &changes)
        if old.count == 0 {
            // Every row arrived (a source's first rows): no row to match.
            for (section, rows) in new.sections.enumerated() { changes.inserted.append(section: section, items: 0..<rows.count) }
            return changes
        }
        let old = FlatRows(old.sections, oldHashes), new = FlatRows(new.sections, newHashes)
        /// Whether a kept row can stay where it is: in the section that its section became.
        func staysInSection(_ from: IndexPath, _ to: IndexPath) -> Bool { sectionMap[from.section] == to.section }

        // Rows equal in value and staying in their section at the start and at the end, in
        // row order across sections, are kept in place: only the rows between them are
        // matched, so an edit to a long list costs the edit plus one pass of pointer
        // comparisons (equal rows are usually the same tree). Rows kept in place produce
        // no entries.
        let shorter = min(old.count, new.count)
        var head = min(keptHead, shorter), tail = 0
        if shorter > head {
            var oldPath = old.path(head), newPath = new.path(head)
            while head < shorter, staysInSection(oldPath, newPath), old.rows[oldPath] == new.rows[newPath] {
                head += 1
                oldPath = old.next(after: oldPath)
                newPath = new.next(after: newPath)
            }
            oldPath = old.path(old.count - 1)
            newPath = new.path(new.count - 1)
            while tail < shorter - head, staysInSection(oldPath, newPath), old.rows[oldPath] == new.rows[newPath] {
                tail += 1
                oldPath = old.previous(before: oldPath)
                newPath = new.previous(before: newPath)
            }
        }
        let oldEnd = old.count - tail, newEnd = new.count - tail

        let oldPaths = old.paths(from: head, to: oldEnd)
        // Rows are matched by hash alone first, touching no row, and every pair is then
        // checked (on all cores, from `Parallel.threshold` pairs up): equal values, or (with
        // an identity key) the same identity, which makes the pair updated. The matching that
        // checks each candidate as it goes pairs the same rows whenever every first candidate
        // passes, so it runs only when one does not (hashes that collide): the match is then
        // made twice.
        var match = RowMatch(old: old, oldPaths: oldPaths, new: new, from: head, to: newEnd, checking: nil)
        let verdicts = Parallel.map(match.kept) { pair in
            RowMatch.verdict(old.rows[oldPaths[pair.oldRow]], new.rows[pair.to], identity: identity)
        }
        if verdicts.contains(.different) {
            match = RowMatch(old: old, oldPaths: oldPaths, new: new, from: head, to: newEnd, checking: identity)
        } else {
            for (pair, verdict) in zip(match.kept, verdicts) where verdict == .updated { match.updated.append(pair.to) }
        }
        changes.inserted = match.inserted
        changes.updated = match.updated
        let kept = match.kept, oldKept = match.oldKept
        for row in oldPaths.indices where !oldKept[row] { changes.deleted.append(oldPaths[row]) }

        // A kept row that changed section moves. Of those staying in their section, the
        // longest run whose old order increases in new order stays in place (sections keep
        // their order, so runs of different sections never conflict); the others move.
        var candidates: [Int] = [], candidateRows: [Int] = []
        for (index, pair) in kept.enumerated() where staysInSection(oldPaths[pair.oldRow], pair.to) {
            candidates.append(index)
            candidateRows.append(pair.oldRow)
        }
        var inPlace = [Bool](repeating: false, count: kept.count)
        let steady = longestIncreasingSubsequence(candidateRows)
        for (position, index) in candidates.enumerated() where steady.contains(position) { inPlace[index] = true }
        for (index, pair) in kept.enumerated() where !inPlace[index] {
            changes.moved.append(Move(from: oldPaths[pair.oldRow], to: pair.to))
        }
        return changes
    }

    /// Matches sections by identity, a repeated identity first to first; of the matched
    /// ones, the longest run in the same relative order is kept and the rest are deleted and
    /// inserted. Returns, for each old section, the new section it became, or -1.
    private static func matchSections(old: Layout, new: Layout, into changes: inout ChangeSet) -> [Int] {
        var sectionMap = [Int](repeating: -1, count: old.sections.count)
        if old.sectionIdentities == new.sectionIdentities {
            for index in sectionMap.indices { sectionMap[index] = index }
            return sectionMap
        }
        var unmatchedNew: [JSON: [Int]] = [:]
        for (index, key) in new.sectionIdentities.enumerated().reversed() { unmatchedNew[key, default: []].append(index) }
        var matchedOld: [Int] = [], matchedNew: [Int] = []
        for (index, key) in old.sectionIdentities.enumerated() {
            if let match = unmatchedNew[key]?.popLast() {
                matchedOld.append(index)
                matchedNew.append(match)
            }
        }
        let steady = longestIncreasingSubsequence(matchedNew)
        for position in matchedOld.indices where steady.contains(position) { sectionMap[matchedOld[position]] = matchedNew[position] }
        var newKept = [Bool](repeating: false, count: new.sections.count)
        for target in sectionMap where target >= 0 { newKept[target] = true }
        changes.deletedSections = sectionMap.indices.filter { sectionMap[$0] < 0 }
        changes.insertedSections = newKept.indices.filter { !newKept[$0] }
        return sectionMap
    }

    /// Indexes of a longest strictly increasing subsequence (patience sorting), with a
    /// linear fast path for an already increasing sequence.
    static func longestIncreasingSubsequence(_ values: [Int]) -> PositionSet {
        if zip(values, values.dropFirst()).allSatisfy({ $0 < $1 }) { return PositionSet(all: values.count) }
        // tails[k]: the index ending the best increasing run of length k + 1 found so far;
        // tailValues[k] its value, side by side so that the search reads one array.
        var tails: [Int] = [], tailValues: [Int] = []
        var previous = [Int](repeating: -1, count: values.count)
        for (index, value) in values.enumerated() {
            var low = 0, high = tails.count
            if let last = tailValues.last, last < value {
                // Extends the longest run: most rows of a list with a few moves.
                low = high
            } else {
                while low < high {
                    let middle = (low + high) / 2
                    if tailValues[middle] < value { low = middle + 1 } else { high = middle }
                }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count {
                tails.append(index)
                tailValues.append(value)
            } else {
                tails[low] = index
                tailValues[low] = value
            }
        }
        var result = PositionSet()
        var cursor = tails.last ?? -1
        while cursor >= 0 {
            result.insert(cursor)
            cursor = previous[cursor]
        }
        return result
    }
}

/// New rows paired with old rows of the same identity hash, first to first.
private struct RowMatch {
    /// Each kept row: its old row (counted from the match's start) and its new path.
    var kept: [(oldRow: Int, to: IndexPath)] = []
    var oldKept: [Bool]
    var inserted = IndexPathList()
    var updated = IndexPathList()

    enum Verdict: Sendable { case equal, updated, different }

    /// The old rows of each identity hash as a chain in row order, so that duplicates pair
    /// up first to first in constant time each: `heads[hash]` is the first unmatched old
    /// row (or -1) and `next[row]` the one after it. Keyed by the hash alone (an Int key
    /// needs no reference counting); a chain may hold rows of other identities whose hash
    /// collides. With `checking`, a new row takes the first row of its chain that is the
    /// same object (an equal value always is, and is not updated, so one comparison settles
    /// most kept rows); without, the first row of its chain, to be checked by the caller.
    init(old: FlatRows, oldPaths: [IndexPath], new: FlatRows, from head: Int, to newEnd: Int, checking identity: Identity?) {
        var next = [Int](repeating: -1, count: oldPaths.count)
        var heads = ChainHeads(capacity: oldPaths.count)
        for row in oldPaths.indices.reversed() {
            let path = oldPaths[row]
            if let following = heads.updateValue(row, forKey: old.hashes[path.section][path.item]) { next[row] = following }
        }
        oldKept = [Bool](repeating: false, count: oldPaths.count)
        new.forEachRow(from: head) { flat, here, object, hash in
            guard flat < newEnd else { return false }
            guard let position = heads.slot(forKey: hash) else {
                inserted.append(here)
                return true
            }
            var previous = -1, row = heads[slot: position], updated = false
            if let identity {
                while row >= 0 {
                    let verdict = Self.verdict(old.rows[oldPaths[row]], object, identity: identity)
                    if verdict != .different {
                        updated = verdict == .updated
                        break
                    }
                    previous = row
                    row = next[row]
                }
            }
            guard row >= 0 else {
                inserted.append(here)
                return true
            }
            // Unlink the matched row, so that chains hold unmatched rows only.
            if previous < 0 { heads[slot: position] = next[row] } else { next[previous] = next[row] }
            oldKept[row] = true
            kept.append((row, here))
            if updated { self.updated.append(here) }
            return true
        }
    }

    /// Whether an old and a new row are the same object, and if so whether it changed.
    static func verdict(_ old: JSON, _ new: JSON, identity: Identity) -> Verdict {
        if old == new { return .equal }
        return identity.key != nil && identity.same(old, new) ? .updated : .different
    }
}

/// Identity hash → the first row of its chain: an open-addressed table that uses the hash
/// as it is (identity hashes are already well mixed), so a probe costs one array read, not
/// a rehash of the key as `Dictionary` does.
private struct ChainHeads {
    private struct Slot {
        var key = 0
        /// The first row of the chain, or -1 when all its rows were matched.
        var value: Int32 = -1
        var isOccupied = false
    }

    /// Key, value and occupancy side by side in 16 bytes: a probe touches one cache line.
    private var slots: [Slot]
    private let mask: Int

    /// At most two-thirds full: short probes, and a table a third the size of one twice
    /// the rows (the table is written at random, a cache miss a row).
    init(capacity: Int) {
        precondition(capacity < Int(Int32.max), "more rows than a change set numbers")
        var size = 16
        while size * 2 < capacity * 3 { size <<= 1 }
        slots = [Slot](repeating: Slot(), count: size)
        mask = size - 1
    }

    /// The slot holding `key`, or nil.
    func slot(forKey key: Int) -> Int? {
        var slot = key & mask
        while slots[slot].isOccupied {
            if slots[slot].key == key { return slot }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// Sets the value of `key`, returning the one it replaces.
    mutating func updateValue(_ value: Int, forKey key: Int) -> Int? {
        var slot = key & mask
        while slots[slot].isOccupied {
            if slots[slot].key == key {
                defer { slots[slot].value = Int32(value) }
                return Int(slots[slot].value)
            }
            slot = (slot + 1) & mask
        }
        slots[slot] = Slot(key: key, value: Int32(value), isOccupied: true)
        return nil
    }

    /// The value in a slot `slot(forKey:)` returned.
    subscript(slot slot: Int) -> Int {
        get { Int(slots[slot].value) }
        set { slots[slot].value = Int32(newValue) }
    }
}

/// A layout's rows numbered in order across sections ("flat" numbers).
private struct FlatRows: Sendable {
    let rows: [RowArray<JSON>]
    let hashes: [RowArray<Int>]
    /// `starts[s]`: the flat number of section `s`'s first row.
    let starts: [Int]
    let count: Int

    init(_ rows: [RowArray<JSON>], _ hashes: [RowArray<Int>]) {
        self.rows = rows
        self.hashes = hashes
        var starts: [Int] = [], count = 0
        starts.reserveCapacity(rows.count)
        for section in rows {
            starts.append(count)
            count += section.count
        }
        self.starts = starts
        self.count = count
    }

    /// The path of a flat number below `count`.
    func path(_ flat: Int) -> IndexPath { IndexPath(flat: flat, sectionStarts: starts) }

    /// The paths of flat numbers `start..<end`.
    func paths(from start: Int, to end: Int) -> [IndexPath] {
        var paths: [IndexPath] = []
        paths.reserveCapacity(end - start)
        forEachRow(from: start) { flat, path, _, _ in
            guard flat < end else { return false }
            paths.append(path)
            return true
        }
        return paths
    }

    /// The row after `path`, past empty sections; past the end after the last row.
    func next(after path: IndexPath) -> IndexPath {
        var path = IndexPath(section: path.section, item: path.item + 1)
        while path.section < rows.count, path.item >= rows[path.section].count { path = IndexPath(section: path.section + 1, item: 0) }
        return path
    }

    /// The row before `path`, past empty sections; meaningless before the first row.
    func previous(before path: IndexPath) -> IndexPath {
        var path = IndexPath(section: path.section, item: path.item - 1)
        while path.item < 0, path.section > 0 { path = IndexPath(section: path.section - 1, item: rows[path.section - 1].count - 1) }
        return path
    }

    /// Calls `body` for each row from `flat` on, in order, until it returns false.
    func forEachRow(from flat: Int, _ body: (_ flat: Int, _ path: IndexPath, _ object: JSON, _ hash: Int) -> Bool) {
        guard flat < count else { return }
        var path = self.path(flat), flat = flat
        while path.section < rows.count {
            let section = rows[path.section], sectionHashes = hashes[path.section]
            while path.item < section.count {
                guard body(flat, path, section[path.item], sectionHashes[path.item]) else { return }
                path.item += 1
                flat += 1
            }
            path = IndexPath(section: path.section + 1, item: 0)
        }
    }
}

private extension Array where Element == RowArray<JSON> {
    subscript(path: IndexPath) -> JSON { self[path.section][path.item] }
}

/// A set of positions in a sequence (small non-negative integers), as a bit vector; or
/// every position below a count, without storing them.
struct PositionSet {
    private var bits: [Bool] = []
    /// When set, the set is exactly 0..<allBelow.
    private var allBelow: Int?

    init() {}
    /// Every position in 0..<count.
    init(all count: Int) { allBelow = count }

    mutating func insert(_ index: Int) {
        if let count = allBelow {
            // Leaving the "all below" form: materialise it first.
            bits = Array(repeating: true, count: count)
            allBelow = nil
        }
        if index >= bits.count { bits.append(contentsOf: repeatElement(false, count: index - bits.count + 1)) }
        bits[index] = true
    }

    func contains(_ index: Int) -> Bool {
        if let count = allBelow { return index >= 0 && index < count }
        return index >= 0 && index < bits.count && bits[index]
    }
}

/// A source's rows, section titles and the identity of each section, as one value to diff.
package struct Layout: Sendable {
    package var sections: [RowArray<JSON>]
    package var titles: [JSON]
    /// What makes a section the same section across changes: its title for sectioned
    /// sources, its child (and the child's section) for multi sources.
    package var sectionIdentities: [JSON]

    package init(sections: [RowArray<JSON>], titles: [JSON], sectionIdentities: [JSON]? = nil) {
        self.sections = sections
        self.titles = titles
        self.sectionIdentities = sectionIdentities ?? titles
    }

    package static let empty = Layout(sections: [], titles: [])

    var count: Int { sections.reduce(0) { $0 + $1.count } }
}

extension ChangeSet {
    /// The old item of the row at new item `item`, one a change left in place, given the items
    /// the change removed (`leaving`) and added (`arriving`), both ascending: the rows left in
    /// place are in the same order before and after.
    static func oldItem(ofKept item: Int, leaving: [Int], arriving: [Int]) -> Int {
        var index = item
        for position in arriving {
            guard position < item else { break }
            index -= 1
        }
        for position in leaving {
            guard position <= index else { break }
            index += 1
        }
        return index
    }
}
