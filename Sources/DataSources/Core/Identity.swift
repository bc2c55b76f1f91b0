import Basics
import JSONKit

/// How a source tells two objects apart: by the value at `identityKey` when given (objects
/// lacking it fall back to their whole value), else by whole-value equality.
package struct Identity: Sendable {
    package let key: JSONKeyPath?

    package init(key: JSONKeyPath?) { self.key = key }

    /// The value two objects must share to be the same object. Placeholders are compared
    /// whole, so a loading row never matches data.
    package func of(_ object: JSON) -> JSON {
        guard let key, object.isObject, !object.hasMember(Placeholder.memberName), let value = object.value(at: key) else { return object }
        return value
    }

    /// The hash of `of(object)`. Sources compute it once per row as the row arrives and
    /// keep it, because reaching into a row's tree costs cache misses that dominate diffs
    /// and indexing of large lists.
    func hash(of object: JSON) -> Int {
        var hash: Int?
        // A scalar hashes as the same value made whole would (`JSON.Scalar.valueHash`).
        withIdentityScalar(of: object) { hash = $0.valueHash }
        return hash ?? of(object).valueHash
    }

    /// Calls `body` with the object's identity read in place, when it has a key and is a data
    /// object (not a placeholder); a missing value or a container is `of(_:)`'s to handle.
    /// A million rows hashed or compared this way make no value each.
    private func withIdentityScalar(of object: JSON, _ body: (JSON.Scalar) -> Void) {
        guard let key, object.isObject, !object.hasMember(Placeholder.memberName) else { return }
        object.withScalar(at: key, body)
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

    /// Each object's `hash(of:)`, in order; a long list is hashed on all cores.
    func hashes<Objects: RandomAccessCollection<JSON> & Sendable>(of objects: Objects) -> [Int] where Objects.Index == Int {
        Parallel.map(objects) { hash(of: $0) }
    }

    /// The same for an array, read in place: what a page's rows are hashed with.
    func hashes(of objects: [JSON]) -> [Int] {
        objects.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return [] }
            let input = Parallel.SharedOutput(start: UnsafeMutablePointer(mutating: base))
            return hashes(count: objects.count) { lower, upper, target in
                for position in lower..<upper { (target + (position - lower)).initialize(to: hash(of: input.start[position])) }
            }
        }
    }

    /// The same for `range` of `rows`, read chunk by chunk. Written for these two types rather
    /// than through the generic collection above: a page's rows are hashed on the main loop,
    /// and generic code walking a slice of a RowArray looked up type metadata for each row
    /// (a million rows took most of a second; Benchmarks/pagestall.py).
    func hashes(of rows: RowArray<JSON>, in range: Range<Int>) -> [Int] {
        hashes(count: range.count) { lower, upper, target in
            var next = target
            rows.forEach(from: range.lowerBound + lower) { position, row in
                guard position < range.lowerBound + upper else { return false }
                next.initialize(to: hash(of: row))
                next += 1
                return true
            }
        }
    }

    func hashes(of rows: RowArray<JSON>) -> [Int] { hashes(of: rows, in: 0..<rows.count) }

    func hashes(of sections: [RowArray<JSON>]) -> [RowArray<Int>] { sections.map { RowArray(hashes(of: $0)) } }

    /// `count` hashes written by `fill(lower, upper, target)`, which initializes positions
    /// lower..<upper at `target`; in pieces on every core for a long list.
    private func hashes(count: Int, _ fill: @Sendable (Int, Int, UnsafeMutablePointer<Int>) -> Void) -> [Int] {
        guard count > 0 else { return [] }
        return [Int](unsafeUninitializedCapacity: count) { buffer, initialized in
            let output = Parallel.SharedOutput(start: buffer.baseAddress!)
            let pieces = Parallel.chunkCount(for: count)
            Parallel.forEach(pieces: pieces, elements: count) { piece in
                let lower = count * piece / pieces, upper = count * (piece + 1) / pieces
                fill(lower, upper, output.start + lower)
            }
            initialized = count
        }
    }

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
///
/// An open-addressing table of the hashes themselves: they are already mixed (FoldHasher),
/// so a row costs no second hashing, and growing moves integers and row references only.
struct IdentitySet {
    let identity: Identity
    /// The hash of a slot's first row (0 when empty; a hash of 0 is kept as 1: rows that
    /// only seem to share a hash are told apart by comparing them) and the row, side by side:
    /// an insert into a large set reads one cache line, not one in each of two arrays.
    private struct Slot {
        var hash = 0
        var firstRow: JSON?
    }
    private var slots: [Slot] = []
    private var count = 0
    /// Rows of other identities whose hash was taken (a 64-bit collision: in practice never).
    private var collisions: [Int: [JSON]] = [:]

