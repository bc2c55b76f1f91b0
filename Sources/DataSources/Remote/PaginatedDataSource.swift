import JSONKit

/// Instant Cocoa's `ICPaginatedDataSource`, for any common API shape: a collection fetched
/// page by page, where the next request comes from a page number, an offset, a cursor or a
/// URL the response gives (see `PaginatorConfiguration.Strategy`).
///
/// `fetchData` loads the first page and replaces the rows when it arrives. While more
/// pages may remain, a trailing loading placeholder (if stored) ends the list, so showing
/// it asks for the next page. `fetchNextPage` appends the next page; a failed page leaves
/// the loaded rows, puts the error placeholder (if stored) in the trailing row, and is
/// asked for again by the next `fetchNextPage`.
///
/// A paging run (from the first page on) never requests forever: a next request already
/// made in the run, pages that bring no new object, or more pages than allowed end it with
/// a `loop` failure, keeping the rows.
///
/// The paging state is small value types (`Paginated/`), each fed events and answering what
/// to do; this class owns them, makes the requests and changes the rows they say.
package final class PaginatedDataSource: RemoteCollection {
    package let paginator: PaginatorConfiguration

    // The machines, and what only this class and its extensions (`PaginatedDataSource+*.swift`)
    // change: Swift has no access level for a class's files, so these are the module's to read.
    var run: PagingRun
    var loads = LoadStateMachine()
    private(set) var counted: CountedPlaceholders
    var jumps: Jumps
    let cache: CacheRestore
    /// Where the pages that can come back from the persisted cache sit in the entry last
    /// stored or restored (`CacheRestore.positions(of:)`).
    var storedPositions: [PageRequest: Int] = [:]
    /// The stored pages a reopened list still reads, in turns, while its first load cycle
    /// lasts (`PaginatedDataSource+Reopen.swift`); nil otherwise.
    var restoring: StoredRunReading?
    /// Tells a turn deferred for an earlier reading from one for the reading under way.
    var restoringGeneration = 0
    /// The final event of the reopened list's first cycle, held until the reading ends.
    var cycleEndAfterRestoring: DataSourceEvent?

    override func holdEveryRow() { finishRestoring() }

    override func cacheTouched(at storedAt: Double) {
        // A `304` confirmed the entry being read: its pages are still the ones to read.
        restoring?.entry.storedAt = storedAt
    }
    private var liveRefresh = LiveRefresh()
    var failures: PageFailures
    var loadedOnce = false
    /// The identity hash of `Placeholder.unloadedStored`, the same for every unloaded row.
    private lazy var unloadedHash = identity.hash(of: Placeholder.unloadedStored)

    /// What `describeSource.loadStates` and `didChangeLoadState` last said.
    package var loadStates: LoadStates { loads.published }
    var duplicatesDropped: Int { run.duplicates.dropped }
    var currentPage: Int { run.currentPage }
    /// The rows the loaded pages account for (equal to the objects held): for the fuzzers.
    var rowsKeptByPages: Int { run.window.rowsKept }
    var hasMorePages: Bool { run.plan.next != nil }
    package override var hasMoreToLoad: Bool { hasMorePages }
    @discardableResult
    package override func loadMore() -> Bool { fetchNextPage() }

    /// The most rows a counted list has (16 bytes of memory each, unloaded).
    package static let maximumCountedRows = CountedPlaceholders.maximumRows
    /// The most a counted list has for a client that takes change sets path by path (no
    /// `changeRanges`): its first change set lists every row, one path each.
    package static let maximumCountedRowsWithoutRanges = 100_000
    /// `maximumCountedRows`, or `maximumCountedRowsWithoutRanges` for a client without ranges.
    package var maximumCountedRowsForClient = maximumCountedRows

    package override var kind: String { "paginated" }
    override var metadataHeader: String? { paginator.metadataHeader }

    package init(
        name: String, identity: Identity, configuration: RemoteConfiguration, paginator: PaginatorConfiguration,
        loader: RemoteLoading
    ) {
        self.paginator = paginator
        run = PagingRun(paginator: paginator, identity: identity)
        cache = CacheRestore(paginator: paginator, duplicatePolicy: run.duplicates.policy)
        counted = CountedPlaceholders(paginator: paginator)
        jumps = Jumps(paginator: paginator)
        failures = PageFailures(paginator: paginator)
        super.init(name: name, identity: identity, configuration: configuration, loader: loader)
    }

    // MARK: Loads

    /// Loads the first page. A list never loaded shows its persisted pages at once (if any)
    /// and revalidates the first; loaded rows stay while the first page is asked for again,
    /// conditionally when its response gave validators: a `304` keeps every page loaded.
    package override func fetchData() {
        // The stored run read whole: the new cycle revalidates all of it.
        finishRestoring()
        if isFetching { endCycleAsCancelled("superseded by a new fetchData") }
        lastWarning = nil
        begin(.refresh)
        if !loadedOnce { reopenFromCache() }
        if !loadedOnce, !showsPreviousQuery, placeholders.contains(.loading) { setRows([Placeholder.loadingRow]) }
        let start = paginator.firstRequest
        let first = run.window.pages.first.flatMap { $0.request == start && !$0.validators.isEmpty ? $0.validators : nil }
        load(start, .refresh, validators: first)
    }

    /// Why `fetchPreviousPage` would do nothing, or nil when it would load a page.
    package var previousPageRefusal: String? { run.refusal(.prepend, isFetching: isFetching, loadedOnce: loadedOnce) }

    /// Loads the page before the first one loaded, inserting its rows at the top; false (and
    /// nothing happens) when `previousPageRefusal` says why not.
    @discardableResult
    package func fetchPreviousPage() -> Bool {
        guard previousPageRefusal == nil, let previous = run.plan.previous else { return false }
        begin(.prepend)
        let cached = storedCopy(of: previous)
        load(previous, .prepend, validators: cached?.validators, cached: cached)
        return true
    }

    /// Why `fetchNextPage` would do nothing, or nil when it would load a page.
    package var nextPageRefusal: String? { run.refusal(.append, isFetching: isFetching, loadedOnce: loadedOnce) }

    /// Loads the next page; false (and nothing happens) while fetching or when none remain.
    @discardableResult
    package func fetchNextPage() -> Bool {
        guard nextPageRefusal == nil, let next = run.plan.next else { return false }
        begin(.append)
        compose(keptHead: objects.count)
        let cached = storedCopy(of: next)
        load(next, .append, validators: cached?.validators, cached: cached)
        return true
    }

    /// Why `retry` would do nothing, or nil when a direction has failed and can be asked for again.
    package var retryRefusal: String? {
        guard case .refused(let reason) = loads.retry(isFetching: isFetching, ends: ends) else { return nil }
        return reason
    }

    /// Paging 3's `retry()`: asks again for the failed direction only (`LoadStateMachine.retry`).
    /// Nil (and nothing happens) when `retryRefusal` says why not.
    @discardableResult
    package func retry() -> LoadDirection? {
        guard case .load(let direction) = loads.retry(isFetching: isFetching, ends: ends) else { return nil }
        switch direction {
        case .refresh:
            fetchData()
            return .refresh
        case .prepend: return fetchPreviousPage() ? .prepend : nil
        case .append: return fetchNextPage() ? .append : nil
        }
    }

    package override func cancelFetch(reason: CancelReason = .cancelFetch) {
        guard isFetching else { return }
        abandonRequest()
        jumps.landed()
        compose(keptHead: objects.count)
        endCycleAsCancelled(reason.message)
    }

    override func startNewQuery(keepingRows: Bool) {
        stopRestoring()
        loadedOnce = false
        run.forget()
        jumps.forget()
        loads.forgetFailures()
        counted.forget(keepingRows: keepingRows)
        defer { publishLoadStates() }
        guard !keepingRows else { return }
        objects = []
        setRows(placeholders.contains(.loading) ? [Placeholder.loadingRow] : [])
    }

    // MARK: Displays

    package override func willDisplayObject(at indexPath: IndexPath) {
        if indexPath.section == 0, indexPath.item >= 0 {
            jumps.displayed(indexPath.item)
            run.window.focus(on: indexPath.item)
            if counted.shown != nil { return pageTowardsDisplayedRow() }
        }
        guard let last = lastIndexPath, indexPath.section == last.section else { return }
        perform(jumps.nearEnds(displayed: indexPath.item, lastItem: last.item))
    }

    package override func didRead(_ indexPath: IndexPath) {
        guard paginator.window != nil, indexPath.section == 0, indexPath.item >= 0 else { return }
        // Reads steer the window only; what loads follows the rows displayed.
        run.window.focus(on: indexPath.item)
    }

    /// Why this source cannot jump, or nil when it can (`describeSource.capabilities`).
    package var jumpRefusal: String? { jumps.refusal(sizes) }

    /// Why displaying `indexPath` would be refused (`Jumps.displayRefusal`), or nil.
    package func displayRefusal(at indexPath: IndexPath) -> String? {
        guard indexPath.section == 0 else { return nil }
        return jumps.displayRefusal(of: indexPath.item, run: counted.shown, sizes: sizes)
    }

    private var sizes: Jumps.Sizes {
        Jumps.Sizes(metadataPageSize: run.metadata.pageSize, firstPageReceived: run.window.pages.first?.received)
    }

    /// In a counted list, the load towards the row last displayed. Also called when a page
    /// arrives, so that the pages up to a row displayed while another loaded follow one another.
    func pageTowardsDisplayedRow() {
        perform(jumps.pageTowardsDisplayedRow(run: counted.shown, isFetching: isFetching, sizes: sizes))
    }

    private func perform(_ action: Jumps.Action) {
        switch action {
        case .none: break
        case .jump(let item, let request): jump(to: item, request)
        case .fetchNext: fetchNextPage()
        case .fetchPrevious: fetchPreviousPage()
        case .nearEnds(let next, let previous):
            if next, fetchNextPage() { return }
            if previous, run.plan.previous != nil { fetchPreviousPage() }
        }
    }

    /// Loads the page holding row `item` as a new run: the rows loaded so far become
    /// unloaded rows again, and no page between is requested.
    private func jump(to item: Int, _ request: PageRequest) {
        // The new run replaces the stored one: its pages not yet read stay unread.
        stopRestoring()
        if isFetching { endCycleAsCancelled("superseded by a jump to row \(item)") }
        jumps.jumping(to: item)
        begin(.refresh)
        load(request, .refresh)
    }

    package override func object(at indexPath: IndexPath) throws(Refusal) -> JSON {
        CountedPlaceholders.presented(try super.object(at: indexPath), at: indexPath.item)
    }

    package override func objects(inSection section: Int, start: Int, count: Int?) throws(Refusal) -> [JSON] {
        counted.presented(try super.objects(inSection: section, start: start, count: count), from: start)
    }

    package override var allObjects: [JSON] { counted.presented(super.allObjects, from: 0) }

    // MARK: Load states

    private var ends: LoadStateMachine.Ends {
        LoadStateMachine.Ends(loadedOnce: loadedOnce, hasPrevious: run.plan.previous != nil, hasNext: run.plan.next != nil)
    }

    /// Sends `didChangeLoadState` when the load states differ from the ones last sent.
    private func publishLoadStates() {
        if let states = loads.publish(ends) { emit(.didChangeLoadState(states)) }
    }

    override func emit(_ event: DataSourceEvent) {
        if restoring != nil {
            switch event {
            case .failedWithError(.fetch(let error)) where error.kind == .cancelled:
                // Cancelled, the reading stops; a cycle whose answer came ends as that answer
                // said, and the cancel comes to nothing.
                restoring = nil
                if let ended = cycleEndAfterRestoring {
                    cycleEndAfterRestoring = nil
                    return emit(ended)
                }
            case .finishedLoading, .failedWithError:
                // A reopened list's first cycle ends once every stored page is shown: the last
                // turn sends its final event.
                cycleEndAfterRestoring = event
                return
            default: break
            }
        }
        let publication = loads.goingOut(event)
        if publication == .before { publishLoadStates() }
        super.emit(event)
        if publication == .after { publishLoadStates() }
    }

    // MARK: Requests

    /// A load in `direction` starts: a live refresh stops, and the retry budget is whole again.
    private func begin(_ direction: LoadDirection) {
        stopRefresh()
        loads.started(direction)
        emit(.willLoadData)
        failures.started()
    }

    // MARK: The rows, the window, the cache, live lists

    /// The rows for the current state, as `CountedPlaceholders` says. Not counted: the objects,
    /// then the trailing placeholder; `keptHead` leading objects are the rows they were, and
    /// only the rows after them are built and compared (see `replaceTail`). `hashesAfterHead`:
    /// the identity hashes of the objects after the head, when the caller has them.
    func compose(keptHead: Int, hashesAfterHead: [Int]? = nil) {
        let run = CountedPlaceholders.Run(
            loadedOnce: loadedOnce, start: run.window.start, startKnown: run.window.startKnown, objectCount: objects.count,
            metadata: run.metadata, pageSize: jumps.pageSize(sizes), hasMorePages: hasMorePages, appendFailed: loads.appendError != nil,
            maximumRows: maximumCountedRowsForClient)
        switch counted.compose(run, objects: objects, identity: identity, unloadedHash: unloadedHash) {
        case .replaceAll(let rows, let hashes):
            replaceAllRows(rows, hashes: hashes)
        case .overwrite(let count, let overwrites):
            overwriteRows(count: count, filler: Placeholder.unloadedStored, fillerHash: unloadedHash, overwrites: overwrites)
        case .uncount:
            let rows = objects + (trailingPlaceholder.map { [$0] } ?? [])
            replaceAllRows(RowArray(rows), hashes: RowArray(identity.hashes(of: rows)))
        case .trailing:
            var rows = Array(objects[keptHead...])
            if let trailingPlaceholder { rows.append(trailingPlaceholder) }
            let hashes = hashesAfterHead.map { known in known + rows[known.count...].map(identity.hash(of:)) }
            setRows(keeping: keptHead, tail: rows, hashes: hashes)
        }
    }

    private var trailingPlaceholder: JSON? {
        CountedPlaceholders.trailingRow(
            appendError: loads.appendError, hasMorePages: hasMorePages, noResults: objects.isEmpty && loadedOnce, stored: placeholders)
    }

    /// Drops the pages `PageWindow` says. A page dropped at the top becomes the page before
    /// (`fetchPreviousPage` and displaying the first row load it again), one at the bottom the
    /// next page. A counted list's rows keep their positions: a dropped page's rows become
    /// unloaded rows, in one change once the window holds, instead of leaving the list.
    func applyWindow(arrived: LoadDirection) {
        let countedRows = counted.shown != nil
        var dropped = false
        while let drop = run.nextDrop(objectCount: objects.count, counted: countedRows, arrived: arrived) {
            dropped = true
            let rows = drop.rows(among: objects.count)
            objects.removeSubrange(rows)
            if !countedRows { removeRows(rows) }
            if !countedRows, drop.end == .prepend { jumps.rowsRemovedAbove(rows.count) }
            loads.endMoved(drop.end)
            if !countedRows, drop.end == .append { compose(keptHead: objects.count) }
            run.holdOnly(objects)
        }
        if countedRows, dropped { compose(keptHead: 0) }
    }

    /// Stores the run, writing only the pages after those the cache holds as they are.
    func storeLoadedPages() {
        guard
            let entry = cache.entry(
                of: run.window.pages, objects: objects, unchanged: run.window.unchangedSinceStored, currentPage: currentPage,
                duplicatesDropped: run.duplicates.dropped, maximumPages: configuration.cache.maximumPages)
        else { return }
        guard storeInCache(entry) else { return }
        run.window.stored()
        storedPositions = cache.positions(of: run.window.pages)
    }

    override func cacheProblem(in cached: CachedPages) -> String? {
        cache.problem(in: cached, identity: identity, ownOrigin: configuration.ownOrigin) { self.mappedRowsProblem($0, field: $1) }
    }

    /// Takes up `pages` whole (`PagingRun.adopt`); answers the kept rows' hashes when `hashes` are given.
    @discardableResult
    func adopt(
        _ pages: [(page: LoadedPage, rows: [JSON])], hashes: [[Int]]? = nil, duplicatesDropped dropped: Int? = nil
    ) -> [Int]? {
        let kept = run.adopt(pages, hashes: hashes, duplicatesDropped: dropped)
        objects = kept.rows
        loadedOnce = true
        lastError = nil
        loads.adopted()
        return hashes == nil ? nil : kept.hashes
    }

    /// Walks the loaded pages again (`LiveRefresh`) and, if any page came back different,
    /// replaces the rows once at the end: one `didChange` with the difference. A failed
    /// request changes nothing.
    @discardableResult
    package override func refresh(completion: @escaping (RefreshOutcome) -> Void) -> Bool {
        guard !isFetching, !isRefreshing, loadedOnce, !run.window.pages.isEmpty else { return false }
        beginRefresh(completion)
        performRefresh(liveRefresh.start(held: run.window.pages))
        return true
    }

    private func performRefresh(_ action: LiveRefresh.Action) {
        switch action {
        case .request(let page, let validators):
            let target = paginator.target(of: page)
            let requestURL = url(of: target)
            request(target, validators: validators) { [weak self] result in
                guard let self else { return }
                self.performRefresh(
                    self.liveRefresh.answered(
                        result, plan: self.run.plan, links: self.links(requestURL), runStart: self.run.window.start,
                        held: self.run.window.pages, objects: self.objects))
            }
        case .fail(let error):
            endRefresh(.failed(error))
        case .finish where liveRefresh.unchanged(held: run.window.pages):
            for (index, entry) in liveRefresh.walked.enumerated() { run.window.revalidated(index, entry.page.validators) }
            touchCache()
            confirmed()
            endRefresh(.unchanged)
        case .finish:
            let before = revision
            adopt(liveRefresh.walked)
            rebaseObjects(in: 0..<objects.count, startsRun: true)
            compose(keptHead: 0)
            confirmed()
            storeLoadedPages()
            endRefresh(revision == before ? .unchanged : .changed)
        }
    }

    package override var kindState: SourceDescription.KindState { .paginated(remoteState, pagingState) }

    // MARK: Edits of single rows (actions)

    override var objectsStartInLayout: Int { counted.shown != nil ? run.window.start : 0 }

    override func keepPagesInStep(with edit: ObjectEdit) {
        switch edit {
        case .removed(let index): run.window.objectRemoved(at: index)
        case .inserted(let index, let row):
            run.window.objectInserted(at: index)
            run.hold(row)
        case .replaced(_, let row, let sameIdentity): if !sameIdentity { run.hold(row) }
        }
    }

    /// Counted rows keep their places: they are composed again. Otherwise the row changes in
    /// place and the trailing row follows the objects.
    override func showEdit(_ edit: ObjectEdit) {
        if counted.shown != nil { return compose(keptHead: 0) }
        super.showEdit(edit)
        if case .replaced = edit { return }
        compose(keptHead: objects.count)
    }
}
