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

    /// One page's request.
    enum PageRequest: Equatable, Sendable {
        case first
        case page(Int)
        case offset(Int)
        case cursor(String)
        case url(String)
    }

    /// The next page to load; nil when none remains (or before the first).
    private var next: PageRequest?
    /// The page before the first one loaded; nil when none is before it, or when the strategy
    /// cannot say (`paginator.previousPageUnsupported`).
    private var previous: PageRequest?
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
    private var hasMorePages: Bool { next != nil }
    private var metadata = PageMetadata()
    private var trailingError: FetchError?
    private var loadedOnce = false

    // The paging run since the first page.
    private var pagesLoaded = 0
    /// Objects the server has sent in this run (duplicates included): the next offset, and
    /// what totals are compared with.
    private var objectsReceived = 0
    private var requestsMade: Set<String> = []
    private var stalledPages = 0
    private var loadedIdentities: IdentitySet
    private(set) var duplicatesDropped = 0
    private var retriesLeft = 0

    /// Each page of the run, in order: what revalidates it (a refresh, the cache) and how many
    /// of `objects` it holds.
    private struct LoadedPage {
        var request: PageRequest
        var validators: Validators
        /// Rows kept from it (later duplicates dropped).
        var kept: Int
        /// Objects the server sent in it.
        var received: Int
        /// The request after it, as its response said (before the loop guard).
        var next: PageRequest?
        var metadata: PageMetadata
        /// The request before it, as its response said.
        var previous: PageRequest? = nil
    }
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
        let start = firstRequest
        let first = loadedPages.first.flatMap { $0.request == start && !$0.validators.isEmpty ? $0.validators : nil }
        load(start, replacing: true, validators: first)
    }

    /// The request that starts a run: the first page, or `initialPage` / `initialOffset` / `initialCursor`.
    private var firstRequest: PageRequest {
        switch paginator.initialPosition {
        case .page(let number)?: number == paginator.firstPage ? .first : .page(number)
        case .offset(let offset)?: offset == 0 ? .first : .offset(offset)
        case .cursor(let cursor)?: .cursor(cursor)
        case nil: .first
        }
    }

    /// Why `fetchPreviousPage` would do nothing, or nil when it would load a page.
    package var previousPageRefusal: String? {
        if isFetching { return "a fetch is in flight" }
        if !loadedOnce { return "no page is loaded yet: call fetchData first" }
        if previous != nil { return nil }
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
        guard previousPageRefusal == nil, let previous else { return false }
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
        guard nextPageRefusal == nil, let next else { return false }
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
        if indexPath.item >= 0, indexPath.item <= paginator.prefetchDistance, previous != nil { fetchPreviousPage() }
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
            if item - run.lowerBound <= paginator.prefetchDistance, previous != nil { fetchPreviousPage() }
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
        next = nil
        previous = nil
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
            prepend: state(.prepend, error: prependError, endReached: loadedOnce && previous == nil),
            append: state(.append, error: trailingError, endReached: loadedOnce && next == nil))
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
        if refreshError != nil || (prependError != nil && previous != nil) { return nil }
        if let prependError {
            return
                "the prepend direction stopped with kind \(prependError.kind.rawValue), which asking again cannot change: fetchData starts a new run"
        }
        if let trailingError {
            guard next != nil else {
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
        if prependError != nil, previous != nil { return fetchPreviousPage() ? .prepend : nil }
        return fetchNextPage() ? .append : nil
    }

    // MARK: Requests

    private func target(of page: PageRequest) -> RequestTarget {
        var query: [(name: String, value: String)] = []
        switch (paginator.strategy, page) {
        case (.pageNumber, .first):
            query = [(paginator.pageQueryKey, String(paginator.firstPage))]
        case (.pageNumber, .page(let number)):
            query = [(paginator.pageQueryKey, String(number))]
        case (.offset(let offsetKey, _, _), .first):
            query = [(offsetKey, "0")]
        case (.offset(let offsetKey, _, _), .offset(let offset)):
            query = [(offsetKey, String(offset))]
        case (.cursor(let cursorKey, _, _, _), .cursor(let cursor)):
            query = [(cursorKey, cursor)]
        case (_, .url(let url)):
            return .url(url)
        default:
            break
        }
        if let pageSize = paginator.pageSize {
            let key: String
            if case .offset(_, let limitKey, _) = paginator.strategy { key = limitKey } else { key = paginator.pageSizeQueryKey }
            query.append((key, String(pageSize)))
        }
        return .collection(query: query)
    }

    /// What names a request in the loop guard.
    private static func token(_ page: PageRequest) -> String {
        switch page {
        case .first: "first"
        case .page(let number): "page:\(number)"
        case .offset(let offset): "offset:\(offset)"
        case .cursor(let cursor): "cursor:\(cursor)"
        case .url(let url): "url:\(url)"
        }
    }

    /// `cached`: the persisted copy of a page loaded again (`persistedCopy(of:)`), whose
    /// validators make the request conditional: a `304` brings its rows back from the cache.
    private func load(
        _ page: PageRequest, replacing: Bool, prepending: Bool = false, delaySeconds: Double = 0, validators: Validators? = nil,
        cached: CachedPages.Page? = nil
    ) {
        let target = target(of: page)
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
        if replacing, let beyond = beyondEnd(page, response: response, metadata: metadataOfPage) {
            // Like any failed first page: the rows loaded (or the previous query's) stay.
            return failed(beyond, for: page, replacing: true, prepending: false, validators: nil)
        }
        if replacing {
            refreshError = nil
            prependError = nil
            pagesDropped = 0
            runStart = startPosition(of: page, metadata: metadataOfPage)
            runStartKnown = positionIsKnown(of: page, metadata: metadataOfPage)
            pendingJump = nil
            loadedPages = []
            objects = []
            pagesLoaded = 0
            objectsReceived = 0
            requestsMade = []
            stalledPages = 0
            loadedIdentities = IdentitySet(identity: identity)
            duplicatesDropped = 0
        }
        requestsMade.insert(Self.token(page))
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
        pagesLoaded += 1
        objectsReceived = objectsReceived.addingClamped(received.count)
        currentPage = Self.currentPage(after: page, pagesLoaded: pagesLoaded, paginator: paginator)
        loadedOnce = true
        lastError = nil
        trailingError = nil
        metadata = metadataOfPage
        stalledPages = !received.isEmpty && kept.isEmpty ? stalledPages + 1 : 0
        if replacing { previous = try? previousPage(before: page, response: response, requestURL: requestURL).get() ?? nil }

        var failure: FetchError?
        switch nextPage(
            after: page, response: response, requestURL: requestURL, metadata: metadata,
            objectsReceived: runStart.addingClamped(objectsReceived))
        {
        case .success(let following):
            next = following
        case .failure(let error):
            next = nil
            failure = error
        }
        loadedPages.append(
            LoadedPage(
                request: page, validators: validatorsOfPage, kept: kept.count,
                received: received.count, next: next, metadata: metadata, previous: replacing ? previous : nil))
        if let following = next, failure == nil {
            if requestsMade.contains(Self.token(following)) {
                failure = loop(
                    "the next request repeats one already made in this run (\(describe(following)))", reason: loopReason(following))
            } else if stalledPages >= paginator.stalledPagesLimit {
                failure = loop("\(stalledPages) pages in a row brought no new object", reason: "noNewObjects")
            } else if pagesCountedByLoopGuard >= paginator.maximumPages {
                failure = loop("\(pagesCountedByLoopGuard) pages loaded, the most allowed (maxPages)", reason: "maxPages")
            }
        }
        if let failure {
            next = nil
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

    private func loop(_ message: String, reason: String) -> FetchError {
        var error = FetchError(kind: .loop, message: "pagination stopped: \(message)", url: lastURL)
        error.loopReason = reason
        error.pagesLoaded = pagesLoaded
        return error
    }

    private func loopReason(_ page: PageRequest) -> String {
        switch page {
        case .first: "first"
        case .page: "page"
        case .offset: "offset"
        case .cursor: "cursor"
        case .url: "url"
        }
    }

    /// The next page's request, nil when the response says there is none, or why paging
    /// must stop (a next URL that leaves the origin).
    private func nextPage(
        after page: PageRequest, response: DecodedResponse, requestURL: String, metadata: PageMetadata,
        objectsReceived: Int
    ) -> Result<PageRequest?, FetchError> {
        if response.objects.isEmpty { return .success(nil) }
        if let total = metadata.numberOfTotalResults, objectsReceived >= total { return .success(nil) }
        let document = response.document
        func flag(_ path: JSONKeyPath?) -> Bool? { path.flatMap { document?.value(at: $0)?.boolValue } }
        switch paginator.strategy {
        case .pageNumber:
            let number: Int
            switch page {
            case .page(let current): number = current
            default: number = paginator.firstPage
            }
            guard
                metadata.hasMorePages(
                    after: number, firstPage: paginator.firstPage, received: response.objects.count,
                    loaded: objectsReceived)
            else { return .success(nil) }
            let (following, overflow) = number.addingReportingOverflow(1)
            return .success(overflow ? nil : .page(following))
        case .offset(_, _, let nextOffsetPath):
            if let nextOffsetPath, let value = document?.value(at: nextOffsetPath) {
                guard !value.isNull else { return .success(nil) }
                guard let offset = PaginatorConfiguration.count(value) else { return .success(nil) }
                return .success(.offset(offset))
            }
            let (offset, overflow) = currentOffset(of: page).addingReportingOverflow(response.objects.count)
            return .success(overflow ? nil : .offset(offset))
        case .cursor(_, let cursorPath, let fromLastObject, let hasMorePath):
            if flag(hasMorePath) == false { return .success(nil) }
            if let fromLastObject {
                guard let last = response.objects.last?.value(at: fromLastObject), let cursor = Self.cursorText(last) else {
                    return .success(nil)
                }
                return .success(.cursor(cursor))
            }
            guard let cursorPath, let value = document?.value(at: cursorPath), let cursor = Self.cursorText(value) else {
                return .success(nil)
            }
            return .success(.cursor(cursor))
        case .nextURL(let path, let hasMorePath):
            if flag(hasMorePath) == false { return .success(nil) }
            guard let link = document?.value(at: path)?.stringValue, !link.isEmpty else { return .success(nil) }
            return follow(link, from: requestURL)
        case .linkHeader:
            guard let link = LinkHeader.target("next", in: response.headerValues("link")), !link.isEmpty else { return .success(nil) }
            return follow(link, from: requestURL)
        }
    }

    /// The request for the page before `page`, nil when the response says there is none (or
    /// the strategy cannot page backwards), or why it must not be made (a previous URL that
    /// leaves the origin). Page numbers and offsets are arithmetic; the page before the first
    /// one is `.first`, so that a run paged back to its start is a run from the first page.
    private func previousPage(
        before page: PageRequest, response: DecodedResponse, requestURL: String
    ) -> Result<
        PageRequest?, FetchError
    > {
        let document = response.document
        switch paginator.strategy {
        case .pageNumber:
            guard case .page(let number) = page, number > paginator.firstPage else { return .success(nil) }
            return .success(number - 1 == paginator.firstPage ? .first : .page(number - 1))
        case .offset:
            guard case .offset(let offset) = page, offset > 0 else { return .success(nil) }
            let size = paginator.pageSize ?? paginator.metadata(of: response).pageSize ?? response.objects.count
            guard size > 0 else { return .success(nil) }
            return .success(offset <= size ? .first : .offset(offset - size))
        case .cursor:
            guard let path = paginator.previousCursorPath, let value = document?.value(at: path), let cursor = Self.cursorText(value)
            else { return .success(nil) }
            return .success(.cursor(cursor))
        case .nextURL:
            guard let path = paginator.previousURLPath, let link = document?.value(at: path)?.stringValue, !link.isEmpty else {
                return .success(nil)
            }
            return follow(link, from: requestURL)
        case .linkHeader:
            let links = response.headerValues("link")
            guard let link = LinkHeader.target("prev", in: links) ?? LinkHeader.target("previous", in: links), !link.isEmpty else {
                return .success(nil)
            }
            return follow(link, from: requestURL)
        }
    }

    /// Whether `startPosition(of:metadata:)` is where `page` starts in the whole list.
    private func positionIsKnown(of page: PageRequest, metadata: PageMetadata) -> Bool {
        switch page {
        case .first, .offset: true
        case .page: (paginator.pageSize ?? metadata.pageSize) != nil
        case .cursor, .url: false
        }
    }

    /// Where `page` starts in the whole list, when its request says; else 0.
    private func startPosition(of page: PageRequest, metadata: PageMetadata) -> Int {
        switch page {
        case .offset(let offset):
            return offset
        case .page(let number):
            guard let size = paginator.pageSize ?? metadata.pageSize else { return 0 }
            let (pagesBefore, overflow) = number.subtractingReportingOverflow(paginator.firstPage)
            let (start, tooFar) = pagesBefore.multipliedReportingOverflow(by: size)
            return overflow || tooFar || pagesBefore < 0 ? 0 : start
        default:
            return 0
        }
    }

    /// Why a run's `initialPage` or `initialOffset` answered nothing to show: it lies past the
    /// end of the list (by the metadata's page count or total, or an empty page). Nil otherwise,
    /// and for every other first request.
    private func beyondEnd(_ page: PageRequest, response: DecodedResponse, metadata: PageMetadata) -> FetchError? {
        guard !response.isNotModified else { return nil }
        let position: String
        switch page {
        case .page(let number):
            position = pendingJump.map { "the jump to row \($0) (page \(number))" } ?? "initialPage \(number)"
            let (pagesBefore, overflow) = number.subtractingReportingOverflow(paginator.firstPage)
            if let pages = metadata.numberOfPages, !overflow, pagesBefore >= pages {
                return outOfRange(
                    "\(position) is past the last page: the list has \(pages) page\(pages == 1 ? "" : "s") from page \(paginator.firstPage) (\(paginator.keys.numberOfPages))"
                )
            }
            if let total = metadata.numberOfTotalResults, let size = paginator.pageSize ?? metadata.pageSize, !overflow {
                let (start, tooFar) = pagesBefore.multipliedReportingOverflow(by: size)
                if !tooFar, start >= total {
                    return outOfRange("\(position) is past the end: the list has \(total) objects, \(size) a page")
                }
            }
        case .offset(let offset):
            position = pendingJump.map { "the jump to row \($0) (offset \(offset))" } ?? "initialOffset \(offset)"
            if let total = metadata.numberOfTotalResults, offset >= total {
                return outOfRange("\(position) is past the end: the list has \(total) objects")
            }
        default:
            return nil
        }
        return response.objects.isEmpty ? outOfRange("\(position) is past the end of the list: its page is empty") : nil
    }

    private func outOfRange(_ message: String) -> FetchError {
        FetchError(kind: .outOfRange, message: message, url: lastURL)
    }

    /// The page before the first one loaded arrived: its rows go in at the top (an `inserted`
    /// change set), the rows loaded stay where they are relative to one another.
    private func receivedPrevious(
        _ response: DecodedResponse, for page: PageRequest, requestURL: String, fromCache: CachedPages.Page? = nil
    ) {
        requestsMade.insert(Self.token(page))
        var received = response.objects
        if case .offset = paginator.strategy {
            // The page asked for may reach past where the first loaded page starts (an offset
            // not a multiple of the page size): only the objects before it are new.
            let wanted = max(0, runStart - startPosition(of: page, metadata: PageMetadata()))
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
        var failure: FetchError?
        var before: PageRequest?
        switch previousPage(before: page, response: response, requestURL: requestURL) {
        case .success(let request): before = response.objects.isEmpty ? nil : request
        case .failure(let error): failure = error
        }
        pagesLoaded += 1
        objectsReceived = objectsReceived.addingClamped(received.count)
        // Where a cursor's or a URL's page starts is where the run started, less what it brings.
        runStart =
            positionIsKnown(of: page, metadata: metadataOfPage)
            ? startPosition(of: page, metadata: metadataOfPage) : max(0, runStart - received.count)
        // The page before which there is none starts the list.
        if page == .first || (failure == nil && before == nil && !response.objects.isEmpty) {
            runStartKnown = true
            runStart = 0
        } else if !positionIsKnown(of: page, metadata: metadataOfPage) {
            runStartKnown = false
        }
        loadedPages.insert(
            LoadedPage(
                request: page, validators: Validators(headers: response, keeping: fromCache?.validators), kept: kept.count,
                received: received.count, next: loadedPages.first?.request, metadata: metadataOfPage, previous: before), at: 0)
        previous = before
        if let before, failure == nil {
            if requestsMade.contains(Self.token(before)) {
                failure = loop(
                    "the previous request repeats one already made in this run (\(describe(before)))", reason: loopReason(before))
            } else if pagesCountedByLoopGuard >= paginator.maximumPages {
                failure = loop("\(pagesCountedByLoopGuard) pages loaded, the most allowed (maxPages)", reason: "maxPages")
            }
        }
        objects.insert(contentsOf: kept, at: 0)
        if countedRun == nil { insertRows(kept, at: 0) }
        // A no-results row goes once there are objects.
        compose(keptHead: objects.count)
        lastError = nil
        if let failure {
            previous = nil
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

    /// What `pagination.maxPages` bounds: the pages loaded in the run, or with a window the
    /// pages held (scrolling a long list through a window loads many more pages than it holds).
    private var pagesCountedByLoopGuard: Int { paginator.window == nil ? pagesLoaded : loadedPages.count }

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
        requestsMade.remove(Self.token(page.request))
        objects.removeFirst(page.kept)
        if editingRows {
            removeRows(0..<page.kept)
            if let item = displayedItem { displayedItem = max(0, item - page.kept) }
            if let item = windowFocus { windowFocus = max(0, item - page.kept) }
        }
        objectsReceived = max(0, objectsReceived - page.received)
        runStart = runStart.addingClamped(page.received)
        previous = page.request
        prependError = nil
        forgetIdentitiesOfDroppedRows()
    }

    private func dropLastPage(editingRows: Bool) {
        let page = loadedPages.removeLast()
        requestsMade.remove(Self.token(page.request))
        let start = objects.count - page.kept
        objects.removeLast(page.kept)
        if editingRows { removeRows(start..<start + page.kept) }
        objectsReceived = max(0, objectsReceived - page.received)
        next = page.request
        trailingError = nil
        if let last = loadedPages.last {
            currentPage = Self.currentPage(after: last.request, pagesLoaded: loadedPages.count, paginator: paginator)
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

    private func currentOffset(of page: PageRequest) -> Int {
        if case .offset(let offset) = page { return offset }
        return 0
    }

    /// A next link resolved against the request's URL (RFC 3986); refused when it leaves the
    /// base URL's origin, unless allowed: the source's headers (credentials) go with it.
    private func follow(_ link: String, from requestURL: String) -> Result<PageRequest?, FetchError> {
        let resolved = URLResolution.resolve(link, against: requestURL)
        if let refusal = refusal(ofNextURL: resolved) { return .failure(refusal) }
        return .success(.url(resolved))
    }

    /// Why a next URL (a server's, or one restored from the cache) must not be requested: it
    /// leaves the base URL's origin (unless allowed), or it has no host or a port that does
    /// not fit. Nil when it may be.
    private func refusal(ofNextURL url: String) -> FetchError? {
        // Unusable first: a URL that cannot be requested at all is not a question of origins.
        let scheme = URLResolution.scheme(of: url)
        if let problem = scheme == "http" || scheme == "https" ? URLResolution.authorityProblem(in: url) : "it is not an http or https URL"
        {
            var error = FetchError(kind: .transport, message: "the next page's URL is unusable: \(problem)", url: lastURL)
            error.finalURL = URLResolution.redacted(url)
            return error
        }
        if !paginator.allowCrossOrigin, URLResolution.origin(of: url) != configuration.ownOrigin {
            var error = FetchError(
                kind: .crossOrigin,
                message:
                    "the next page's URL \(URLResolution.redacted(url)) leaves \(configuration.ownOrigin ?? "the source's origin"); set pagination.allowCrossOrigin to follow it",
                url: lastURL)
            error.finalURL = URLResolution.redacted(url)
            return error
        }
        return nil
    }

    /// A cursor as sent in a query: a non-empty string, or a number as JSON writes it.
    private static func cursorText(_ value: JSON) -> String? {
        switch value.kind {
        case .string: return value.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        case .integer, .real: return value.description
        default: return nil
        }
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
            next = nil
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

    private func describe(_ page: PageRequest) -> String {
        switch page {
        case .first: "the first page"
        case .page(let number): "page \(number)"
        case .offset(let offset): "offset \(offset)"
        case .cursor(let cursor): "cursor \"\(cursor.prefix(100))\""
        case .url(let url): URLResolution.redacted(url)
        }
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
        let expectedPage = Self.currentPage(after: pages[pages.count - 1].request, pagesLoaded: pages.count, paginator: paginator)
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
            let (expected, overflow) = currentOffset(of: page.request).addingReportingOverflow(page.received)
            if overflow {
                return "follows offset \(currentOffset(of: page.request)) and \(page.received) objects, past the last offset there can be"
            }
            return offset == expected ? nil : "must be {\"offset\": \(expected)}, got {\"offset\": \(offset)}"
        case (.cursor, .cursor):
            return nil
        case (.nextURL, .url(let url)), (.linkHeader, .url(let url)):
            return refusal(ofNextURL: url).map { "is refused as a server's would be: \($0.message)" }
        default:
            return "is a \(loopReason(next)) request, which the \(paginator.strategy.name) strategy never makes"
        }
    }

    /// `currentPage` after a page: its number when pages are numbered, else the pages loaded.
    private static func currentPage(after request: PageRequest, pagesLoaded: Int, paginator: PaginatorConfiguration) -> Int {
        switch (paginator.strategy, request) {
        case (_, .page(let number)): number
        case (.pageNumber, .first): paginator.firstPage
        default: pagesLoaded
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
        pagesLoaded = adopted.count
        objectsReceived = adopted.reduce(0) { $0.addingClamped($1.received) }
        requestsMade = Set(adopted.map { Self.token($0.request) })
        stalledPages = 0
        loadedOnce = true
        lastError = nil
        trailingError = nil
        metadata = adopted.last?.metadata ?? PageMetadata()
        currentPage =
            adopted.last.map { Self.currentPage(after: $0.request, pagesLoaded: pagesLoaded, paginator: paginator) } ?? currentPage
        next = adopted.last?.next
        previous = adopted.first?.previous
        prependError = nil
        runStart = adopted.first.map { startPosition(of: $0.request, metadata: $0.metadata) } ?? 0
        if let following = next, requestsMade.contains(Self.token(following)) || pagesLoaded >= paginator.maximumPages { next = nil }
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
        let target = target(of: page)
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
                let following =
                    (try? self.nextPage(
                        after: page, response: response, requestURL: requestURL, metadata: metadata,
                        objectsReceived: self.runStart.addingClamped(received)
                    ).get()) ?? nil
                let before =
                    walked.isEmpty ? (try? self.previousPage(before: page, response: response, requestURL: requestURL).get()) ?? nil : nil
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
        func described(_ request: PageRequest?) -> SourceDescription.NextPage? {
            switch request {
            case nil: nil
            case .first:
                if case .offset = paginator.strategy { .offset(0) } else { .page(paginator.firstPage) }
            case .page(let number): .page(number)
            case .offset(let offset): .offset(offset)
            case .cursor(let cursor): .cursor(cursor)
            case .url(let url): .url(URLResolution.redacted(url))
            }
        }
        let nextRequest = described(next)
        return .paginated(
            remoteState,
            SourceDescription.PagingState(
                paginator: paginator, pageSize: metadata.pageSize ?? paginator.pageSize, currentPage: loadedOnce ? currentPage : nil,
                numberOfPages: metadata.numberOfPages, numberOfTotalResults: metadata.numberOfTotalResults,
                hasMorePages: hasMorePages, numberOfObjects: objects.count, next: nextRequest, pagesLoaded: pagesLoaded,
                duplicatesDropped: duplicatesDropped, loadStates: loadStates, previous: described(previous),
                pagesDropped: pagesDropped,
                placeholders: SourceDescription.PlaceholdersState(
                    inForce: countedRun != nil ? .counted : .trailing, refusal: countedRefusal),
                capabilities: SourceDescription.PagingCapabilities(
                    pageBackwards: paginator.previousPageUnsupported, jump: jumpRefusal),
                jumps: jumpsMade))
    }
}
