import JSONKit

/// What a source tells its observers: Instant Cocoa's delegate methods, plus changes.
///
/// For every load cycle a source emits exactly one `willLoadData`, then zero or more
/// `didPartiallyLoad`, then exactly one of `finishedLoading` / `failedWithError`; a cycle
/// may end after `fetchData` returns (remote children answer through the daemon's
/// mailbox). `isFetching` is true exactly between the first and the last event of a cycle.
/// `didChange` may come at any time, inside a cycle or not, and never with an empty change
/// set; rows change only with a `didChange`, which precedes the load event that reports them.
///
/// A composed source runs its own balanced cycle around any load of its children, whether
/// it started the load or not (a child fetched directly, a next page): a child's
/// `willLoadData` outside a cycle opens one. Child edits outside a load are only changes.
package enum DataSourceEvent: Sendable {
    case willLoadData
    case didPartiallyLoad
    case finishedLoading
    case failedWithError(LoadFailure)
    case didChange(ChangeSet)
    /// A remote source's `isStale` changed: it shows rows from the persisted cache that no
    /// response has confirmed yet (`stale`, stored or last confirmed at `cachedAt`, seconds
    /// since 1970), or no longer does.
    case didChangeFreshness(stale: Bool, cachedAt: Double?)
    /// A paginated source's load state changed in at least one direction: all three, as they
    /// now are. Comes right after the `willLoadData` of the cycle that started a load, and right
    /// before the final event of the cycle that ended one; it is not part of the cycle.
    case didChangeLoadState(LoadStates)
    /// An action's mutation was committed, rolled back or queued (`performAction`); not part
    /// of a load cycle.
    case didSettleMutation(MutationSettlement)
}

package protocol DataSourceObserver: AnyObject {
    func dataSource(_ source: DataSource, emitted event: DataSourceEvent)
}