    init(identity: Identity) { self.identity = identity }

    /// Adds the row's identity; false when one like it is already here.
    mutating func insert(_ row: JSON) -> Bool {
        insert(row, hash: identity.hash(of: row))
    }

    /// The same, for a row whose identity hash the caller has (`identity.hash(of: row)`).
    mutating func insert(_ row: JSON, hash: Int) -> Bool {
        let key = hash == 0 ? 1 : hash
        if (count + 1) * 2 > slots.count { grow() }
        let mask = slots.count - 1
        var slot = key & mask
        while slots[slot].hash != 0 {
            if slots[slot].hash == key {
                if identity.same(slots[slot].firstRow!, row) { return false }
                if collisions[key]?.contains(where: { identity.same($0, row) }) == true { return false }
                collisions[key, default: []].append(row)
                return true
            }
            slot = (slot + 1) & mask
        }
        slots[slot] = Slot(hash: key, firstRow: row)
        count += 1
        return true
    }

    private mutating func grow() {
        let size = Swift.max(64, slots.count * 2), mask = size - 1
        var grown = [Slot](repeating: Slot(), count: size)
        grown.withUnsafeMutableBufferPointer { grown in
            slots.withUnsafeMutableBufferPointer { old in
                for index in old.indices where old[index].hash != 0 {
                    var slot = old[index].hash & mask
                    while grown[slot].hash != 0 { slot = (slot + 1) & mask }
                    // Moved, not copied: no count taken and dropped on every row held.
                    (grown.baseAddress! + slot).moveUpdate(from: old.baseAddress! + index, count: 1)
                    (old.baseAddress! + index).initialize(to: Slot())
                }
            }
        }
        slots = grown
    }
}

/// Where each object sits, by identity: O(1) `indexPath(for:)`.
///
/// Keyed by the identity hash, found again through the rows' hashes the source keeps
/// (`PositionTable`), so the table costs 4 bytes a slot, about 8 a row; the row found is
/// then checked for the same identity. A row whose hash is already taken by a row of another
/// identity (a 64-bit collision: in practice never) goes to `collisions`. Rows are named by
/// their position counted across sections, in 32 bits.
///
/// A one-section source edited in place (an insertion or removal) keeps its index: the
/// positions stored stay as they were when stored, and a log of the shifts since then
/// turns them into current ones when a lookup reads them. The log is short (a long one, or
/// an edit the index cannot follow cheaply, drops the index, rebuilt at the next lookup),
/// so an edit costs its own rows, not a re-indexing of every row after it.
struct IdentityIndex {
    /// Hash → the position of the first row with that hash, before any shift in `shifts`.
    private var first: PositionTable
    private var collisions: [Int: [UInt32]] = [:]
    /// Section starts and the shifts logged: what turns a stored position into a row.
    private var positions = Positions()
    /// Hashes of more than one row (repeated identities, or collisions): an edit touching
    /// one of them is not followed (which row is "first" would need a search).
    private var repeated: Set<Int> = []
    /// Rows inserted since the index was built: hash → position and the number of shifts
    /// logged before it was stored.
    private var added: [Int: (position: Int, shifts: Int)] = [:]
    /// Beyond this many logged edits, rebuilding is cheaper than reading the log.
    static let longestLog = 1024

    init(sections: [RowArray<JSON>], hashes: [RowArray<Int>], identity: Identity) {
        var start = 0
        for objects in sections {
            positions.sectionStarts.append(start)
            start += objects.count
        }
        first = PositionTable(capacity: start)
        for (section, objects) in sections.enumerated() {
            let sectionHashes = hashes[section], sectionStart = positions.sectionStarts[section]
            for (item, object) in objects.enumerated() {
                add(object, hash: sectionHashes[item], at: sectionStart + item, sections: sections, hashes: hashes, identity: identity)
            }
        }
    }

