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

    private var plan: RequestPlan
    private var window: PageWindow
    private var duplicates: DuplicateFilter
    private var loads = LoadStateMachine()
    private var counted: CountedPlaceholders
    private var jumps: Jumps
    private let cache: CacheRestore
    private var liveRefresh = LiveRefresh()
    /// The page number of the last page loaded (page numbers), else the pages loaded in this run.
    private(set) var currentPage: Int
    private var metadata = PageMetadata()
    private var loadedOnce = false
    private var retriesLeft = 0
    /// The identity hash of `Placeholder.unloadedStored`, the same for every unloaded row.
    private lazy var unloadedHash = identity.hash(of: Placeholder.unloadedStored)

    /// What `describeSource.loadStates` and `didChangeLoadState` last said.
    package var loadStates: LoadStates { loads.published }
    var duplicatesDropped: Int { duplicates.dropped }
    /// The rows the loaded pages account for (equal to the objects held): for the fuzzers.
    var rowsKeptByPages: Int { window.rowsKept }
    private var hasMorePages: Bool { plan.next != nil }

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
        plan = RequestPlan(paginator: paginator)
        window = PageWindow(limits: paginator.window)
        // A counted list keeps every row where the server put it (a dropped one would move
        // every row after it off its index).
        let duplicatePolicy = paginator.placeholderMode == .counted ? .keep : paginator.duplicates
        duplicates = DuplicateFilter(policy: duplicatePolicy, identity: identity)
        cache = CacheRestore(paginator: paginator, duplicatePolicy: duplicatePolicy)
        counted = CountedPlaceholders(paginator: paginator)
        jumps = Jumps(paginator: paginator)
        currentPage = paginator.firstPage.addingClamped(-1)
        super.init(name: name, identity: identity, configuration: configuration, loader: loader)
    }

    // MARK: Loads

    /// Loads the first page. A list never loaded shows its persisted pages at once (if any)
    /// and revalidates the first; loaded rows stay while the first page is asked for again,
    /// conditionally when its response gave validators: a `304` keeps every page loaded.
    package override func fetchData() {
        stopRefresh()
        if isFetching { endCycleAsCancelled("superseded by a new fetchData") }
        loads.started(.refresh)
        emit(.willLoadData)
        if !loadedOnce, let (cached, storedAt) = cachedPages() {
            // `cachedPages()` has checked the entry and worked out its rows' hashes.
            let run = cache.restoredRun(from: cached, collectionURL: url(of: .collection(query: [])))
            let hashes = adopt(run, hashes: cached.pages.map(\.hashes), duplicatesDropped: cached.duplicatesDropped)
            compose(keptHead: 0, hashesAfterHead: hashes)
            warmOpenCosts.mark("changeset")
            showingCachedRows(storedAt: storedAt)
            reportWarmOpen()
        }
        if !loadedOnce, !showsPreviousQuery, placeholders.contains(.loading) { setRows([Placeholder.loadingRow]) }
        retriesLeft = paginator.retryAfterRetries
        let start = paginator.firstRequest
        let first = window.pages.first.flatMap { $0.request == start && !$0.validators.isEmpty ? $0.validators : nil }
        load(start, .refresh, validators: first)
    }

    /// Why `fetchPreviousPage` would do nothing, or nil when it would load a page.
    package var previousPageRefusal: String? {
        if isFetching { return "a fetch is in flight" }
        if !loadedOnce { return "no page is loaded yet: call fetchData first" }
        if plan.previous != nil { return nil }
        if let unsupported = paginator.previousPageUnsupported { return unsupported }
        switch window.pages.first?.request {
        case .first?, nil: return "the first page is loaded: there is no page before it"
        default: return "the server named no page before the first one loaded"
        }
    }

    /// Loads the page before the first one loaded, inserting its rows at the top; false (and
    /// nothing happens) when `previousPageRefusal` says why not.
    @discardableResult
    package func fetchPreviousPage() -> Bool {
        guard previousPageRefusal == nil, let previous = plan.previous else { return false }
        stopRefresh()
        loads.started(.prepend)
        emit(.willLoadData)
        retriesLeft = paginator.retryAfterRetries
        let cached = storedCopy(of: previous)
        load(previous, .prepend, validators: cached?.validators, cached: cached)
        return true
    }

    /// Why `fetchNextPage` would do nothing, or nil when it would load a page.
    package var nextPageRefusal: String? {
        if isFetching { return "a fetch is in flight" }
        if !loadedOnce { return "no page is loaded yet: call fetchData first" }
        if !hasMorePages { return "there are no more pages" }
        return nil
    }

    /// Loads the next page; false (and nothing happens) while fetching or when none remain.
    @discardableResult
    package func fetchNextPage() -> Bool {
        guard nextPageRefusal == nil, let next = plan.next else { return false }
        stopRefresh()
        loads.started(.append)
        emit(.willLoadData)
        compose(keptHead: objects.count)
        retriesLeft = paginator.retryAfterRetries
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
        loadedOnce = false
        window.forget()
        plan.forgetNeighbours()
        jumps.forget()
        loads.forgetFailures()
        counted.forget(keepingRows: keepingRows)
        metadata = PageMetadata()
        currentPage = paginator.firstPage.addingClamped(-1)
        defer { publishLoadStates() }
        guard !keepingRows else { return }
        objects = []
        setRows(placeholders.contains(.loading) ? [Placeholder.loadingRow] : [])
    }

    // MARK: Displays

    package override func willDisplayObject(at indexPath: IndexPath) {
        if indexPath.section == 0, indexPath.item >= 0 {
            jumps.displayed(indexPath.item)
            window.focus(on: indexPath.item)
            if counted.shown != nil { return pageTowardsDisplayedRow() }
        }
        // Within `prefetchDistance` rows of the last row (0: the last row itself).
        guard let last = lastIndexPath, indexPath.section == last.section, indexPath.item <= last.item else { return }
        // The client's item is range-checked on the wire; a library caller's may be anything.
        let (distance, overflow) = last.item.subtractingReportingOverflow(indexPath.item)
        if !overflow, distance <= paginator.prefetchDistance, fetchNextPage() { return }
        // Within `prefetchDistance` rows of the first row: the page before it, when there is one.
        if indexPath.item >= 0, indexPath.item <= paginator.prefetchDistance, plan.previous != nil { fetchPreviousPage() }
    }

    package override func didRead(_ indexPath: IndexPath) {
        guard paginator.window != nil, indexPath.section == 0, indexPath.item >= 0 else { return }
        // Reads steer the window only; what loads follows the rows displayed.
        window.focus(on: indexPath.item)
    }

    /// Why this source cannot jump, or nil when it can (`describeSource.capabilities`).
    package var jumpRefusal: String? { jumps.refusal(sizes) }

    /// Why displaying `indexPath` would be refused (`Jumps.displayRefusal`), or nil.
    package func displayRefusal(at indexPath: IndexPath) -> String? {
        guard indexPath.section == 0 else { return nil }
        return jumps.displayRefusal(of: indexPath.item, run: counted.shown, sizes: sizes)
    }

    private var sizes: Jumps.Sizes {
        Jumps.Sizes(metadataPageSize: metadata.pageSize, firstPageReceived: window.pages.first?.received)
    }

    /// In a counted list, the load towards the row last displayed. Also called when a page
    /// arrives, so that the pages up to a row displayed while another loaded follow one another.
    private func pageTowardsDisplayedRow() {
        switch jumps.pageTowardsDisplayedRow(run: counted.shown, isFetching: isFetching, sizes: sizes) {
        case .none: break
        case .jump(let item, let request): jump(to: item, request)
        case .fetchNext: fetchNextPage()
        case .fetchPrevious: fetchPreviousPage()
        case .nearEnds(let next, let previous):
            if next, fetchNextPage() { return }
            if previous, plan.previous != nil { fetchPreviousPage() }
        }
    }

    /// Loads the page holding row `item` as a new run: the rows loaded so far become
    /// unloaded rows again, and no page between is requested.
    private func jump(to item: Int, _ request: PageRequest) {
        stopRefresh()
        if isFetching { endCycleAsCancelled("superseded by a jump to row \(item)") }
        jumps.jumping(to: item)
        loads.started(.refresh)
        emit(.willLoadData)
        retriesLeft = paginator.retryAfterRetries
        load(request, .refresh)
    }

    /// An unloaded row as clients read it: with its index.
    private func presented(_ row: JSON, at item: Int) -> JSON {
        row.isIdentical(to: Placeholder.unloadedStored) ? Placeholder.unloadedRow(index: item) : row
    }

    package override func object(at indexPath: IndexPath) throws(FieldError) -> JSON {
        presented(try super.object(at: indexPath), at: indexPath.item)
    }

    package override func objects(inSection section: Int, start: Int, count: Int?) throws(FieldError) -> [JSON] {
        let rows = try super.objects(inSection: section, start: start, count: count)
        guard counted.shown != nil else { return rows }
        return rows.enumerated().map { presented($1, at: start + $0) }
    }

    package override var allObjects: [JSON] {
        let rows = super.allObjects
        guard counted.shown != nil else { return rows }
        return rows.enumerated().map { presented($1, at: $0) }
    }

    // MARK: Load states

    private var ends: LoadStateMachine.Ends {
        LoadStateMachine.Ends(loadedOnce: loadedOnce, hasPrevious: plan.previous != nil, hasNext: plan.next != nil)
    }

    /// Sends `didChangeLoadState` when the load states differ from the ones last sent.
    private func publishLoadStates() {
        if let states = loads.publish(ends) { emit(.didChangeLoadState(states)) }
    }

    /// The load-state change comes right after the `willLoadData` that starts a load and right
    /// before the final event that ends one (Protocol.md, "Ordering guarantees").
    override func emit(_ event: DataSourceEvent) {
        switch event {
        case .willLoadData:
            super.emit(event)
            publishLoadStates()
        case .finishedLoading, .failedWithError:
            loads.ended()
            publishLoadStates()
            super.emit(event)
        case .didPartiallyLoad, .didChange, .didChangeFreshness, .didChangeLoadState:
            super.emit(event)
        }
    }

    // MARK: Requests and responses

    /// `cached`: the persisted copy of a page loaded again (`storedCopy(of:)`), whose
    /// validators make the request conditional: a `304` brings its rows back from the cache.
    private func load(
        _ page: PageRequest, _ direction: LoadDirection, delaySeconds: Double = 0, validators: Validators? = nil,
        cached: CachedPages.Page? = nil
    ) {
        let target = paginator.target(of: page)
        let requestURL = url(of: target)
        let validators = validators.flatMap { $0.isEmpty ? nil : $0 }
        request(target, delaySeconds: delaySeconds, validators: validators) { [weak self] result in
            guard let self else { return }
            var result = result
            var fromCache: CachedPages.Page?
            if direction != .refresh, case .success(let response) = result, response.isNotModified {
                if let cached {
                    // The server says the stored page is current: its rows, with the 304's validators.
                    result = .success(DecodedResponse(objects: cached.rows, document: nil, headers: response.headers))
                    fromCache = cached
                } else {
                    result = .failure(
                        FetchError(kind: .http, message: "HTTP status 304 to an unconditional request", url: self.lastURL, status: 304))
                }
            }
            switch (result, direction) {
            case (.success(let response), .prepend):
                self.receivedPrevious(response, for: page, requestURL: requestURL, fromCache: fromCache)
            case (.success(let response), _):
                self.received(response, for: page, requestURL: requestURL, replacing: direction == .refresh, fromCache: fromCache)
            case (.failure(let error), _):
                self.failed(error, for: page, direction, validators: validators, cached: cached)
            }
        }
    }

    private func storedCopy(of page: PageRequest) -> CachedPages.Page? {
        cache.storedCopy(of: page, in: configuration.cache.enabled ? cachedPages()?.pages : nil)
    }

    private func links(_ requestURL: String) -> LinkContext {
        LinkContext(requestURL: requestURL, ownOrigin: configuration.ownOrigin, errorURL: lastURL)
    }

    /// A run's first page (`replacing`) or the page after the last. `fromCache`: the persisted
    /// page a `304` confirmed (`response` holds its rows).
    private func received(
        _ response: DecodedResponse, for page: PageRequest, requestURL: String, replacing: Bool, fromCache: CachedPages.Page?
    ) {
        if response.isNotModified {
            // The first page as loaded is current: so are the pages after it, for this fetch.
            // (Only a conditional request, made from a loaded first page, gets here.)
            window.firstPageConfirmed(headers: response)
            lastError = nil
            loads.confirmed()
            compose(keptHead: objects.count)
            confirmed()
            touchCache()
            return emit(.finishedLoading)
        }
        let metadataOfPage = fromCache?.metadata ?? paginator.metadata(of: response)
        if replacing,
            let beyond = plan.beyondEnd(page, response: response, metadata: metadataOfPage, jumpingTo: jumps.pending, errorURL: lastURL)
        {
            // Like any failed first page: the rows loaded (or the previous query's) stay.
            return failed(beyond, for: page, .refresh, validators: nil)
        }
        loads.arrived(replacing ? .refresh : .append)
        if replacing {
            window.startRun(
                at: paginator.startPosition(of: page, metadata: metadataOfPage),
                known: paginator.positionIsKnown(of: page, metadata: metadataOfPage))
            jumps.landed()
            objects = []
            plan.startRun()
            duplicates.startRun()
        }
        let keptHead = replacing ? 0 : objects.count
        // Hashed once, for the duplicates and for the change set (`compose`).
        let kept = duplicates.keep(response.objects, hashes: response.hashes(by: identity))
        objects.append(contentsOf: kept.rows)
        loadedOnce = true
        metadata = metadataOfPage
        var failure = plan.nextPageArrived(
            page, response: response, metadata: metadata, kept: kept.rows.count,
            receivedInRun: window.endOfRun(receiving: response.objects.count), startsRun: replacing, links: links(requestURL))
        currentPage = paginator.currentPage(after: page, pagesLoaded: plan.pagesLoaded)
        window.appended(
            LoadedPage(
                request: page, validators: Validators(headers: response, keeping: fromCache?.validators), kept: kept.rows.count,
                received: response.objects.count, next: plan.next, metadata: metadata, previous: replacing ? plan.previous : nil))
        failure = failure ?? plan.guardNext(pagesHeld: window.pages.count, errorURL: lastURL)
        lastError = failure
        if let failure { loads.failed(.append, failure) }
        compose(keptHead: keptHead, hashesAfterHead: kept.hashes)
        confirmed()
        storeLoadedPages()
        applyWindow(arrived: .append)
        if let failure { return emit(.failedWithError(.fetch(failure))) }
        emit(.finishedLoading)
        pageTowardsDisplayedRow()
    }

    /// The page before the first one loaded arrived: its rows go in at the top (an `inserted`
    /// change set), the rows loaded stay where they are relative to one another.
    private func receivedPrevious(_ response: DecodedResponse, for page: PageRequest, requestURL: String, fromCache: CachedPages.Page?) {
        var received = response.objects
        if case .offset = paginator.strategy {
            // The page asked for may reach past where the first loaded page starts (an offset
            // not a multiple of the page size): only the objects before it are new.
            let wanted = max(0, window.start - paginator.startPosition(of: page, metadata: PageMetadata()))
            if received.count > wanted { received = Array(received.prefix(wanted)) }
        }
        let kept = duplicates.keep(received)
        let metadataOfPage = fromCache?.metadata ?? paginator.metadata(of: response)
        var failure = plan.previousPageArrived(page, response: response, links: links(requestURL))
        // Where a cursor's or a URL's page starts is where the run started, less what it brings;
        // the page before which there is none starts the list.
        let position =
            paginator.positionIsKnown(of: page, metadata: metadataOfPage)
            ? paginator.startPosition(of: page, metadata: metadataOfPage) : nil
        window.prepended(
            LoadedPage(
                request: page, validators: Validators(headers: response, keeping: fromCache?.validators), kept: kept.count,
                received: received.count, next: window.pages.first?.request, metadata: metadataOfPage, previous: plan.previous),
            position: position, startsList: page == .first || (failure == nil && plan.previous == nil && !response.objects.isEmpty))
        failure = failure ?? plan.guardPrevious(pagesHeld: window.pages.count, errorURL: lastURL)
        objects.insert(contentsOf: kept, at: 0)
        if counted.shown == nil { insertRows(kept, at: 0) }
        // A no-results row goes once there are objects.
        compose(keptHead: objects.count)
        lastError = failure
        if let failure { loads.failed(.prepend, failure) }
        storeLoadedPages()
        applyWindow(arrived: .prepend)
        if let failure { return emit(.failedWithError(.fetch(failure))) }
        emit(.finishedLoading)
        pageTowardsDisplayedRow()
    }

    private func failed(
        _ error: FetchError, for page: PageRequest, _ direction: LoadDirection, validators: Validators?, cached: CachedPages.Page? = nil
    ) {
        // A server that asks to wait: retried here when allowed and not too long.
        if let delay = error.retryAfterSeconds, retriesLeft > 0, delay <= paginator.retryAfterMaximumSeconds {
            retriesLeft -= 1
            return load(page, direction, delaySeconds: delay, validators: validators, cached: cached)
        }
        // Past the last page: Django REST framework answers 404 "Invalid page.".
        if direction == .append, loadedOnce, error.kind == .http, error.status == 404, paginator.endOnNotFound {
            plan.endReached()
            loads.endMoved(.append)
            compose(keptHead: objects.count)
            return emit(.finishedLoading)
        }
        lastError = error
        switch direction {
        case .prepend:
            // The rows stay as they are; the same page is asked for by the next fetchPreviousPage.
            loads.failed(.prepend, error)
            return emit(.failedWithError(.fetch(error)))
        case .refresh:
            loads.failed(.refresh, error)
            jumps.landed()
        case .append:
            if loadedOnce { loads.failed(.append, error) }
        }
        if loadedOnce {
            // The loaded rows stay; the trailing row shows the failure.
            compose(keptHead: objects.count)
        } else if !showsPreviousQuery {
            setRows(placeholders.contains(.errors) ? [error.placeholderRow] : [])
        }
        // Else the previous query's rows stay, still stale, as a remote source's do.
        emit(.failedWithError(.fetch(error)))
    }

    // MARK: The rows, the window, the cache, live lists

    /// The rows for the current state, as `CountedPlaceholders` says. Not counted: the objects,
    /// then the trailing placeholder; `keptHead` leading objects are the rows they were, and
    /// only the rows after them are built and compared (see `replaceTail`). `hashesAfterHead`:
    /// the identity hashes of the objects after the head, when the caller has them.
    private func compose(keptHead: Int, hashesAfterHead: [Int]? = nil) {
        let run = CountedPlaceholders.Run(
            loadedOnce: loadedOnce, start: window.start, startKnown: window.startKnown, objectCount: objects.count,
            metadata: metadata, pageSize: jumps.pageSize(sizes), hasMorePages: hasMorePages, appendFailed: loads.appendError != nil,
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

    /// The row after the objects of a list not counted: the error, loading or no-results
    /// placeholder (if stored), or nil.
    private var trailingPlaceholder: JSON? {
        if let error = loads.appendError {
            // Without a stored error row the failed page leaves no trailing row (Protocol.md):
            // a loading row there would claim a load that is not happening. The next
            // fetchNextPage, or displaying the last row, asks for the failed page again.
            // (JSON takes `nil` as null: the placeholders are asked for with `if`, not `?:`.)
            if placeholders.contains(.errors) { return error.placeholderRow }
            return .none
        }
        if hasMorePages, placeholders.contains(.loading) { return Placeholder.loadingRow }
        if objects.isEmpty, loadedOnce, placeholders.contains(.noResults) { return Placeholder.noResultsRow }
        return .none
    }

    /// Drops the pages `PageWindow` says. A page dropped at the top becomes the page before
    /// (`fetchPreviousPage` and displaying the first row load it again), one at the bottom the
    /// next page. A counted list's rows keep their positions: a dropped page's rows become
    /// unloaded rows, in one change once the window holds, instead of leaving the list.
    private func applyWindow(arrived: LoadDirection) {
        let countedRows = counted.shown != nil
        var dropped = false
        while let drop = window.nextDrop(objectCount: objects.count, counted: countedRows, arrived: arrived) {
            dropped = true
            switch drop {
            case .first(let page):
                plan.droppedFirstPage(page)
                objects.removeFirst(page.kept)
                if !countedRows {
                    removeRows(0..<page.kept)
                    jumps.rowsRemovedAbove(page.kept)
                }
                loads.endMoved(.prepend)
            case .last(let page, let nowLast):
                plan.droppedLastPage(page)
                let start = objects.count - page.kept
                objects.removeLast(page.kept)
                if !countedRows { removeRows(start..<start + page.kept) }
                loads.endMoved(.append)
                currentPage = paginator.currentPage(after: nowLast.request, pagesLoaded: window.pages.count)
                metadata = nowLast.metadata
                if !countedRows { compose(keptHead: objects.count) }
            }
            duplicates.holdOnly(objects)
        }
        if countedRows, dropped { compose(keptHead: 0) }
    }

    private func storeLoadedPages() {
        guard
            let entry = cache.entry(
                of: window.pages, objects: objects, currentPage: currentPage, duplicatesDropped: duplicates.dropped,
                maximumPages: configuration.cache.maximumPages)
        else { return }
        storeInCache(entry)
    }

    override func cacheProblem(in cached: CachedPages) -> String? {
        cache.problem(in: cached, identity: identity, ownOrigin: configuration.ownOrigin) { self.mappedRowsProblem($0, field: $1) }
    }

    /// Makes `run` the run (restored from the cache, or walked again by a refresh): its rows
    /// (later duplicates dropped again), counts, the loop guard's requests, and the next request
    /// after the last page, unless the guard stops it. `hashes`: each page's rows' identity
    /// hashes, when the caller has them; answers the kept rows' hashes then (else nil).
    @discardableResult
    private func adopt(
        _ run: [(page: LoadedPage, rows: [JSON])], hashes: [[Int]]? = nil, duplicatesDropped dropped: Int? = nil
    ) -> [Int]? {
        let kept = duplicates.adopt(run.map(\.rows), hashes: hashes, dropped: dropped)
        var pages = run.map(\.page)
        for index in pages.indices { pages[index].kept = kept.pages[index].count }
        objects = Array(kept.pages.joined())
        plan.adopt(pages)
        window.adopt(pages, start: pages.first.map { paginator.startPosition(of: $0.request, metadata: $0.metadata) } ?? 0)
        loadedOnce = true
        lastError = nil
        loads.adopted()
        metadata = pages.last?.metadata ?? PageMetadata()
        currentPage = pages.last.map { paginator.currentPage(after: $0.request, pagesLoaded: plan.pagesLoaded) } ?? currentPage
        return hashes == nil ? nil : kept.hashes
    }

    /// Walks the loaded pages again (`LiveRefresh`) and, if any page came back different,
    /// replaces the rows once at the end: one `didChange` with the difference. A failed
    /// request changes nothing.
    @discardableResult
    package override func refresh(completion: @escaping (RefreshOutcome) -> Void) -> Bool {
        guard !isFetching, !isRefreshing, loadedOnce, !window.pages.isEmpty else { return false }
        beginRefresh(completion)
        performRefresh(liveRefresh.start(held: window.pages))
        return true
    }

    private func performRefresh(_ action: LiveRefresh.Action) {
        switch action {
        case .request(let page, let validators):
            let target = paginator.target(of: page)
            let requestURL = url(of: target)
            request(target, validators: validators) { [weak self] result in
                guard let self else { return }
                switch result {
                case .failure(let error):
                    self.endRefresh(.failed(error))
                case .success(let response) where response.isNotModified:
                    self.performRefresh(
                        self.liveRefresh.notModified(response, held: self.window.pages, objects: self.objects, errorURL: self.lastURL))
                case .success(let response):
                    self.performRefresh(
                        self.liveRefresh.arrived(
                            response, plan: self.plan, links: self.links(requestURL), runStart: self.window.start, held: self.window.pages))
                }
            }
        case .fail(let error):
            endRefresh(.failed(error))
        case .finish where liveRefresh.unchanged(held: window.pages):
            for (index, entry) in liveRefresh.walked.enumerated() { window.revalidated(index, entry.page.validators) }
            touchCache()
            confirmed()
            endRefresh(.unchanged)
        case .finish:
            let before = revision
            adopt(liveRefresh.walked)
            compose(keptHead: 0)
            confirmed()
            storeLoadedPages()
            endRefresh(revision == before ? .unchanged : .changed)
        }
    }

    package override var kindState: SourceDescription.KindState {
        .paginated(
            remoteState,
            SourceDescription.PagingState(
                paginator: paginator, pageSize: metadata.pageSize ?? paginator.pageSize, currentPage: loadedOnce ? currentPage : nil,
                numberOfPages: metadata.numberOfPages, numberOfTotalResults: metadata.numberOfTotalResults,
                hasMorePages: hasMorePages, numberOfObjects: objects.count, next: paginator.shown(plan.next),
                pagesLoaded: plan.pagesLoaded, duplicatesDropped: duplicates.dropped, loadStates: loads.published,
                previous: paginator.shown(plan.previous), pagesDropped: window.pagesDropped,
                placeholders: SourceDescription.PlaceholdersState(
                    inForce: counted.shown != nil ? .counted : .trailing, refusal: counted.refusal),
                capabilities: SourceDescription.PagingCapabilities(pageBackwards: paginator.previousPageUnsupported, jump: jumpRefusal),
                jumps: jumps.made))
    }
}