/// Instant Cocoa's `<ICDataSource>`: objects behind index paths, and a load cycle.
///
/// Every source lives on one thread (the daemon's main loop); events are delivered
/// synchronously to observers in the order they registered (held weakly). The daemon
/// registers first, when it creates a source, and parents register after (a parent can only
/// be created once its children exist), so for a synchronous chain a child's event reaches
/// the daemon before its parent reacts to it.
package class DataSource {
    package let name: String
    package let identity: Identity
    package private(set) var layout = Layout.empty
    package private(set) var isFetching = false
    /// Load cycles started (`willLoadData`s): a caller learns whether a call started one even
    /// when it ended one in flight first (a jump superseding a page).
    package private(set) var cyclesStarted = 0
    /// Each row's identity hash, parallel to `layout.sections`.
    private(set) var rowHashes: [RowArray<Int>] = []
    /// Bumped by one with every change to the rows (each `didChange`): clients match reads
    /// to changes with it, and followers skip recomputing from rows they have seen.
    package private(set) var revision = 0
    /// Built on the first `indexPath(for:)` after a change that it could not follow
    /// cheaply: sources that are never asked never pay for it.
    private var index: IdentityIndex?
    private var observers: [Observation] = []

    private struct Observation {
        weak var observer: DataSourceObserver?
    }

    init(name: String, identity: Identity) {
        self.name = name
        self.identity = identity
    }

    // MARK: What every kind answers

    /// `simple`, `sectioned`, `multi`, `remote`, `paginated`, `filtered`.
    package var kind: String { fatalError("subclass") }

    /// The sources this one is built on, in order.
    package var children: [DataSource] { [] }

    package var numberOfSections: Int { layout.sections.count }

    /// Rows in every section (clamped: counts are each far below Int.max).
    package var totalObjectCount: Int {
        layout.sections.reduce(0) { $0.addingReportingOverflow($1.count).partialValue }
    }

    package func numberOfObjects(inSection section: Int) -> Int {
        layout.sections.indices.contains(section) ? layout.sections[section].count : 0
    }

    package var sectionTitles: [JSON] { layout.titles }

    /// Every object, section after section.
    package var allObjects: [JSON] { layout.sections.flatMap { $0 } }

    package func object(at indexPath: IndexPath) throws(Refusal) -> JSON {
        try validate(indexPath)
        return layout.sections[indexPath.section][indexPath.item]
    }

    /// Where an object with the same identity is, or nil.
    package func indexPath(for object: JSON) -> IndexPath? {
        if index == nil { index = IdentityIndex(sections: layout.sections, hashes: rowHashes, identity: identity) }
        return index?.indexPath(of: object, identity: identity, sections: layout.sections, hashes: rowHashes)
    }

    /// Whether the identity index is built (for tests: edits that keep it, keep it).
    var hasIndex: Bool { index != nil }

    /// Up to `count` objects of `section` from `start`.
    package func objects(inSection section: Int, start: Int, count: Int?) throws(Refusal) -> [JSON] {
        try validate(section: section)
        let objects = layout.sections[section]
        guard start >= 0, start <= objects.count else {
            throw .outOfRange(argument: "start", value: start, valid: 0...objects.count, after: nil, numberOfObjects: objects.count)
        }
        // min first: start + count could overflow for a count near Int.max.
        let end = count.map { start + min(objects.count - start, max(0, $0)) } ?? objects.count
        guard end - start <= Self.maximumObjectsPerRead else {
            throw .readTooLong(count: count, rows: end - start, numberOfObjects: objects.count)
        }
        return objects.elements(in: start..<end)
    }

    /// The most rows one read (`objectsInSection`, `allObjects`) answers: an answer's size, and
    /// the memory it takes to make, stay bounded whatever the list's length.
    package static let maximumObjectsPerRead = 1_000_000

    /// Refuses `allObjects` on a source of more than `maximumObjectsPerRead` rows.
    package func checkAllObjectsReadable() throws(Refusal) {
        let total = totalObjectCount
        guard total <= Self.maximumObjectsPerRead else {
            throw .tooLongToReadWhole(source: name, rows: total)
        }
    }

    package func validate(section: Int) throws(Refusal) {
        guard layout.sections.indices.contains(section) else {
            throw .noSuchSection(section, numberOfSections: numberOfSections)
        }
    }

    package func validate(_ indexPath: IndexPath) throws(Refusal) {
        guard layout.sections.indices.contains(indexPath.section) else {
            throw .indexPathSectionOutOfRange(indexPath, numberOfSections: numberOfSections)
        }
        let count = layout.sections[indexPath.section].count
        guard indexPath.item >= 0, indexPath.item < count else {
            throw .indexPathItemOutOfRange(indexPath, numberOfObjects: count)
        }
    }

    /// Starts a load cycle.
    package func fetchData() { fatalError("subclass") }

    /// Stops a load in flight; local sources have none.
    package func cancelFetch(reason: CancelReason = .cancelFetch) {}

    /// Called on the last row being displayed; paginated sources load their next page.
    package func willDisplayObject(at indexPath: IndexPath) {}

    /// Whether rows can be loaded after the last (a paginated source with pages to come).
    package var hasMoreToLoad: Bool { false }

    /// Starts loading the rows after the last (the next page); false when none starts.
    @discardableResult
    package func loadMore() -> Bool { false }

    /// A client read this row (or the middle of a slice it read): a paginated source's window
    /// keeps the pages around it. Nothing loads.
    package func didRead(_ indexPath: IndexPath) {}

    /// The kind's own state for `describeSource`.
    package var kindState: SourceDescription.KindState { .simple }

    /// What `describeSource` reports.
    package func describe() -> SourceDescription {
        SourceDescription(
            name: name, kind: kind, sectionTitles: sectionTitles, counts: layout.sections.map(\.count),
            isFetching: isFetching, identityKey: identity.key, children: children.map(\.name),
            revision: revision, state: kindState)
    }

    // MARK: Observers

    package func addObserver(_ observer: DataSourceObserver) {
        observers.append(Observation(observer: observer))
    }

    package func removeObserver(_ observer: DataSourceObserver) {
        observers.removeAll { $0.observer === observer || $0.observer == nil }
    }

    func emit(_ event: DataSourceEvent) {
        switch event {
        case .willLoadData:
            isFetching = true
            cyclesStarted &+= 1
        case .finishedLoading, .failedWithError: isFetching = false
        case .didPartiallyLoad, .didChange, .didChangeFreshness, .didChangeLoadState, .didSettleMutation: break
        }
        emitting &+= 1
        for observation in observers {
            observation.observer?.dataSource(self, emitted: event)
        }
        emitting &-= 1
        guard emitting == 0, !afterDelivery.isEmpty else { return }
        let work = afterDelivery
        afterDelivery = []
        for item in work { item() }
    }

    /// Events being delivered now (an observer's reaction can emit another).
    private var emitting = 0
    private var afterDelivery: [() -> Void] = []

    /// Runs `work` once every observer has been told of the event being delivered (at once
    /// when none is): an observer that starts a load of this source from its reaction does
    /// it after the others have seen the end of the last one, so each sees the cycles in order.
    package func whenEventsDelivered(_ work: @escaping () -> Void) {
        if emitting == 0 { work() } else { afterDelivery.append(work) }
    }

    /// What a source built on one child does with its child's load events: its cycle mirrors
    /// the child's (its `willLoadData` when the child's comes, its final event when the
    /// child's comes, a child failure its own naming the child), after `catchUp` has brought
    /// its rows up to the child's. Changes are the caller's to follow.
    func mirrorLoadCycle(of child: DataSource, _ event: DataSourceEvent, catchUp: () -> Void) {
        switch event {
        case .willLoadData:
            if !isFetching { emit(.willLoadData) }
        case .didPartiallyLoad:
            catchUp()
            if isFetching { emit(.didPartiallyLoad) }
        case .finishedLoading:
            catchUp()
            if isFetching { emit(.finishedLoading) }
        case .failedWithError(let error):
            catchUp()
            if isFetching { emit(.failedWithError(.child(source: child.name, error))) }
        case .didChange, .didChangeFreshness, .didChangeLoadState, .didSettleMutation:
            break
        }
    }

    /// Replaces the rows and tells observers what changed (nothing, if nothing did).
    /// `hashes`, when given, are the new rows' identity hashes (a follower passing on rows
    /// with the hashes it was given); otherwise they are computed, for a single section only
    /// for the rows between its unchanged head and tail. `keptHead` (single section only): a
    /// number of leading rows the caller knows are unchanged, so that appending to a long
    /// list costs the rows appended, not a comparison of every row before them.
    func replaceLayout(_ new: Layout, hashes givenHashes: [RowArray<Int>]? = nil, keptHead: Int = 0) {
        var hashes = givenHashes ?? []
        if layout.sections.count == 1, new.sections.count == 1 {
            // One section on both sides (simple, remote, paginated): hash and re-index only
            // what lies after the unchanged head, so appending a page to a long list costs
            // the page, not the list. Equal rows have equal identities, so the head's and the
            // tail's hashes carry over.
            let old = layout.sections[0], rows = new.sections[0], oldHashes = rowHashes[0]
            let shorter = min(old.count, rows.count)
            var head = min(keptHead, shorter)
            while head < shorter, old[head] == rows[head] { head += 1 }
            var tail = 0
            while tail < shorter - head, old[old.count - 1 - tail] == rows[rows.count - 1 - tail] { tail += 1 }
            if givenHashes == nil {
                var merged = oldHashes
                merged.replaceSubrange(head..<old.count - tail, with: identity.hashes(of: rows, in: head..<rows.count - tail))
                hashes = [merged]
            }
            if index?.isShifted == true {
                index = nil
            } else {
                index?.reindex(from: head, oldHashes: oldHashes[head...], new: new.sections, hashes: hashes, identity: identity)
            }
        } else {
            if givenHashes == nil { hashes = identity.hashes(of: new.sections) }
            index = nil
        }
        let singleSection = layout.sections.count == 1 && new.sections.count == 1
        let changes = ChangeSet.between(
            old: layout, oldHashes: rowHashes, new: new, newHashes: hashes, identity: identity,
            keptHead: singleSection ? keptHead : 0)
        layout = new
        rowHashes = hashes
        guard !changes.isEmpty else { return }
        revision += 1
        emit(.didChange(changes))
    }

    /// Replaces the rows with a change set the caller worked out without comparing rows (a
    /// filtered source changing its filter over the same child rows knows which rows stay,
    /// leave and arrive): what `replaceLayout` does, without its diff.
    func replaceLayout(_ new: Layout, hashes: [RowArray<Int>], knownChanges changes: ChangeSet) {
        layout = new
        rowHashes = hashes
        index = nil
        guard !changes.isEmpty else { return }
        commit(changes, edit: nil)
    }

    // MARK: Edits that know what they change

    /// The edit that made the current revision, while its `didChange` is being delivered,
    /// when it was one of the direct edits below: a follower that keeps no copy of this
    /// source's rows reads the rows removed or replaced from it. nil otherwise.
    private(set) var lastEdit: RowEdit?

    /// Inserts rows into a one-section source at `start`, in place: the change set is the
    /// rows inserted, and the cost is theirs (plus moving the row references after them).
    func insertRows(_ rows: [JSON], at start: Int) {
        precondition(layout.sections.count == 1, "direct edits need one section")
        guard !rows.isEmpty else { return }
        let hashes = identity.hashes(of: rows)
        layout.sections[0].insert(contentsOf: rows, at: start)
        rowHashes[0].insert(contentsOf: hashes, at: start)
        if index?.inserted(hashes, at: start, hashes: rowHashes) == false { index = nil }
        var changes = ChangeSet()
        changes.inserted.append(section: 0, items: start..<start + rows.count)
        commit(changes, edit: .inserted(at: start, rows: rows, hashes: hashes))
    }

    /// Removes rows `range` of a one-section source, in place.
    func removeRows(_ range: Range<Int>) {
        precondition(layout.sections.count == 1, "direct edits need one section")
        guard !range.isEmpty else { return }
        let rows = layout.sections[0].elements(in: range), hashes = rowHashes[0].elements(in: range)
        if index?.removed(hashes[...], at: range.lowerBound) == false { index = nil }
        layout.sections[0].removeSubrange(range)
        rowHashes[0].removeSubrange(range)
        var changes = ChangeSet()
        changes.deleted.append(section: 0, items: range)
        commit(changes, edit: .removed(at: range.lowerBound, rows: rows, hashes: hashes))
    }

    /// Replaces rows of a one-section source by objects of the same identity (so their
    /// hashes and the index stay), in place; a replacement equal to its row changes nothing.
    func replaceRows(_ replacements: [Int: JSON]) {
        precondition(layout.sections.count == 1, "direct edits need one section")
        var changed: [(item: Int, old: JSON)] = []
        for (item, object) in replacements.sorted(by: { $0.key < $1.key }) {
            let old = layout.sections[0][item]
            guard old != object else { continue }
            layout.sections[0][item] = object
            changed.append((item, old))
        }
        guard !changed.isEmpty else { return }
        var changes = ChangeSet()
        changes.updated = IndexPathList(changed.map { IndexPath(section: 0, item: $0.item) })
        commit(changes, edit: .updated(changed))
    }

    /// Replaces the row at `item` of a one-section source by one of another identity (a
    /// temporary row by the server's), in place: one change set, the row deleted and the new
    /// one inserted at the same index.
    func replaceRowChangingIdentity(at item: Int, with object: JSON) {
        precondition(layout.sections.count == 1, "direct edits need one section")
        layout.sections[0][item] = object
        rowHashes[0][item] = identity.hash(of: object)
        index = nil
        var changes = ChangeSet()
        changes.deleted.append(section: 0, items: item..<item + 1)
        changes.inserted.append(section: 0, items: item..<item + 1)
        commit(changes, edit: nil)
    }

    /// Replaces the rows of a one-section source from `head` on with `tail`, in place. The
    /// rows before `head` are neither copied, compared nor re-indexed, so appending a page
    /// to a long list costs the page. The change set is the one `replaceLayout` gives with
    /// `keptHead: head`: the diff of the two tails, in the list's coordinates. `known`: the
    /// tail's identity hashes when the caller has them (a page hashed for its duplicates).
    func replaceTail(from head: Int, with tail: [JSON], hashes known: [Int]? = nil) {
        precondition(layout.sections.count == 1 && head <= layout.sections[0].count, "a tail of one section")
        precondition(known.map { $0.count == tail.count } ?? true, "a hash a row")
        assert(known.map { $0 == identity.hashes(of: tail) } ?? true, "the hashes given are the rows' identity hashes")
        let end = layout.sections[0].count
        let oldTail = layout.sections[0].elements(in: head..<end), oldHashes = rowHashes[0].elements(in: head..<end)
        let hashes = known ?? identity.hashes(of: tail)
        var changes =
            Self.rowsAddedOrRemovedOnly(old: oldTail, oldHashes: oldHashes, new: tail, newHashes: hashes)
            ?? ChangeSet.between(
                old: Layout(sections: [RowArray(oldTail)], titles: [""]), oldHashes: [RowArray(oldHashes)],
                new: Layout(sections: [RowArray(tail)], titles: [""]), newHashes: [RowArray(hashes)], identity: identity)
        func shifted(_ path: IndexPath) -> IndexPath { IndexPath(section: 0, item: path.item + head) }
        changes.deleted = changes.deleted.shifted(by: head)
        changes.inserted = changes.inserted.shifted(by: head)
        changes.updated = changes.updated.shifted(by: head)
        changes.moved = changes.moved.map { ChangeSet.Move(from: shifted($0.from), to: shifted($0.to)) }
        layout.sections[0].replaceSubrange(head..., with: tail)
        rowHashes[0].replaceSubrange(head..., with: hashes)
        if index?.isShifted == true {
            index = nil
        } else {
            index?.reindex(from: head, oldHashes: oldHashes[...], new: layout.sections, hashes: rowHashes, identity: identity)
        }
        guard !changes.isEmpty else { return }
        commit(changes, edit: nil)
    }

    /// Replaces every row of a one-section source without comparing them: the change set
    /// deletes every old row and inserts every new one. For a list whose rows are positions,
    /// not identities (a counted list taking its size), where matching a million rows by
    /// identity would cost the million and say nothing more.
    func replaceAllRows(_ rows: RowArray<JSON>, hashes: RowArray<Int>) {
        precondition(layout.sections.count == 1 && rows.count == hashes.count, "one section, a hash a row")
        var changes = ChangeSet()
        changes.deleted.append(section: 0, items: 0..<layout.sections[0].count)
        changes.inserted.append(section: 0, items: 0..<rows.count)
        layout.sections[0] = rows
        rowHashes[0] = hashes
        index = nil
        guard !changes.isEmpty else { return }
        commit(changes, edit: nil)
    }

    /// Edits a one-section list whose rows keep their positions (a counted list): it grows or
    /// shrinks at its end to `count` (new rows are `filler`), then each of `overwrites` puts a
    /// row at its position, whatever its identity (an unloaded row becomes the object loaded
    /// there). The change set: rows deleted or inserted at the end, the overwritten rows that
    /// were there before as `updated`; an overwrite identical to its row changes nothing.
    func overwriteRows(count: Int, filler: JSON, fillerHash: Int, overwrites: [(item: Int, row: JSON)]) {
        precondition(layout.sections.count == 1 && count >= 0, "one section")
        let oldCount = layout.sections[0].count
        var changes = ChangeSet()
        if count < oldCount {
            changes.deleted.append(section: 0, items: count..<oldCount)
            layout.sections[0].removeSubrange(count...)
            rowHashes[0].removeSubrange(count...)
        } else if count > oldCount {
            changes.inserted.append(section: 0, items: oldCount..<count)
            layout.sections[0].append(repeating: filler, count: count - oldCount)
            rowHashes[0].append(repeating: fillerHash, count: count - oldCount)
        }
        for (item, row) in overwrites where item < count {
            guard !layout.sections[0][item].isIdentical(to: row) else { continue }
            layout.sections[0][item] = row
            rowHashes[0][item] = row.isIdentical(to: filler) ? fillerHash : identity.hash(of: row)
            if item < oldCount { changes.updated.append(IndexPath(section: 0, item: item)) }
        }
        changes.updated.sort()
        index = nil
        guard !changes.isEmpty else { return }
        commit(changes, edit: nil)
    }

    /// The change set of two tails that are the same storage at both ends with only new
    /// rows, or only old rows, between (a page appended before a loading row): those rows,
    /// inserted or deleted, without matching anything. Nil when rows changed on both sides,
    /// or when a changed row's identity hash is also a kept row's, where `ChangeSet.between`
    /// could pair them otherwise; it then decides.
    static func rowsAddedOrRemovedOnly(old: [JSON], oldHashes: [Int], new: [JSON], newHashes: [Int]) -> ChangeSet? {
        var prefix = 0
        while prefix < old.count, prefix < new.count, old[prefix].isIdentical(to: new[prefix]) { prefix += 1 }
        var suffix = 0
        while suffix < old.count - prefix, suffix < new.count - prefix,
            old[old.count - 1 - suffix].isIdentical(to: new[new.count - 1 - suffix])
        { suffix += 1 }
        let oldMiddle = prefix..<(old.count - suffix), newMiddle = prefix..<(new.count - suffix)
        guard oldMiddle.isEmpty || newMiddle.isEmpty else { return nil }
        let keptHashes = Set(oldHashes[..<prefix] + oldHashes[(old.count - suffix)...])
        let changedHashes = oldMiddle.isEmpty ? newHashes[newMiddle] : oldHashes[oldMiddle]
        guard !changedHashes.contains(where: keptHashes.contains) else { return nil }
        var changes = ChangeSet()
        if oldMiddle.isEmpty {
            changes.inserted = IndexPathList(newMiddle.map { IndexPath(section: 0, item: $0) })
        } else {
            changes.deleted = IndexPathList(oldMiddle.map { IndexPath(section: 0, item: $0) })
        }
        return changes
    }

    /// Tells observers about an edit made in place: the new revision, then `didChange`.
    private func commit(_ changes: ChangeSet, edit: RowEdit?) {
        revision += 1
        lastEdit = edit
        emit(.didChange(changes))
        lastEdit = nil
    }

    // MARK: Followers editing their rows in place

    /// Edits rows of any layout in place, for a follower applying its child's edit; the
    /// follower then calls `commitFollowing(_:)` with the change set it worked out.
    func insertRow(_ object: JSON, hash: Int, at path: IndexPath) {
        layout.sections[path.section].insert(object, at: path.item)
        rowHashes[path.section].insert(hash, at: path.item)
    }

    func removeRow(at path: IndexPath) {
        layout.sections[path.section].remove(at: path.item)
        rowHashes[path.section].remove(at: path.item)
    }

    func replaceRow(at path: IndexPath, with object: JSON) {
        layout.sections[path.section][path.item] = object
    }

    func insertSection(at section: Int, title: JSON, identity sectionIdentity: JSON) {
        layout.sections.insert([], at: section)
        layout.titles.insert(title, at: section)
        layout.sectionIdentities.insert(sectionIdentity, at: section)
        rowHashes.insert([], at: section)
    }

    func removeSection(at section: Int) {
        layout.sections.remove(at: section)
        layout.titles.remove(at: section)
        layout.sectionIdentities.remove(at: section)
        rowHashes.remove(at: section)
    }

    /// Ends a follower's edit in place: the index is rebuilt when next asked for.
    func commitFollowing(_ changes: ChangeSet) {
        index = nil
        guard !changes.isEmpty else { return }
        commit(changes, edit: nil)
    }
}

/// One direct edit of a one-section source (see `DataSource.lastEdit`).
enum RowEdit {
    case inserted(at: Int, rows: [JSON], hashes: [Int])
    case removed(at: Int, rows: [JSON], hashes: [Int])
    /// The items replaced, with their old values (the new ones are the source's rows).
    case updated([(item: Int, old: JSON)])
}