    private func row(at position: Int, in sections: [RowArray<JSON>]) -> JSON {
        let path = positions.indexPath(at: position)
        return sections[path.section][path.item]
    }

    /// Turns positions stored in the index into rows.
    private struct Positions {
        /// The position of each section's first row.
        var sectionStarts: [Int] = []
        /// In order: rows at or after `at` moved by `by`.
        var shifts: [(at: Int, by: Int)] = []

        func indexPath(at position: Int) -> IndexPath { IndexPath(flat: position, sectionStarts: sectionStarts) }

        /// A position stored after `from` shifts were logged, as it is now.
        func shifted(_ position: Int, from: Int) -> Int {
            var position = position
            for shift in shifts[from...] where position >= shift.at { position += shift.by }
            return position
        }

        /// The hash of the row a position stored in `first` names now (`hashes`: the current rows').
        func hashOfEntry(_ stored: UInt32, in hashes: [RowArray<Int>]) -> Int {
            let path = indexPath(at: shifted(Int(stored), from: 0))
            return hashes[path.section][path.item]
        }
    }

    /// Indexes a row unless an earlier row has its identity: the first of equal objects
    /// wins, as `indexOf` did in the original.
    private mutating func add(
        _ object: JSON, hash: Int, at position: Int, sections: [RowArray<JSON>], hashes: [RowArray<Int>], identity: Identity
    ) {
        guard let position = UInt32(exactly: position) else { preconditionFailure("more than 2^32 rows") }
        guard let taken = stored(hash, hashes: hashes) else {
            let positions = positions
            first.insert(position, hash: hash, hashOfEntry: { positions.hashOfEntry($0, in: hashes) })
            return
        }
        repeated.insert(hash)
        guard !identity.same(row(at: Int(taken), in: sections), object) else { return }
        let others = collisions[hash] ?? []
        guard !others.contains(where: { identity.same(row(at: Int($0), in: sections), object) }) else { return }
        collisions[hash] = others + [position]
    }

    func indexPath(of object: JSON, identity: Identity, sections: [RowArray<JSON>], hashes: [RowArray<Int>]) -> IndexPath? {
        let hash = identity.hash(of: object)
        guard let position = currentPosition(of: hash, hashes: hashes) else { return nil }
        if identity.same(row(at: position, in: sections), object) { return positions.indexPath(at: position) }
        return collisions[hash]?.first { identity.same(row(at: Int($0), in: sections), object) }.map { positions.indexPath(at: Int($0)) }
    }

    /// The position `first` holds for `hash` (`hashes`: the current rows').
    private func stored(_ hash: Int, hashes: [RowArray<Int>]) -> UInt32? {
        first.position(of: hash) { positions.hashOfEntry($0, in: hashes) }
    }

    /// Where the first row with `hash` is now, after the shifts logged since it was stored.
    private func currentPosition(of hash: Int, hashes: [RowArray<Int>]) -> Int? {
        if let recent = added[hash] { return positions.shifted(recent.position, from: recent.shifts) }
        guard let stored = stored(hash, hashes: hashes) else { return nil }
        return positions.shifted(Int(stored), from: 0)
    }

    /// Follows rows inserted at `start` of a one-section source (`sections` and `hashes`
    /// are the new layout's); false when it cannot, and the index must be dropped.
    mutating func inserted(_ newHashes: [Int], at start: Int, hashes: [RowArray<Int>]) -> Bool {
        guard positions.sectionStarts == [0], collisions.isEmpty, positions.shifts.count < Self.longestLog,
            added.count + newHashes.count <= 1 << 16
        else { return false }
        // Logged first: the rows are already in `hashes`, where the stored positions at or
        // after `start` now name rows further on.
        positions.shifts.append((start, newHashes.count))
        // A repeated identity (or a collision) would need comparing which row is first.
        var seen = Set<Int>()
        for hash in newHashes {
            guard added[hash] == nil, seen.insert(hash).inserted,
                stored(hash, hashes: hashes) == nil
            else { return false }
        }
        for (offset, hash) in newHashes.enumerated() { added[hash] = (start + offset, positions.shifts.count) }
        return true
    }

