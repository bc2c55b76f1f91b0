import Basics
import JSONKit

/// Its child's rows that pass a `filter` (a `Predicate`) and fuzzily match a `match` query,
/// in the child's sections (titles and identities as the child's, empty ones kept).
///
/// Without a match query the rows keep the child's order; with one, each section's rows are
/// ordered by score, best first, ties in the child's order. Placeholder rows of the child
/// always pass (after the scored rows of their section when there is a query). When the
/// child has data rows and none passes, the first section shows the no-results
/// placeholder.
///
/// It follows its child: a change of a few rows, not of sections, evaluates only those rows
/// and places each by counting the rows that precede it here, then edits the rows in place
/// and emits the change set of just those rows; any other change evaluates everything and
/// diffs. `setFilter` works out its change set from which rows passed before and after,
/// without comparing rows, and when the match query only grew (typing), searches only the
/// rows that matched before. The load cycle mirrors the child's, as a sectioned source's does.
///
/// With `fill`, it fills a screen: while fewer than `fill` rows pass and the child has pages
/// to come (a paginated child, not loading one now), it asks the child for its next page.
/// It stops at `fill` rows, at the end of the child's pages, or when a page fails; the
/// no-results row waits until the child has no page to come.
package final class FilteredDataSource: DerivedDataSource, DataSourceObserver {
    package private(set) var filter: Predicate?
    package private(set) var match: MatchQuery?
    private var pattern: FuzzyPattern?
    /// How many passing rows to fill with the child's pages; nil: none asked for.
    package private(set) var fill: Int?
    /// The child's next pages asked for to fill (for tests and measurements).
    package private(set) var pagesAskedToFill = 0
    private var fillScheduled = false
    /// A page of the child failed since filling last asked for one: filling waits until the
    /// child loads again for another reason (a retry, a display) or the filter changes.
    private var fillHalted = false
    private var askingToFill = false

    package override var kind: String { "filtered" }
    package init(name: String, identity: Identity, child: DataSource, filter: Predicate?, match: MatchQuery?, fill: Int? = nil) {
        self.filter = filter
        self.match = match
        self.fill = fill
        pattern = match.map { FuzzyPattern($0.query) }
        super.init(name: name, identity: identity, child: child)
        child.addObserver(self)
        recompute()
        scheduleFill()
    }

    package override var kindState: SourceDescription.KindState {
        .filtered(source: child.name, filter: filter, match: match, fill: fill)
    }

    package func dataSource(_ source: DataSource, emitted event: DataSourceEvent) {
        defer { scheduleFill() }
        switch event {
        case .failedWithError: fillHalted = true
        case .willLoadData where !askingToFill: fillHalted = false
        default: break
        }
        guard case .didChange(let changes) = event else {
            return mirrorLoadCycle(of: child, event) { if child.revision != followedRevision { recompute() } }
        }
        if child.revision == followedRevision + 1, follow(changes) { return }
        recompute()
    }

    // MARK: Filling a screen

    /// Sets how many passing rows to fill (nil: none), and fills up to it.
    package func setFill(_ newFill: Int?) {
        guard newFill != fill else { return }
        fill = newFill
        fillHalted = false
        recompute()
        scheduleFill()
    }

    /// Whether the child has pages to come.
    private var childAwaitsPages: Bool { child.hasMoreToLoad }

    /// Asks for the child's next page once the child's observers have all seen its last
    /// event: from inside the delivery, the others would see the next cycle start first.
    private func scheduleFill() {
        guard fill != nil, !fillScheduled else { return }
        fillScheduled = true
        child.whenEventsDelivered { [weak self] in
            guard let self else { return }
            fillScheduled = false
            guard let fill, passingData < fill, !fillHalted, !child.isFetching, childAwaitsPages else { return }
            pagesAskedToFill &+= 1
            askingToFill = true
            child.loadMore()
            askingToFill = false
        }
    }

    // MARK: What passes, and where it goes

    /// A child row as this source sees it, in one integer ordered as rows are ranked here:
    /// rows that pass before those that do not, data before placeholders, then the score,
    /// highest first (bits 63, 62 and 61–30). Counting the rows that precede one is then a
    /// comparison of integers in a tight loop over a buffer: following a child's insert into
    /// 300,000 rows is that count.
    struct Entry {
        let raw: UInt64

        init(passes: Bool, isPlaceholder: Bool, score: Int32) {
            let descendingScore = ~(UInt32(bitPattern: score) ^ 0x8000_0000)
            raw = (passes ? 0 : 1 << 63) | (isPlaceholder ? 1 << 62 : 0) | UInt64(descendingScore) << 30
        }

        var passes: Bool { raw >> 63 == 0 }
        var isPlaceholder: Bool { raw >> 62 & 1 == 1 }
        /// The match score (0 without a query).
        var score: Int32 { Int32(bitPattern: ~UInt32(truncatingIfNeeded: raw >> 30) ^ 0x8000_0000) }

        static let fails = Entry(passes: false, isPlaceholder: false, score: 0)
        /// Child items are numbered in the 30 bits below the rank (`order`).
        static let largestItem = 1 << 30 - 1
    }

    /// An entry for each of the child's rows, parallel to its sections, for `followedRevision`.
    private var entries: [[Entry]] = []
    private var followedRevision = -1
    /// Whether the first section ends with the no-results placeholder this source adds.
    private var showsNoResults = false
    /// The child's data rows, and how many of them pass.
    private var childData = 0
    private var passingData = 0

    /// Rows evaluated against the filter and the query since creation, placeholders counted
    /// (for tests and measurements: a query that grows evaluates only the previous matches).
    package private(set) var rowsEvaluated = 0
    /// When false, every change of the child is recomputed (to measure what following saves).
    package var followsChanges = true
    package private(set) var changesFollowed = 0
    /// Past this many rows, a child's change is cheaper recomputed than applied row by row.
    static let largestFollowedChange = 64

    /// The entry of one row (see `evaluate(_:previous:...)`).
    static func entry(
        _ object: JSON, filter: Predicate?, pattern: FuzzyPattern?, keyPaths: [JSONKeyPath], matcher: inout FuzzyMatcher
    ) -> Entry {
        var entry = Entry.fails
        [object].withUnsafeBufferPointer { row in
            evaluate(
                row, previous: nil, narrowing: false, filter: filter, pattern: pattern, keyPaths: keyPaths, matcher: &matcher,
                into: &entry)
        }
        return entry
    }

    /// The entries of a block of rows, written to `output`: placeholders pass; other rows pass
    /// the filter, then need a match of the query at one of `keyPaths` (the best scores).
    /// `previous`: the same rows' entries under the filter and query before, which say which
    /// rows are placeholders without reading them; when `narrowing` (a filter and query that
    /// can only let fewer rows through), only the rows that passed there are read. Each part
    /// of the filter, the query and each key path is taken apart once for the block, not once
    /// a row (see `Predicate.narrow`).
    private static func evaluate(
        _ rows: UnsafeBufferPointer<JSON>, previous: ArraySlice<Entry>?, narrowing: Bool, filter: Predicate?,
        pattern: FuzzyPattern?, keyPaths: [JSONKeyPath], matcher: inout FuzzyMatcher, into output: UnsafeMutablePointer<Entry>
    ) {
        var keep = [Bool](repeating: true, count: rows.count), placeholder = [Bool](repeating: false, count: rows.count)
        for index in rows.indices {
            if let previous {
                let before = previous[previous.startIndex + index]
                if before.isPlaceholder {
                    (keep[index], placeholder[index]) = (false, true)
                } else if narrowing, !before.passes {
                    keep[index] = false
                }
            } else if Placeholder.kind(of: rows[index]) != nil {
                (keep[index], placeholder[index]) = (false, true)
            }
        }
        filter?.narrow(&keep, rows: rows)
        var scores = [Int32](repeating: 0, count: rows.count)
        if let pattern {
            // -1: no match yet (a match scores 0 or more).
            for index in rows.indices where keep[index] { scores[index] = -1 }
            for keyPath in keyPaths {
                JSON.forEachScalar(in: rows, at: keyPath, where: keep) { index, scalar in
                    guard case .string(let bytes) = scalar, let found = matcher.score(pattern, in: bytes) else { return }
                    scores[index] = max(scores[index], found)
                }
            }
            for index in rows.indices where keep[index] && scores[index] < 0 { keep[index] = false }
        }
        for index in rows.indices {
            let entry =
                placeholder[index]
                ? Entry(passes: true, isPlaceholder: true, score: 0)
                : keep[index] ? Entry(passes: true, isPlaceholder: false, score: scores[index]) : .fails
            (output + index).initialize(to: entry)
        }
    }

    /// The child items that pass, in their order here.
    private static func order(_ section: [Entry], ranked: Bool) -> [Int] {
        guard ranked else { return section.indices.filter { section[$0].passes } }
        // One integer a row: its rank, then its child item (ties in the child's order).
        // Integers sort several times faster than entries compared through a closure, and
        // tens of thousands match a first keystroke.
        precondition(section.count <= Entry.largestItem + 1, "more rows than a ranked order numbers")
        var keys: [UInt64] = []
        keys.reserveCapacity(section.count)
        for (item, entry) in section.enumerated() where entry.passes { keys.append(entry.raw | UInt64(item)) }
        keys.sort()
        return keys.map { Int($0 & UInt64(Entry.largestItem)) }
    }

    /// Every child row's entry. `previous`: the entries of the same child rows (its revision
    /// unchanged), which say which are placeholders; when `narrowing`, only the rows that
    /// passed there are evaluated (the others fail: a narrower query cannot let them through).
    private func evaluate(previous entries: [[Entry]]? = nil, narrowing: Bool = false) -> [[Entry]] {
        let filter = filter, pattern = pattern, keyPaths = match?.keyPaths ?? []
        var evaluated = 0
        let result = child.layout.sections.enumerated().map { section, rows -> [Entry] in
            let previous = entries?[section]
            precondition(previous == nil || previous!.count == rows.count, "entries of another revision of the child")
            evaluated += narrowing ? previous.map { $0.reduce(0) { $0 + ($1.passes ? 1 : 0) } } ?? rows.count : rows.count
            // Not through unsafeUninitializedCapacity when empty: that writes the count into the
            // empty array every empty array shares (ThreadSanitizer saw it race a reader).
            guard !rows.isEmpty else { return [] }
            return [Entry](unsafeUninitializedCapacity: rows.count) { buffer, initialized in
                let start = buffer.baseAddress!
                let output = Parallel.SharedOutput(start: start)
                // A block a chunk of the child's rows: read from the chunk's own buffer.
                Parallel.forEach(pieces: rows.chunkCount, elements: rows.count) { index in
                    let (first, chunk) = rows.chunk(index)
                    var matcher = FuzzyMatcher()
                    chunk.withUnsafeBufferPointer { block in
                        Self.evaluate(
                            block, previous: previous?[first..<(first + block.count)], narrowing: narrowing, filter: filter,
                            pattern: pattern, keyPaths: keyPaths, matcher: &matcher, into: output.start + first)
                    }
                }
                initialized = rows.count
            }
        }
        rowsEvaluated += evaluated
        return result
    }

    private func count(_ entries: [[Entry]]) -> (data: Int, passing: Int) {
        var data = 0, passing = 0
        for section in entries {
            for entry in section where !entry.isPlaceholder {
                data += 1
                if entry.passes { passing += 1 }
            }
        }
        return (data, passing)
    }

    /// The layout for `entries` in their orders, and its identity hashes.
    private func layout(for orders: [[Int]]) -> (Layout, [RowArray<Int>]) {
        var sections: [RowArray<JSON>] = [], hashes: [RowArray<Int>] = []
        let sameIdentity = child.identity.key == identity.key
        for (section, order) in orders.enumerated() {
            let rows = child.layout.sections[section]
            if order.count == rows.count, match == nil {
                // Everything passes in the child's order: the child's rows, shared.
                sections.append(rows)
                hashes.append(sameIdentity ? child.rowHashes[section] : RowArray(identity.hashes(of: rows)))
                continue
            }
            let passing = RowArray.gathering(order, from: rows)
            sections.append(passing)
            if sameIdentity {
                let childHashes = child.rowHashes[section]
                hashes.append(RowArray(order.map { childHashes[$0] }))
            } else {
                hashes.append(RowArray(identity.hashes(of: passing)))
            }
        }
        if showsNoResults {
            sections[0].append(Placeholder.noResultsRow)
            hashes[0].append(identity.hash(of: Placeholder.noResultsRow))
        }
        return (Layout(sections: sections, titles: child.layout.titles, sectionIdentities: child.layout.sectionIdentities), hashes)
    }

    private func adopt(_ new: [[Entry]]) {
        entries = new
        (childData, passingData) = count(new)
        // While filling, "no results" waits for the end of the child's pages.
        showsNoResults = childData > 0 && passingData == 0 && !new.isEmpty && !(fill != nil && childAwaitsPages)
        followedRevision = child.revision
    }

    /// Evaluates every row and diffs.
    private func recompute() {
        adopt(evaluate())
        let (layout, hashes) = layout(for: entries.map { Self.order($0, ranked: match != nil) })
        replaceLayout(layout, hashes: hashes)
    }

    // MARK: setFilter

    /// Replaces the filter and the match query (nil: none) and emits one change set from the
    /// old rows to the new ones. Rows that stay are neither compared nor hashed.
    package func setFilter(_ newFilter: Predicate?, match newMatch: MatchQuery?) {
        defer { scheduleFill() }
        fillHalted = false
        guard followedRevision == child.revision else {
            (filter, match, pattern) = (newFilter, newMatch, newMatch.map { FuzzyPattern($0.query) })
            return recompute()
        }
        let newPattern = newMatch.map { FuzzyPattern($0.query) }
        // Only rows that passed can pass a filter that only narrows: the same filter with a
        // query where there was none, or a query that grew.
        var narrows = newFilter == filter
        switch (match, newMatch) {
        case (nil, _): break
        case (let old?, let new?): narrows = narrows && old.keyPaths == new.keyPaths && pattern!.isNarrowed(by: newPattern!)
        case (_?, nil): narrows = false
        }
        let oldEntries = entries, oldRanked = match != nil, oldShowsNoResults = showsNoResults
        (filter, match, pattern) = (newFilter, newMatch, newPattern)
        adopt(evaluate(previous: oldEntries, narrowing: narrows))
        let newOrders = entries.map { Self.order($0, ranked: match != nil) }
        let (layout, hashes) = layout(for: newOrders)
        guard !oldShowsNoResults, !showsNoResults else { return replaceLayout(layout, hashes: hashes) }
        guard oldRanked || match != nil else {
            return replaceLayout(layout, hashes: hashes, knownChanges: Self.changesInChildOrder(from: oldEntries, to: entries))
        }

        let oldOrders = oldEntries.map { Self.order($0, ranked: oldRanked) }
        var changes = ChangeSet()
        for (section, (oldOrder, newOrder)) in zip(oldOrders, newOrders).enumerated() {
            let old = oldEntries[section], new = entries[section]
            var oldPosition = [Int32](repeating: -1, count: old.count)
            for (position, item) in oldOrder.enumerated() {
                oldPosition[item] = Int32(position)
                if !new[item].passes { changes.deleted.append(IndexPath(section: section, item: position)) }
            }
            var kept: [(from: Int, to: Int)] = []
            for (position, item) in newOrder.enumerated() {
                if old[item].passes {
                    kept.append((Int(oldPosition[item]), position))
                } else {
                    changes.inserted.append(IndexPath(section: section, item: position))
                }
            }
            // Rows that stay: the longest run still in old order stays put, the others move.
            let steady = ChangeSet.longestIncreasingSubsequence(kept.map(\.from))
            for (index, pair) in kept.enumerated() where !steady.contains(index) {
                changes.moved.append(
                    ChangeSet.Move(from: IndexPath(section: section, item: pair.from), to: IndexPath(section: section, item: pair.to)))
            }
        }
        replaceLayout(layout, hashes: hashes, knownChanges: changes)
    }

    /// The change set from the rows that passed `old` to those that pass `new`, both in the
    /// child's order (no match query on either side): rows that stay keep their order, so
    /// nothing moves, and one walk over the entries finds the runs that leave and arrive.
    /// A first filter over a million rows deletes 916,666 of them this way without a list
    /// of positions.
    static func changesInChildOrder(from old: [[Entry]], to new: [[Entry]]) -> ChangeSet {
        var changes = ChangeSet()
        for section in old.indices {
            precondition(old[section].count == new[section].count, "entries of the same child rows")
            old[section].withUnsafeBufferPointer { before in
                new[section].withUnsafeBufferPointer { after in
                    var oldItem = 0, newItem = 0
                    // The run being gathered of each list: `start..<end` (empty: none yet).
                    var deleted = 0..<0, inserted = 0..<0
                    for row in before.indices {
                        let was = before[row].passes, passes = after[row].passes
                        if was, !passes {
                            if deleted.upperBound != oldItem {
                                changes.deleted.append(section: section, items: deleted)
                                deleted = oldItem..<oldItem
                            }
                            deleted = deleted.lowerBound..<(oldItem + 1)
                        } else if passes, !was {
                            if inserted.upperBound != newItem {
                                changes.inserted.append(section: section, items: inserted)
                                inserted = newItem..<newItem
                            }
                            inserted = inserted.lowerBound..<(newItem + 1)
                        }
                        if was { oldItem += 1 }
                        if passes { newItem += 1 }
                    }
                    changes.deleted.append(section: section, items: deleted)
                    changes.inserted.append(section: section, items: inserted)
                }
            }
        }
        return changes
    }

    // MARK: Following a change of the child

    /// Where the child's row `item` of `section` is here now, or nil if it does not pass: the
    /// passing rows ranked before it (with a query), or before it in the child (without),
    /// counted over the section's entries as integers.
    private func position(_ section: Int, _ item: Int) -> Int? {
        let target = entries[section][item]
        guard target.passes else { return nil }
        let ranked = match != nil
        return entries[section].withUnsafeBufferPointer { rows in
            var count = 0
            if ranked {
                // Ranked higher, or as high and earlier in the child.
                for entry in rows where entry.raw < target.raw { count &+= 1 }
                for entry in rows[..<item] where entry.raw == target.raw { count &+= 1 }
            } else {
                for entry in rows[..<item] where entry.passes { count &+= 1 }
            }
            return count
        }
    }

    /// Applies the child's change of a few rows here: evaluates the rows that arrived or
    /// changed, finds where the rows leaving were and where the rows arriving go, and edits
    /// the rows in place. False, with nothing changed, when it cannot: a change of sections,
    /// a large change, one into or out of "nothing matches" (the no-results row), or any change
    /// when this source's identity is not its child's (an update in the child can then be
    /// another row here: its hash changes, which the diff of a recompute sees).
    private func follow(_ changes: ChangeSet) -> Bool {
        let total = changes.deleted.count + changes.inserted.count + changes.moved.count + changes.updated.count
        // Filling with nothing passing yet: the child's loading row may go (its last page, or a
        // failure), and with it the reason to hold back the no-results row.
        guard followsChanges, !showsNoResults, fill == nil || passingData > 0, changes.insertedSections.isEmpty,
            changes.deletedSections.isEmpty,
            total <= Self.largestFollowedChange, child.layout.sections.count == entries.count, child.identity.key == identity.key
        else { return false }
        let rows = child.layout.sections, sections = entries.count
        var leaving = [[Int]](repeating: [], count: sections), arriving = [[Int]](repeating: [], count: sections)
        for path in changes.deleted { leaving[path.section].append(path.item) }
        for path in changes.inserted { arriving[path.section].append(path.item) }
        for move in changes.moved {
            leaving[move.from.section].append(move.from.item)
            arriving[move.to.section].append(move.to.item)
        }
        for section in 0..<sections {
            leaving[section].sort()
            arriving[section].sort()
            guard entries[section].count - leaving[section].count + arriving[section].count == rows[section].count else { return false }
        }
        let movedTo = Set(changes.moved.map(\.to)), updated = Set(changes.updated)
        // Rows updated where they stay in the child: their old item.
        let updatedKept = changes.updated.filter { !movedTo.contains($0) }.map { path in
            (old: ChangeSet.oldItem(ofKept: path.item, leaving: leaving[path.section], arriving: arriving[path.section]), new: path)
        }

        // The rows arriving or changed, evaluated before anything changes.
        let filter = filter, pattern = pattern, keyPaths = match?.keyPaths ?? []
        var matcher = FuzzyMatcher()
        func evaluate(_ path: IndexPath) -> Entry {
            Self.entry(rows[path.section][path.item], filter: filter, pattern: pattern, keyPaths: keyPaths, matcher: &matcher)
        }
        let insertedEntries = changes.inserted.map(evaluate), movedEntries = changes.moved.map { evaluate($0.to) }
        let updatedEntries = updatedKept.map { evaluate($0.new) }
        let updatedOldEntries = updatedKept.map { entries[$0.new.section][$0.old] }
        rowsEvaluated += insertedEntries.count + movedEntries.count + updatedEntries.count

        // Into or out of "nothing matches": recomputed, for the no-results row.
        var data = childData, passing = passingData
        func leave(_ entry: Entry) {
            if !entry.isPlaceholder {
                data -= 1
                passing -= entry.passes ? 1 : 0
            }
        }
        func arrive(_ entry: Entry) {
            if !entry.isPlaceholder {
                data += 1
                passing += entry.passes ? 1 : 0
            }
        }
        for path in changes.deleted { leave(entries[path.section][path.item]) }
        for (move, entry) in zip(changes.moved, movedEntries) {
            leave(entries[move.from.section][move.from.item])
            arrive(entry)
        }
        insertedEntries.forEach(arrive)
        for (old, new) in zip(updatedOldEntries, updatedEntries) {
            leave(old)
            arrive(new)
        }
        guard data == 0 || passing > 0 else { return false }

        // Where the rows leaving or changing are here, before anything moves.
        let deletedFrom = changes.deleted.map { position($0.section, $0.item) }
        let movedFrom = changes.moved.map { position($0.from.section, $0.from.item) }
        let updatedFrom = updatedKept.map { position($0.new.section, $0.old) }

        var arrivingEntries: [IndexPath: Entry] = [:]
        for (path, entry) in zip(changes.inserted, insertedEntries) { arrivingEntries[path] = entry }
        for (move, entry) in zip(changes.moved, movedEntries) { arrivingEntries[move.to] = entry }
        for section in 0..<sections where !leaving[section].isEmpty || !arriving[section].isEmpty {
            for item in leaving[section].reversed() { entries[section].remove(at: item) }
            for item in arriving[section] { entries[section].insert(arrivingEntries[IndexPath(section: section, item: item)]!, at: item) }
        }
        for (kept, entry) in zip(updatedKept, updatedEntries) { entries[kept.new.section][kept.new.item] = entry }
        (childData, passingData) = (data, passing)

        // Where the rows arriving or changing go.
        var own = ChangeSet()
        var additions: [(at: IndexPath, child: IndexPath)] = [], replacements: [(at: IndexPath, child: IndexPath)] = []
        func here(_ section: Int, _ item: Int?) -> IndexPath? { item.map { IndexPath(section: section, item: $0) } }
        own.deleted = IndexPathList(zip(changes.deleted, deletedFrom).compactMap { here($0.section, $1) })
        for path in changes.inserted {
            guard let to = here(path.section, position(path.section, path.item)) else { continue }
            own.inserted.append(to)
            additions.append((to, path))
        }
        /// A row that was here at `from` (or not) and goes to `to` (or not).
        func relocate(from: IndexPath?, to: IndexPath?, child path: IndexPath, changed: Bool, staysPut: Bool) {
            switch (from, to) {
            case (let from?, let to?):
                if staysPut {
                    if changed {
                        own.updated.append(to)
                        replacements.append((to, path))
                    }
                } else {
                    own.moved.append(ChangeSet.Move(from: from, to: to))
                    if changed { own.updated.append(to) }
                    additions.append((to, path))
                }
            case (let from?, nil):
                own.deleted.append(from)
            case (nil, let to?):
                own.inserted.append(to)
                additions.append((to, path))
            case (nil, nil):
                break
            }
        }
        for (move, from) in zip(changes.moved, movedFrom) {
            relocate(
                from: here(move.from.section, from), to: here(move.to.section, position(move.to.section, move.to.item)),
                child: move.to, changed: updated.contains(move.to), staysPut: false)
        }
        for (index, kept) in updatedKept.enumerated() {
            // Same rank, same place: the order among the other rows is unchanged.
            let old = updatedOldEntries[index], new = updatedEntries[index]
            let staysPut = match == nil || (old.isPlaceholder == new.isPlaceholder && old.score == new.score)
            relocate(
                from: here(kept.new.section, updatedFrom[index]), to: here(kept.new.section, position(kept.new.section, kept.new.item)),
                child: kept.new, changed: true, staysPut: staysPut)
        }
        own.deleted.sort()
        own.inserted.sort()
        own.updated.sort()

        // Rows leave from the back, so that earlier places hold; then arrive from the front.
        for path in (own.deleted + own.moved.map(\.from)).sorted(by: >) { removeRow(at: path) }
        for addition in additions.sorted(by: { $0.at < $1.at }) {
            insertRow(
                rows[addition.child.section][addition.child.item], hash: child.rowHashes[addition.child.section][addition.child.item],
                at: addition.at)
        }
        for replacement in replacements { replaceRow(at: replacement.at, with: rows[replacement.child.section][replacement.child.item]) }
        followedRevision = child.revision
        changesFollowed += 1
        commitFollowing(own)
        return true
    }

    // MARK: Match positions

    /// How `object` matches the query: its score, the key path that gave it and the matched
    /// characters there; nil without a query, for placeholders, and for objects that do not match.
    package func matchPositions(of object: JSON) -> (score: Int, keyPath: JSONKeyPath, positions: [Int])? {
        guard let pattern, let match, Placeholder.kind(of: object) == nil else { return nil }
        var matcher = FuzzyMatcher()
        guard let best = matcher.bestMatch(pattern, in: object, keyPaths: match.keyPaths, positions: true) else { return nil }
        return (best.match.score, match.keyPaths[best.keyPath], best.match.positions)
    }
}
