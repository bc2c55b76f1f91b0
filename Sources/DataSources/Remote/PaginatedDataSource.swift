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
package final class PaginatedDataSource: RemoteCollection {
    package let paginator: PaginatorConfiguration

    /// Which page comes next, in either direction, and the loop guard.
    private var plan: RequestPlan
    /// Why the last page asked for before the first one failed, until one arrives.
    private var prependError: FetchError?
    /// Where the first loaded page starts in the whole list, when its request says (a page
    /// number with a page size, an offset); 0 otherwise. With `objectsReceived`, where the
    /// loaded rows end, which totals are compared with.
    private var runStart = 0
    /// The last row the client displayed (`willDisplayObjectAtIndexPath`), which a counted list
    /// pages towards; nil before any.
    private var displayedItem: Int?
    /// The row last displayed or read (`didRead`): the window keeps pages around it. Reads
    /// steer the window only; what loads follows `displayedItem`.
    private var windowFocus: Int?
    /// Pages the window dropped in this run (`describeSource.pagesDropped`).
    private var pagesDropped = 0
    /// The page number of the last page loaded (page numbers), else the pages loaded in this run.
    private(set) var currentPage: Int
    private var hasMorePages: Bool { plan.next != nil }
    private var metadata = PageMetadata()
    private var trailingError: FetchError?
    private var loadedOnce = false

    // The paging run since the first page.
    /// Objects the server has sent in this run (duplicates included): the next offset, and
    /// what totals are compared with.
    private var objectsReceived = 0
    private var loadedIdentities: IdentitySet
    private(set) var duplicatesDropped = 0
    private var retriesLeft = 0

    /// Each page of the run, in order.
    private var loadedPages: [LoadedPage] = []

    // Load states (Paging 3's): derived from the paging state, save what only a failure knows.
    /// The direction of the load in flight, set before its `willLoadData`.
    private var loadingDirection: LoadDirection?
    /// Why the last first page of a run failed, until one arrives.
    private var refreshError: FetchError?
    /// What `describeSource.loadStates` and `didChangeLoadState` last said.
    package private(set) var loadStates = LoadStates()

    // Counted placeholders (`placeholders: "counted"`): the list has its full size, and the
    // loaded run sits at its place in it among unloaded rows.
    /// The positions showing the loaded objects while the rows are counted; nil while they are not.
    private var countedRun: Range<Int>?
    /// Why counted placeholders, asked for, are not in force; nil when they are (or were not asked for).
    private var countedRefusal: String?
    /// Whether `runStart` is where the loaded run starts in the whole list: from the first page,
    /// a page number with a page size, an offset, or a server that names no page before it.
    private var runStartKnown = false
    /// The row a jump is loading the page of, until it arrives or fails.
    private var pendingJump: Int?
    /// Where the list ends, once a page with none after it has been loaded at a known position:
    /// a page count's estimate no longer counts after that.
    private var listEnd: Int?
    /// Jumps made in this source's life (`describeSource.jumps`).
    private var jumpsMade = 0
    /// The identity hash of `Placeholder.unloadedStored`, the same for every unloaded row.
    private lazy var unloadedHash = identity.hash(of: Placeholder.unloadedStored)

    package override var kind: String { "paginated" }

    /// Duplicates as this source treats them: a counted list keeps every row where the server
    /// put it (a dropped one would move every row after it off its index).
    private var duplicatePolicy: PaginatorConfiguration.DuplicatePolicy {
        paginator.placeholderMode == .counted ? .keep : paginator.duplicates
    }
    override var metadataHeader: String? { paginator.metadataHeader }

    package init(
        name: String, identity: Identity, configuration: RemoteConfiguration, paginator: PaginatorConfiguration,
        loader: RemoteLoading
    ) {
        self.paginator = paginator
        plan = RequestPlan(paginator: paginator)
        currentPage = paginator.firstPage.addingClamped(-1)
        loadedIdentities = IdentitySet(identity: identity)
        super.init(name: name, identity: identity, configuration: configuration, loader: loader)
    }

    /// Loads the first page. A list never loaded shows its persisted pages at once (if any)
    /// and revalidates the first; loaded rows stay while the first page is asked for again,
    /// conditionally when its response gave validators: a `304` keeps every page loaded.
    package override func fetchData() {
        stopRefresh()
        if isFetching { endCycleAsCancelled("superseded by a new fetchData") }
        loadingDirection = .refresh
        emit(.willLoadData)
        if !loadedOnce, let (cached, storedAt) = cachedPages() {
            let hashes = restore(cached)
            compose(keptHead: 0, hashesAfterHead: hashes)
            warmOpenCosts.mark("changeset")
            showingCachedRows(storedAt: storedAt)
            reportWarmOpen()
        }
        if !loadedOnce, !showsPreviousQuery, placeholders.contains(.loading) { setRows([Placeholder.loadingRow]) }
        retriesLeft = paginator.retryAfterRetries
        let start = paginator.firstRequest
        let first = loadedPages.first.flatMap { $0.request == start && !$0.validators.isEmpty ? $0.validators : nil }
        load(start, replacing: true, validators: first)
    }

    /// Why `fetchPreviousPage` would do nothing, or nil when it would load a page.
    package var previousPageRefusal: String? {
        if isFetching { return "a fetch is in flight" }
        if !loadedOnce { return "no page is loaded yet: call fetchData first" }
        if plan.previous != nil { return nil }
        if let unsupported = paginator.previousPageUnsupported { return unsupported }
        switch loadedPages.first?.request {
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
        loadingDirection = .prepend
        emit(.willLoadData)
        prependError = nil
        retriesLeft = paginator.retryAfterRetries
        let cached = persistedCopy(of: previous)
        load(previous, replacing: false, prepending: true, validators: cached?.validators, cached: cached)
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
        loadingDirection = .append
        emit(.willLoadData)
        trailingError = nil
        compose(keptHead: objects.count)
        retriesLeft = paginator.retryAfterRetries
        let cached = persistedCopy(of: next)
        load(next, replacing: false, validators: cached?.validators, cached: cached)
        return true
    }

    package override func willDisplayObject(at indexPath: IndexPath) {
        if indexPath.section == 0, indexPath.item >= 0 {
            displayedItem = indexPath.item
            windowFocus = indexPath.item
            if countedRun != nil { return pageTowardsDisplayedRow() }
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
        // In the loaded rows' coordinates without counting, the list's with it: as displays are.
        windowFocus = indexPath.item
    }

    // MARK: Counted placeholders and jumps

    /// In a counted list: a row displayed near either end of the loaded rows, or an unloaded one
    /// within `jumpThreshold` rows of them, loads the page next to them on its side; an unloaded
    /// row farther away is a jump (`jump(to:)`). Also called when a page arrives, so that the
    /// pages up to a row displayed while another loaded follow one another.
    private func pageTowardsDisplayedRow() {
        guard let run = countedRun, let item = displayedItem, !run.isEmpty else { return }
        // A jump goes at once, superseding a load in flight; paging waits for it.
        if Self.distance(of: item, from: run) > jumpThreshold {
            if jumpRefusal == nil, pendingJump.map({ jumpPage(of: $0) != jumpPage(of: item) }) ?? true { jump(to: item) }
            return
        }
        guard !isFetching else { return }
        if run.contains(item) {
            walk = nil
            if run.upperBound - 1 - item <= paginator.prefetchDistance, fetchNextPage() { return }
            if item - run.lowerBound <= paginator.prefetchDistance, plan.previous != nil { fetchPreviousPage() }
            return
        }
        // Pages counted as they load, not only worked out from a page size the server may not
        // keep to: a walk towards one row loads at most `maximumPagesWalked` pages, then jumps.
        if walk?.item != item { walk = (item, 0, false) }
        guard walk!.pages < PaginatorConfiguration.maximumPagesWalked else {
            // Once: a jump that does not reach the row either (a server that keeps to no page
            // size) ends the walk; displaying another row starts a new one.
            if !walk!.jumped, jumpRefusal == nil {
                walk!.jumped = true
                jump(to: item)
            }
            return
        }
        walk!.pages += 1
        if item >= run.upperBound { fetchNextPage() } else { fetchPreviousPage() }
    }

    /// The row being walked to, the pages loaded towards it so far, and whether it was jumped to.
    private var walk: (item: Int, pages: Int, jumped: Bool)?

    /// Rows from `item` to the nearest row of `run` (not empty); 0 inside it.
    private static func distance(of item: Int, from run: Range<Int>) -> Int {
        if item >= run.upperBound { return item - (run.upperBound - 1) }
        return max(0, run.lowerBound - item)
    }

    /// The request of the page holding row `item`, by the page size (`jumpRefusal` is nil).
    private func jumpPage(of item: Int) -> PageRequest {
        let size = max(1, jumpPageSize ?? 1)
        let pageIndex = item / size
        switch paginator.strategy {
        case .offset: return pageIndex == 0 ? .first : .offset(pageIndex * size)
        default: return pageIndex == 0 ? .first : .page(paginator.firstPage.addingClamped(pageIndex))
        }
    }

    /// Rows: a displayed unloaded row farther than this from the loaded ones is a jump. Never
    /// more than `PaginatorConfiguration.maximumPagesWalked` pages, whatever `jumpThreshold`
    /// says: walking to a row loads each page between, one request each.
    private var jumpThreshold: Int {
        let pageSize = max(1, jumpPageSize ?? loadedPages.first?.received ?? 100)
        let walked = pageSize.multipliedClamped(by: PaginatorConfiguration.maximumPagesWalked)
        return min(paginator.jumpThreshold ?? pageSize.multipliedClamped(by: 2), walked)
    }

    /// The page size a jump works out a row's page with: the configured one, else the one the
    /// metadata gives. nil when neither says, or the metadata says 0 (a first page's length is no
    /// page size: it may be short).
    private var jumpPageSize: Int? { (paginator.pageSize ?? metadata.pageSize).flatMap { $0 > 0 ? $0 : nil } }

    /// Why this source cannot jump, or nil when it can (`describeSource.capabilities`).
    package var jumpRefusal: String? {
        if let unsupported = paginator.jumpUnsupported { return unsupported }
        if paginator.placeholderMode != .counted {
            return "a jump needs placeholders \"counted\": without them a far row is not in the list"
        }
        if jumpPageSize == nil {
            return "the page size is unknown (set pageSize, or the metadata's pageSize key): a row's page cannot be worked out"
        }
        return nil
    }

    /// Why displaying `indexPath` would be refused: an unloaded row of a counted list, farther
    /// than `jumpThreshold` rows from the loaded ones, on a source that cannot jump. Nil otherwise.
    package func displayRefusal(at indexPath: IndexPath) -> String? {
        guard let run = countedRun, indexPath.section == 0, !run.isEmpty, !run.contains(indexPath.item) else { return nil }
        let item = indexPath.item
        let distance = Self.distance(of: item, from: run)
        guard distance > jumpThreshold, let refusal = jumpRefusal else { return nil }
        return
            "row \(item) is not loaded and lies \(distance) rows from the loaded rows \(run.lowerBound)..<\(run.upperBound), more than jumpThreshold (\(jumpThreshold)): \(refusal); display rows nearer the loaded ones, or fetchNextPage"
    }

    /// Loads the page holding row `item` as a new run, as Paging 3 does past its jump threshold:
    /// the rows loaded so far become unloaded rows again, and no page between is requested.
    private func jump(to item: Int) {
        let request = jumpPage(of: item)
        stopRefresh()
        if isFetching { endCycleAsCancelled("superseded by a jump to row \(item)") }
        pendingJump = item
        jumpsMade = jumpsMade.addingClamped(1)
        loadingDirection = .refresh
        emit(.willLoadData)
        retriesLeft = paginator.retryAfterRetries
        load(request, replacing: true)
    }

    /// The list's full size when counted placeholders are asked for and can be shown; else nil,
    /// and `countedRefusal` says why (when they were asked for).
    private func countedSize() -> Int? {
        guard paginator.placeholderMode == .counted else {
            countedRefusal = nil
            return nil
        }
        guard loadedOnce else {
            countedRefusal = "no page is loaded yet"
            return nil
        }
        let loadedEnd = runStart.addingClamped(objects.count)
        let total: Int
        if let given = metadata.numberOfTotalResults {
            total = given
        } else if let pages = metadata.numberOfPages, let size = jumpPageSize {
            // The last page may be short: the size shrinks when it arrives.
            if !hasMorePages, runStartKnown, trailingError == nil { listEnd = loadedEnd }
            total = listEnd ?? pages.multipliedClamped(by: size)
        } else {
            countedRefusal =
                "no total: the responses give no total (\(paginator.keys.numberOfTotalObjects), totalPath, totalHeader) nor a page count with a page size"
            return nil
        }
        if !runStartKnown {
            countedRefusal =
                "where the loaded rows start in the list is unknown (a run from initialCursor, or a page number without a page size)"
            return nil
        }
        let size = max(total, loadedEnd)
        if size == 0 {
            countedRefusal = "the total is 0"
            return nil
        }
        if size > Self.maximumCountedRows {
            countedRefusal = "the total \(size) is more than counted placeholders show (\(Self.maximumCountedRows) rows)"
            return nil
        }
        if size > maximumCountedRowsForClient {
            countedRefusal =
                "the total \(size) is more than counted placeholders show to a client without the changeRanges capability (\(maximumCountedRowsForClient) rows): initialize with capabilities {\"changeRanges\": true}"
            return nil
        }
        countedRefusal = nil
        return size
    }

    /// The most rows a counted list has (16 bytes of memory each, unloaded).
    package static let maximumCountedRows = 50_000_000
    /// The most a counted list has for a client that takes change sets path by path (no
    /// `changeRanges`): its first change set lists every row, one path each.
    package static let maximumCountedRowsWithoutRanges = 100_000
    /// `maximumCountedRows`, or `maximumCountedRowsWithoutRanges` for a client without ranges.
    package var maximumCountedRowsForClient = maximumCountedRows

    /// The rows of a counted list of `size`: unloaded rows, the loaded objects at `runStart`.
    /// The first time, every row is replaced; after, rows keep their positions, and only those
    /// of the loaded run before and now change (`updated`), with the end grown or shrunk.
    private func composeCounted(size: Int) {
        let run = runStart..<runStart + objects.count
        guard let shown = countedRun else {
            var rows = RowArray<JSON>(), hashes = RowArray<Int>()
            rows.append(contentsOf: repeatElement(Placeholder.unloadedStored, count: run.lowerBound))
            rows.append(contentsOf: objects)
            rows.append(contentsOf: repeatElement(Placeholder.unloadedStored, count: size - run.upperBound))
            hashes.append(contentsOf: repeatElement(unloadedHash, count: run.lowerBound))
            hashes.append(contentsOf: identity.hashes(of: objects))
            hashes.append(contentsOf: repeatElement(unloadedHash, count: size - run.upperBound))
            countedRun = run
            return replaceAllRows(rows, hashes: hashes)
        }
        var overwrites: [(item: Int, row: JSON)] = []
        overwrites.reserveCapacity(objects.count + shown.count)
        for item in shown where !run.contains(item) { overwrites.append((item, Placeholder.unloadedStored)) }
        for (offset, object) in objects.enumerated() { overwrites.append((run.lowerBound + offset, object)) }
        countedRun = run
        overwriteRows(count: size, filler: Placeholder.unloadedStored, fillerHash: unloadedHash, overwrites: overwrites)
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
        guard countedRun != nil else { return rows }
        return rows.enumerated().map { presented($1, at: start + $0) }
    }

    package override var allObjects: [JSON] {
        let rows = super.allObjects
        guard countedRun != nil else { return rows }
        return rows.enumerated().map { presented($1, at: $0) }
    }

    package override func cancelFetch(reason: CancelReason = .cancelFetch) {
        guard isFetching else { return }
        abandonRequest()
        pendingJump = nil
        compose(keptHead: objects.count)
        endCycleAsCancelled(reason.message)
    }

    override func startNewQuery(keepingRows: Bool) {
        loadedOnce = false
        loadedPages = []
        plan.forgetNeighbours()
        prependError = nil
        runStart = 0
        displayedItem = nil
        windowFocus = nil
        pagesDropped = 0
        trailingError = nil
        metadata = PageMetadata()
        currentPage = paginator.firstPage.addingClamped(-1)
        refreshError = nil
        runStartKnown = false
        pendingJump = nil
        listEnd = nil
        defer { publishLoadStates() }
        guard !keepingRows else { return }
        countedRun = nil
        objects = []
        setRows(placeholders.contains(.loading) ? [Placeholder.loadingRow] : [])
    }

    // MARK: Load states

    /// The load states as the paging state makes them.
    private var currentLoadStates: LoadStates {
        func state(_ direction: LoadDirection, error: FetchError?, endReached: Bool) -> LoadState {
            if loadingDirection == direction { return .loading }
            if let error { return .error(error) }
            return endReached ? .endReached : .idle
        }
        return LoadStates(
            refresh: state(.refresh, error: refreshError, endReached: false),
            prepend: state(.prepend, error: prependError, endReached: loadedOnce && plan.previous == nil),
            append: state(.append, error: trailingError, endReached: loadedOnce && plan.next == nil))
    }

    /// Sends `didChangeLoadState` when the load states differ from the ones last sent.
    private func publishLoadStates() {
        let states = currentLoadStates
        guard states != loadStates else { return }
        loadStates = states
        emit(.didChangeLoadState(states))
    }

    /// The load-state change comes right after the `willLoadData` that starts a load and right
    /// before the final event that ends one (Protocol.md, "Ordering guarantees").
    override func emit(_ event: DataSourceEvent) {
        switch event {
        case .willLoadData:
            super.emit(event)
            publishLoadStates()
        case .finishedLoading, .failedWithError:
            loadingDirection = nil
            publishLoadStates()
            super.emit(event)
        case .didPartiallyLoad, .didChange, .didChangeFreshness, .didChangeLoadState:
            super.emit(event)
        }
    }

    /// Why `retry` would do nothing, or nil when a direction has failed and can be asked for again.
    package var retryRefusal: String? {
        if isFetching { return "a fetch is in flight" }
        if refreshError != nil || (prependError != nil && plan.previous != nil) { return nil }
        if let prependError {
            return
                "the prepend direction stopped with kind \(prependError.kind.rawValue), which asking again cannot change: fetchData starts a new run"
        }
        if let trailingError {
            guard plan.next != nil else {
                return
                    "the append direction stopped with kind \(trailingError.kind.rawValue), which asking again cannot change: fetchData starts a new run"
            }
            return nil
        }
        return "no direction has failed: loadStates has no error"
    }

    /// Paging 3's `retry()`: asks again for the failed direction only: the first page when the
    /// run's first page failed, else the page before the first when that failed, else the page
    /// after the last. Nil (and nothing happens) when `retryRefusal` says why not.
    @discardableResult
    package func retry() -> LoadDirection? {
        guard retryRefusal == nil else { return nil }
        if refreshError != nil {
            fetchData()
            return .refresh
        }
        if prependError != nil, plan.previous != nil { return fetchPreviousPage() ? .prepend : nil }
        return fetchNextPage() ? .append : nil
    }

    // MARK: Requests

    /// `cached`: the persisted copy of a page loaded again (`persistedCopy(of:)`), whose
    /// validators make the request conditional: a `304` brings its rows back from the cache.
    private func load(
        _ page: PageRequest, replacing: Bool, prepending: Bool = false, delaySeconds: Double = 0, validators: Validators? = nil,
        cached: CachedPages.Page? = nil
    ) {
        let target = paginator.target(of: page)
        let requestURL = url(of: target)
        let validators = validators.flatMap { $0.isEmpty ? nil : $0 }
        request(target, delaySeconds: delaySeconds, validators: validators) { [weak self] result in
            guard let self else { return }
            var result = result
            var fromCache: CachedPages.Page?
            if !replacing, case .success(let response) = result, response.isNotModified {
                if let cached {
                    // The server says the stored page is current: its rows, with the 304's validators.
                    result = .success(DecodedResponse(objects: cached.rows, document: nil, headers: response.headers))
                    fromCache = cached
                } else {
                    result = .failure(
                        FetchError(kind: .http, message: "HTTP status 304 to an unconditional request", url: self.lastURL, status: 304))
                }
            }
            switch (result, prepending) {
            case (.success(let response), true):
                self.receivedPrevious(response, for: page, requestURL: requestURL, fromCache: fromCache)
            case (.success(let response), false):
                self.received(response, for: page, requestURL: requestURL, replacing: replacing, fromCache: fromCache)
            case (.failure(let error), _):
                self.failed(error, for: page, replacing: replacing, prepending: prepending, validators: validators, cached: cached)
            }
        }
    }

    /// The persisted cache's copy of `page`, when the cache is on, holds it, and the strategy
    /// numbers its pages (a page number or an offset names the same rows in every run; a cursor
    /// or a URL from a server may not be asked for again): a page the window dropped, scrolled
    /// back to, is asked for conditionally and, unchanged, comes back from the cache.
    private func persistedCopy(of page: PageRequest) -> CachedPages.Page? {
        switch paginator.strategy {
        case .pageNumber, .offset: break
        case .cursor, .nextURL, .linkHeader: return nil
        }
        guard configuration.cache.enabled, let (cached, _) = cachedPages() else { return nil }
        return cached.pages.first { $0.request == page && !$0.validators.isEmpty }
    }

    // MARK: Responses

    /// `fromCache`: the persisted page a `304` confirmed (`response` holds its rows).
    private func received(
        _ response: DecodedResponse, for page: PageRequest, requestURL: String, replacing: Bool, fromCache: CachedPages.Page? = nil
    ) {
        if response.isNotModified {
            // The first page as loaded is current: so are the pages after it, for this fetch.
            // (Only a conditional request, made from a loaded first page, gets here.)
            if !loadedPages.isEmpty {
                loadedPages[0].validators = Validators(headers: response, keeping: loadedPages[0].validators)
            }
            lastError = nil
            trailingError = nil
            refreshError = nil
            compose(keptHead: objects.count)
            confirmed()
            touchCache()
            emit(.finishedLoading)
            return
        }
        let metadataOfPage = fromCache?.metadata ?? paginator.metadata(of: response)
        let validatorsOfPage = Validators(headers: response, keeping: fromCache?.validators)
        if replacing,
            let beyond = plan.beyondEnd(page, response: response, metadata: metadataOfPage, jumpingTo: pendingJump, errorURL: lastURL)
        {
            // Like any failed first page: the rows loaded (or the previous query's) stay.
            return failed(beyond, for: page, replacing: true, prepending: false, validators: nil)
        }
        if replacing {
            refreshError = nil
            prependError = nil
            pagesDropped = 0
            runStart = paginator.startPosition(of: page, metadata: metadataOfPage)
            runStartKnown = paginator.positionIsKnown(of: page, metadata: metadataOfPage)
            pendingJump = nil
            loadedPages = []
            objects = []
            objectsReceived = 0
            plan.startRun()
            loadedIdentities = IdentitySet(identity: identity)
            duplicatesDropped = 0
        }
        let keptHead = replacing ? 0 : objects.count
        let received = response.objects
        // Hashed once, for the duplicates and for the change set (`compose`).
        var kept = received, keptHashes = response.hashes(by: identity)
        if duplicatePolicy == .dropLater {
            // Out of `self` for the loop: one exclusive access, not one a row.
            var identities = loadedIdentities
            loadedIdentities = IdentitySet(identity: identity)
            var keptRows: [JSON] = [], hashesKept: [Int] = []
            for (row, hash) in zip(received, keptHashes) where identities.insert(row, hash: hash) {
                keptRows.append(row)
                hashesKept.append(hash)
            }
            loadedIdentities = identities
            duplicatesDropped = duplicatesDropped.addingClamped(received.count - keptRows.count)
            (kept, keptHashes) = (keptRows, hashesKept)
        }
        objects.append(contentsOf: kept)
        objectsReceived = objectsReceived.addingClamped(received.count)
        loadedOnce = true
        lastError = nil
        trailingError = nil
        metadata = metadataOfPage
        var failure = plan.nextPageArrived(
            page, response: response, metadata: metadata, kept: kept.count, receivedInRun: runStart.addingClamped(objectsReceived),
            startsRun: replacing, links: links(requestURL))
        currentPage = paginator.currentPage(after: page, pagesLoaded: plan.pagesLoaded)
        loadedPages.append(
            LoadedPage(
                request: page, validators: validatorsOfPage, kept: kept.count,
                received: received.count, next: plan.next, metadata: metadata, previous: replacing ? plan.previous : nil))
        if failure == nil { failure = plan.guardNext(pagesHeld: loadedPages.count, errorURL: lastURL) }
        if let failure {
            lastError = failure
            trailingError = failure
            compose(keptHead: keptHead, hashesAfterHead: keptHashes)
            confirmed()
            storeLoadedPages()
            applyWindow(arrived: .append)
            emit(.failedWithError(.fetch(failure)))
            return
        }
        compose(keptHead: keptHead, hashesAfterHead: keptHashes)
        confirmed()
        storeLoadedPages()
        applyWindow(arrived: .append)
        emit(.finishedLoading)
        pageTowardsDisplayedRow()
    }

    private func links(_ requestURL: String) -> LinkContext {
        LinkContext(requestURL: requestURL, ownOrigin: configuration.ownOrigin, errorURL: lastURL)
    }

    /// The page before the first one loaded arrived: its rows go in at the top (an `inserted`
    /// change set), the rows loaded stay where they are relative to one another.
    private func receivedPrevious(
        _ response: DecodedResponse, for page: PageRequest, requestURL: String, fromCache: CachedPages.Page? = nil
    ) {
        var received = response.objects
        if case .offset = paginator.strategy {
            // The page asked for may reach past where the first loaded page starts (an offset
            // not a multiple of the page size): only the objects before it are new.
            let wanted = max(0, runStart - paginator.startPosition(of: page, metadata: PageMetadata()))
            if received.count > wanted { received = Array(received.prefix(wanted)) }
        }
        var kept = received
        if duplicatePolicy == .dropLater {
            var identities = loadedIdentities
            loadedIdentities = IdentitySet(identity: identity)
            kept = received.filter { identities.insert($0) }
            loadedIdentities = identities
            duplicatesDropped = duplicatesDropped.addingClamped(received.count - kept.count)
        }
        let metadataOfPage = fromCache?.metadata ?? paginator.metadata(of: response)
        var failure = plan.previousPageArrived(page, response: response, links: links(requestURL))
        objectsReceived = objectsReceived.addingClamped(received.count)
        let positionKnown = paginator.positionIsKnown(of: page, metadata: metadataOfPage)
        // Where a cursor's or a URL's page starts is where the run started, less what it brings.
        runStart = positionKnown ? paginator.startPosition(of: page, metadata: metadataOfPage) : max(0, runStart - received.count)
        // The page before which there is none starts the list.
        if page == .first || (failure == nil && plan.previous == nil && !response.objects.isEmpty) {
            runStartKnown = true
            runStart = 0
        } else if !positionKnown {
            runStartKnown = false
        }
        loadedPages.insert(
            LoadedPage(
                request: page, validators: Validators(headers: response, keeping: fromCache?.validators), kept: kept.count,
                received: received.count, next: loadedPages.first?.request, metadata: metadataOfPage, previous: plan.previous),
            at: 0)
        if failure == nil { failure = plan.guardPrevious(pagesHeld: loadedPages.count, errorURL: lastURL) }
        objects.insert(contentsOf: kept, at: 0)
        if countedRun == nil { insertRows(kept, at: 0) }
        // A no-results row goes once there are objects.
        compose(keptHead: objects.count)
        lastError = nil
        if let failure {
            plan.stopPagingBack()
            lastError = failure
            prependError = failure
            storeLoadedPages()
            applyWindow(arrived: .prepend)
            emit(.failedWithError(.fetch(failure)))
            return
        }
        storeLoadedPages()
        applyWindow(arrived: .prepend)
        emit(.finishedLoading)
        pageTowardsDisplayedRow()
    }

    // MARK: The window

    /// Drops whole pages while the window is exceeded, the page farther from the row last
    /// displayed first (without one: the end away from the page that just `arrived`), never the
    /// last page held. A page dropped at the top becomes the page before (`fetchPreviousPage`
    /// and displaying the first row load it again), one at the bottom the next page; the loop
    /// guard forgets its request, so that loading it again is not a loop.
    private func applyWindow(arrived: LoadDirection) {
        guard let window = paginator.window else { return }
        // A counted list's rows keep their positions: a dropped page's rows become unloaded
        // rows, in one change once the window holds (`compose`), instead of leaving the list.
        let counted = countedRun != nil
        var dropped = false
        defer { if counted, dropped { compose(keptHead: 0) } }
        while loadedPages.count > 1, window.isExceeded(pages: loadedPages.count, objects: objects.count) {
            let dropTop: Bool
            // The displayed row in the loaded rows' coordinates.
            if let focus = windowFocus.map({ counted ? $0 - runStart : $0 }) {
                let topEnd = loadedPages[0].kept
                let bottomStart = objects.count - loadedPages[loadedPages.count - 1].kept
                // Distance from the displayed row to the nearest row of each end page.
                let toTop = max(0, focus - (topEnd - 1))
                let toBottom = max(0, bottomStart - focus)
                dropTop = toTop > toBottom || (toTop == toBottom && arrived != .prepend)
            } else {
                dropTop = arrived != .prepend
            }
            if dropTop { dropFirstPage(editingRows: !counted) } else { dropLastPage(editingRows: !counted) }
            pagesDropped += 1
            dropped = true
        }
    }

    private func dropFirstPage(editingRows: Bool) {
        let page = loadedPages.removeFirst()
        plan.droppedFirstPage(page)
        objects.removeFirst(page.kept)
        if editingRows {
            removeRows(0..<page.kept)
            if let item = displayedItem { displayedItem = max(0, item - page.kept) }
            if let item = windowFocus { windowFocus = max(0, item - page.kept) }
        }
        objectsReceived = max(0, objectsReceived - page.received)
        runStart = runStart.addingClamped(page.received)
        prependError = nil
        forgetIdentitiesOfDroppedRows()
    }

    private func dropLastPage(editingRows: Bool) {
        let page = loadedPages.removeLast()
        plan.droppedLastPage(page)
        let start = objects.count - page.kept
        objects.removeLast(page.kept)
        if editingRows { removeRows(start..<start + page.kept) }
        objectsReceived = max(0, objectsReceived - page.received)
        trailingError = nil
        if let last = loadedPages.last {
            currentPage = paginator.currentPage(after: last.request, pagesLoaded: loadedPages.count)
            metadata = last.metadata
        }
        if editingRows { compose(keptHead: objects.count) }
        forgetIdentitiesOfDroppedRows()
    }

    /// A row dropped by the window may come back: it is no longer a duplicate.
    private func forgetIdentitiesOfDroppedRows() {
        guard duplicatePolicy == .dropLater else { return }
        var identities = IdentitySet(identity: identity)
        for row in objects { _ = identities.insert(row) }
        loadedIdentities = identities
    }

    private func failed(
        _ error: FetchError, for page: PageRequest, replacing: Bool, prepending: Bool, validators: Validators?,
        cached: CachedPages.Page? = nil
    ) {
        // A server that asks to wait: retried here when allowed and not too long.
        if let delay = error.retryAfterSeconds, retriesLeft > 0, delay <= paginator.retryAfterMaximumSeconds {
            retriesLeft -= 1
            load(page, replacing: replacing, prepending: prepending, delaySeconds: delay, validators: validators, cached: cached)
            return
        }
        if prepending {
            // The rows stay as they are; the same page is asked for by the next fetchPreviousPage.
            lastError = error
            prependError = error
            emit(.failedWithError(.fetch(error)))
            return
        }
        // Past the last page: Django REST framework answers 404 "Invalid page.".
        if !replacing, loadedOnce, error.kind == .http, error.status == 404, paginator.endOnNotFound {
            plan.endReached()
            trailingError = nil
            compose(keptHead: objects.count)
            emit(.finishedLoading)
            return
        }
        lastError = error
        if replacing {
            refreshError = error
            pendingJump = nil
        }
        if loadedOnce {
            // The loaded rows stay; the trailing row shows the failure.
            if !replacing { trailingError = error }
            compose(keptHead: objects.count)
        } else if !showsPreviousQuery {
            setRows(placeholders.contains(.errors) ? [error.placeholderRow] : [])
        }
        // Else the previous query's rows stay, still stale, as a remote source's do.
        emit(.failedWithError(.fetch(error)))
    }

    /// The rows for the current state: the objects, then the trailing placeholder.
    /// `keptHead`: how many leading objects are the rows they were; only the rows after
    /// them are built and compared (see `replaceTail`). `hashesAfterHead`: the identity
    /// hashes of the objects after the head, when the caller has them.
    private func compose(keptHead: Int, hashesAfterHead: [Int]? = nil) {
        if let size = countedSize() { return composeCounted(size: size) }
        if countedRun != nil {
            // Counted no more (a new query without a total): the rows are no longer positions.
            countedRun = nil
            let rows = objects + (trailingPlaceholder.map { [$0] } ?? [])
            return replaceAllRows(RowArray(rows), hashes: RowArray(identity.hashes(of: rows)))
        }
        var rows = Array(objects[keptHead...])
        if let trailingPlaceholder { rows.append(trailingPlaceholder) }
        let hashes = hashesAfterHead.map { known in known + rows[known.count...].map(identity.hash(of:)) }
        setRows(keeping: keptHead, tail: rows, hashes: hashes)
    }

    /// The row after the objects of a list not counted: the error, loading or no-results
    /// placeholder (if stored), or nil.
    private var trailingPlaceholder: JSON? {
        if let trailingError {
            // Without a stored error row the failed page leaves no trailing row (Protocol.md):
            // a loading row there would claim a load that is not happening. The next
            // fetchNextPage, or displaying the last row, asks for the failed page again.
            // (JSON takes `nil` as null: the placeholders are asked for with `if`, not `?:`.)
            if placeholders.contains(.errors) { return trailingError.placeholderRow }
            return .none
        }
        if hasMorePages, placeholders.contains(.loading) { return Placeholder.loadingRow }
        if objects.isEmpty, loadedOnce, placeholders.contains(.noResults) { return Placeholder.noResultsRow }
        return .none
    }

    // MARK: The persisted cache

    /// The run as the cache keeps it: its first `cache.maxPages` pages.
    private func storeLoadedPages() {
        // A run that starts in the middle (initialPage...) is not one the cache restores.
        guard loadedPages.count <= configuration.cache.maximumPages, loadedPages.first?.request == .first else { return }
        var pages: [CachedPages.Page] = []
        var start = 0
        for page in loadedPages {
            pages.append(
                CachedPages.Page(
                    request: page.request, validators: page.validators, rows: Array(objects[start..<start + page.kept]),
                    received: page.received, next: page.next, metadata: page.metadata))
            start += page.kept
        }
        storeInCache(CachedPages(pages: pages, currentPage: currentPage, duplicatesDropped: duplicatesDropped))
    }

    /// Takes up a run where the cached pages left it (`cachedPages()` has checked them and
    /// worked out their rows' hashes); answers the hashes of the rows kept, in order.
    /// A URL was stored without credentials: it gets the configured ones back, so that it is
    /// the URL the live run requested (a relative next link keeps the base URL's userinfo).
    private func restore(_ cached: CachedPages) -> [Int]? {
        let collectionURL = url(of: .collection(query: []))
        func withConfiguredCredentials(_ request: PageRequest) -> PageRequest {
            guard case .url(let url) = request else { return request }
            return .url(URLResolution.withCredentials(of: collectionURL, appliedTo: url))
        }
        return adopt(
            cached.pages.map {
                (
                    LoadedPage(
                        request: withConfiguredCredentials($0.request), validators: $0.validators, kept: $0.rows.count,
                        received: $0.received, next: $0.next.map(withConfiguredCredentials), metadata: $0.metadata), $0.rows
                )
            },
            hashes: cached.pages.map(\.hashes), duplicatesDropped: cached.duplicatesDropped)
    }

    /// A run this source could have loaded and stored: the first page first, each page's
    /// request the one the page before it named, every next request one this strategy makes
    /// (and a next URL one `follow` would take), counts that add up, no identity twice when
    /// duplicates are dropped, no more pages than `maxPages`.
    override func cacheProblem(in cached: CachedPages) -> String? {
        let pages = cached.pages
        if pages.count > paginator.maximumPages {
            return "it holds \(pages.count) pages, more than pagination.maxPages (\(paginator.maximumPages))"
        }
        if pages[0].request != .first { return "pages[0].request must be {\"first\": true}" }
        var identities = IdentitySet(identity: identity)
        var droppedByPages = 0
        for (index, page) in pages.enumerated() {
            let field = "pages[\(index)]"
            if index > 0, page.request != pages[index - 1].next {
                return "\(field).request is not the next request of pages[\(index - 1)]"
            }
            switch duplicatePolicy {
            case .keep:
                if page.received != page.rows.count {
                    return "\(field).received must be \(page.rows.count), the rows kept (duplicates are kept), got \(page.received)"
                }
            case .dropLater:
                // decode has checked received >= rows.count.
                droppedByPages = droppedByPages.addingClamped(page.received - page.rows.count)
                if let repeated = page.rows.indices.first(where: { !identities.insert(page.rows[$0], hash: page.hashes[$0]) }) {
                    return "\(field).rows[\(repeated)] has an identity already loaded (duplicates are dropped)"
                }
            }
            if let problem = mappedRowsProblem(page.rows, field: "\(field).rows") { return problem }
            if let next = page.next, let problem = problem(ofCachedNext: next, after: page) { return "\(field).next \(problem)" }
        }
        if cached.duplicatesDropped > droppedByPages {
            return
                "duplicatesDropped must be at most \(droppedByPages), the objects the pages received but did not keep, got \(cached.duplicatesDropped)"
        }
        let expectedPage = paginator.currentPage(after: pages[pages.count - 1].request, pagesLoaded: pages.count)
        if cached.currentPage != expectedPage { return "currentPage must be \(expectedPage), got \(cached.currentPage)" }
        return nil
    }

    /// Why `next` is not the request this strategy makes after `page`, or nil.
    private func problem(ofCachedNext next: PageRequest, after page: CachedPages.Page) -> String? {
        switch (paginator.strategy, next) {
        case (.pageNumber, .page(let number)):
            let current: Int
            switch page.request {
            case .page(let loaded): current = loaded
            default: current = paginator.firstPage
            }
            let (expected, overflow) = current.addingReportingOverflow(1)
            if overflow { return "follows page \(current), the last there can be" }
            return number == expected ? nil : "must be {\"page\": \(expected)}, got {\"page\": \(number)}"
        case (.offset(_, _, let nextOffsetPath), .offset(let offset)):
            // With a nextOffsetPath the server chose it; otherwise it is where this page ended.
            guard nextOffsetPath == nil else { return nil }
            let (expected, overflow) = page.request.offsetAsked.addingReportingOverflow(page.received)
            if overflow {
                return "follows offset \(page.request.offsetAsked) and \(page.received) objects, past the last offset there can be"
            }
            return offset == expected ? nil : "must be {\"offset\": \(expected)}, got {\"offset\": \(offset)}"
        case (.cursor, .cursor):
            return nil
        case (.nextURL, .url(let url)), (.linkHeader, .url(let url)):
            return plan.refusal(ofNextURL: url, ownOrigin: configuration.ownOrigin, errorURL: lastURL).map {
                "is refused as a server's would be: \($0.message)"
            }
        default:
            return "is a \(next.kindName) request, which the \(paginator.strategy.name) strategy never makes"
        }
    }

    /// The rows the loaded pages account for (equal to the objects held): for the fuzzers.
    var rowsKeptByPages: Int { loadedPages.reduce(0) { $0.addingClamped($1.kept) } }

    /// Makes `pages` the run: its rows (later duplicates dropped again), counts, the loop
    /// guard's requests, and the next request after the last page, unless the guard stops it.
    /// `hashes`: each page's rows' identity hashes, when the caller has them; answers the
    /// kept rows' hashes then (else nil).
    @discardableResult
    private func adopt(
        _ pages: [(page: LoadedPage, rows: [JSON])], hashes: [[Int]]? = nil, duplicatesDropped dropped: Int? = nil
    ) -> [Int]? {
        var rows: [JSON] = [], identities = IdentitySet(identity: identity), droppedNow = 0
        var adopted: [LoadedPage] = []
        var keptHashes: [Int] = []
        for (index, var (page, pageRows)) in pages.enumerated() {
            let pageHashes = hashes?[index]
            if duplicatePolicy == .dropLater {
                let kept = pageRows.indices.filter {
                    identities.insert(pageRows[$0], hash: pageHashes?[$0] ?? identity.hash(of: pageRows[$0]))
                }
                droppedNow += pageRows.count - kept.count
                if kept.count < pageRows.count {
                    pageRows = kept.map { pageRows[$0] }
                    if let pageHashes { keptHashes += kept.map { pageHashes[$0] } }
                } else if let pageHashes {
                    keptHashes += pageHashes
                }
            } else if let pageHashes {
                keptHashes += pageHashes
            }
            page.kept = pageRows.count
            rows += pageRows
            adopted.append(page)
        }
        objects = rows
        loadedPages = adopted
        loadedIdentities = identities
        duplicatesDropped = dropped ?? droppedNow
        plan.adopt(adopted)
        objectsReceived = adopted.reduce(0) { $0.addingClamped($1.received) }
        loadedOnce = true
        lastError = nil
        trailingError = nil
        metadata = adopted.last?.metadata ?? PageMetadata()
        currentPage = adopted.last.map { paginator.currentPage(after: $0.request, pagesLoaded: plan.pagesLoaded) } ?? currentPage
        prependError = nil
        runStart = adopted.first.map { paginator.startPosition(of: $0.request, metadata: $0.metadata) } ?? 0
        return hashes == nil ? nil : keptHashes
    }

    // MARK: Live lists

    /// Walks the loaded pages again from the first, each conditionally when its request is the
    /// one that loaded it, and, if any page came back different, replaces the rows once at the
    /// end: one `didChange` with the difference. A failed request changes nothing.
    @discardableResult
    package override func refresh(completion: @escaping (RefreshOutcome) -> Void) -> Bool {
        guard !isFetching, !isRefreshing, loadedOnce, !loadedPages.isEmpty else { return false }
        beginRefresh(completion)
        refreshPage(loadedPages[0].request, walked: [], changed: false)
        return true
    }

    private func refreshPage(_ page: PageRequest, walked: [(page: LoadedPage, rows: [JSON])], changed: Bool) {
        let index = walked.count
        let old = loadedPages[index].request == page ? loadedPages[index] : nil
        let target = paginator.target(of: page)
        let requestURL = url(of: target)
        request(target, validators: old?.validators) { [weak self] result in
            guard let self else { return }
            var walked = walked, changed = changed
            switch result {
            case .failure(let error):
                self.endRefresh(.failed(error))
                return
            case .success(let response) where response.isNotModified:
                guard var page = old else {
                    return self.endRefresh(
                        .failed(
                            FetchError(kind: .http, message: "HTTP status 304 to an unconditional request", url: self.lastURL, status: 304))
                    )
                }
                let start = self.loadedPages[..<index].reduce(0) { $0.addingClamped($1.kept) }
                page.validators = Validators(headers: response, keeping: page.validators)
                walked.append((page, Array(self.objects[start..<start + page.kept])))
            case .success(let response):
                let received = walked.reduce(0) { $0.addingClamped($1.page.received) }.addingClamped(response.objects.count)
                let metadata = self.paginator.metadata(of: response)
                let links = self.links(requestURL)
                let following =
                    (try? self.plan.nextPage(
                        after: page, response: response, metadata: metadata, objectsReceived: self.runStart.addingClamped(received),
                        links: links
                    ).get()) ?? nil
                let before =
                    walked.isEmpty ? (try? self.plan.previousPage(before: page, response: response, links: links).get()) ?? nil : nil
                walked.append(
                    (
                        LoadedPage(
                            request: page, validators: Validators(headers: response), kept: response.objects.count,
                            received: response.objects.count, next: following, metadata: metadata, previous: before),
                        response.objects
                    ))
                changed = true
            }
            let last = walked[walked.count - 1].page
            if walked.count < self.loadedPages.count, let following = last.next,
                !walked.contains(where: { $0.page.request == following })
            {
                self.refreshPage(following, walked: walked, changed: changed)
            } else {
                self.finishRefresh(walked, changed: changed)
            }
        }
    }

    private func finishRefresh(_ walked: [(page: LoadedPage, rows: [JSON])], changed: Bool) {
        if !changed, walked.count == loadedPages.count {
            for (index, entry) in walked.enumerated() { loadedPages[index].validators = entry.page.validators }
            touchCache()
            confirmed()
            return endRefresh(.unchanged)
        }
        let before = revision
        adopt(walked)
        compose(keptHead: 0)
        confirmed()
        storeLoadedPages()
        endRefresh(revision == before ? .unchanged : .changed)
    }

    package override var kindState: SourceDescription.KindState {
        let nextRequest = paginator.shown(plan.next)
        return .paginated(
            remoteState,
            SourceDescription.PagingState(
                paginator: paginator, pageSize: metadata.pageSize ?? paginator.pageSize, currentPage: loadedOnce ? currentPage : nil,
                numberOfPages: metadata.numberOfPages, numberOfTotalResults: metadata.numberOfTotalResults,
                hasMorePages: hasMorePages, numberOfObjects: objects.count, next: nextRequest, pagesLoaded: plan.pagesLoaded,
                duplicatesDropped: duplicatesDropped, loadStates: loadStates, previous: paginator.shown(plan.previous),
                pagesDropped: pagesDropped,
                placeholders: SourceDescription.PlaceholdersState(
                    inForce: countedRun != nil ? .counted : .trailing, refusal: countedRefusal),
                capabilities: SourceDescription.PagingCapabilities(
                    pageBackwards: paginator.previousPageUnsupported, jump: jumpRefusal),
                jumps: jumpsMade))
    }
}