    /// Follows the removal of rows `start..<start + hashes.count` (their hashes given) from a
    /// one-section source, before they are removed; false when it cannot, and the index must
    /// be dropped.
    mutating func removed(_ hashes: ArraySlice<Int>, at start: Int) -> Bool {
        guard positions.sectionStarts == [0], collisions.isEmpty, positions.shifts.count < Self.longestLog else { return false }
        guard !hashes.contains(where: repeated.contains) else { return false }
        let positions = positions
        for (offset, hash) in hashes.enumerated() where added.removeValue(forKey: hash) == nil {
            // The one row with this hash is the one removed: its entry is the one naming it.
            first.remove(hash: hash) { positions.shifted(Int($0), from: 0) == start + offset }
        }
        self.positions.shifts.append((start + hashes.count, -hashes.count))
        return true
    }

    /// Whether positions have been shifted since the index was built.
    var isShifted: Bool { !positions.shifts.isEmpty }

    /// Re-indexes a single section whose first `start` objects did not move: only the rows
    /// after them are forgotten and indexed again, so appending a page costs the page.
    /// `sections` and `hashes` are the new layout's; only when nothing was shifted.
    mutating func reindex(
        from start: Int, oldHashes: some Collection<Int>, new sections: [RowArray<JSON>], hashes: [RowArray<Int>], identity: Identity
    ) {
        precondition(!isShifted, "re-indexing a shifted index")
        // A hash whose first row is at or after `start` has no row before it.
        for (offset, hash) in oldHashes.enumerated() {
            first.remove(hash: hash) { Int($0) == start + offset }
        }
        collisions = collisions.compactMapValues { positions in
            let kept = positions.filter { $0 < start }
            return kept.isEmpty ? nil : kept
        }
        positions.sectionStarts = [0]
        let newHashes = hashes[0]
        for item in start..<sections[0].count {
            add(sections[0][item], hash: newHashes[item], at: item, sections: sections, hashes: hashes, identity: identity)
        }
    }
}

/// Hash → a 32-bit position, in 4 bytes a slot: the hash itself is not stored but read
/// back from the rows' hashes at the position (`hashOfEntry`), which a source keeps anyway.
/// Open addressing with linear probing, at most half full; a removed entry leaves a
/// marker that lookups step over, cleared when the table is next rebuilt.
struct PositionTable {
    /// 0: empty; 1: removed; else the position + 2.
    private var slots: [UInt32]
    /// Slots that are not empty (entries and removal markers).
    private var used = 0

    init(capacity: Int) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        slots = [UInt32](repeating: 0, count: size)
    }

    private var mask: Int { slots.count - 1 }

    /// The position stored for `hash`, or nil.
    func position(of hash: Int, hashOfEntry: (UInt32) -> Int) -> UInt32? {
        var slot = hash & mask
        while true {
            let stored = slots[slot]
            if stored == 0 { return nil }
            if stored > 1, hashOfEntry(stored - 2) == hash { return stored - 2 }
            slot = (slot + 1) & mask
        }
    }

    /// Stores `position` for `hash`, which has none.
    mutating func insert(_ position: UInt32, hash: Int, hashOfEntry: (UInt32) -> Int) {
        precondition(position < UInt32.max - 1, "more than 2^32 rows")
        if (used + 1) * 2 > slots.count { rebuild(hashOfEntry: hashOfEntry) }
        var slot = hash & mask
        while slots[slot] > 1 { slot = (slot + 1) & mask }
        if slots[slot] == 0 { used += 1 }
        slots[slot] = position + 2
    }

    /// Removes the entry of `hash` whose position satisfies `names` (none if no entry does).
    mutating func remove(hash: Int, where names: (UInt32) -> Bool) {
        var slot = hash & mask
        while slots[slot] != 0 {
            if slots[slot] > 1, names(slots[slot] - 2) {
                slots[slot] = 1
                return
            }
            slot = (slot + 1) & mask
        }
    }

    /// Re-inserts every entry into a table with room for twice as many, without markers.
    private mutating func rebuild(hashOfEntry: (UInt32) -> Int) {
        let old = slots
        var entries = 0
        for stored in old where stored > 1 { entries += 1 }
        var size = 16
        while size < (entries + 1) * 2 { size <<= 1 }
        slots = [UInt32](repeating: 0, count: size)
        used = 0
        for stored in old where stored > 1 {
            var slot = hashOfEntry(stored - 2) & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = stored
            used += 1
        }
    }
}
