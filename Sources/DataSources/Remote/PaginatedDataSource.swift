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
    }
    private var loadedPages: [LoadedPage] = []

    // Load states (Paging 3's): derived from the paging state, save what only a failure knows.
    /// The direction of the load in flight, set before its `willLoadData`.
    private var loadingDirection: LoadDirection?
    /// Why the last first page of a run failed, until one arrives.
    private var refreshError: FetchError?
    /// What `describeSource.loadStates` and `didChangeLoadState` last said.
    package private(set) var loadStates = LoadStates()

    package override var kind: String { "paginated" }
    override var metadataHeader: String? { paginator.metadataHeader }

    package init(
        name: String, identity: Identity, configuration: RemoteConfiguration, paginator: PaginatorConfiguration,
        loader: RemoteLoading, errorRow: @escaping (FetchError) -> JSON
    ) {
        self.paginator = paginator
        currentPage = paginator.firstPage.addingClamped(-1)
        loadedIdentities = IdentitySet(identity: identity)
        super.init(name: name, identity: identity, configuration: configuration, loader: loader, errorRow: errorRow)
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
            restore(cached)
            compose(keptHead: 0)
            showingCachedRows(storedAt: storedAt)
        }
        if !loadedOnce, !showsPreviousQuery, placeholders.contains(.loading) { setRows([Placeholder.loadingRow]) }
        retriesLeft = paginator.retryAfterRetries
        let first = loadedPages.first.flatMap { $0.request == .first && !$0.validators.isEmpty ? $0.validators : nil }
        load(.first, replacing: true, validators: first)
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
        load(next, replacing: false)
        return true
    }

    package override func willDisplayObject(at indexPath: IndexPath) {
        // Within `prefetchDistance` rows of the last row (0: the last row itself).
        guard let last = lastIndexPath, indexPath.section == last.section, indexPath.item <= last.item else { return }
        // The client's item is range-checked on the wire; a library caller's may be anything.
        let (distance, overflow) = last.item.subtractingReportingOverflow(indexPath.item)
        guard !overflow, distance <= paginator.prefetchDistance else { return }
        fetchNextPage()
    }

    package override func cancelFetch(reason: CancelReason = .cancelFetch) {
        guard isFetching else { return }
        abandonRequest()
        compose(keptHead: objects.count)
        endCycleAsCancelled(reason.message)
    }

    override func startNewQuery(keepingRows: Bool) {
        loadedOnce = false
        loadedPages = []
        next = nil
        trailingError = nil
        metadata = PageMetadata()
        currentPage = paginator.firstPage.addingClamped(-1)
        refreshError = nil
        defer { publishLoadStates() }
        guard !keepingRows else { return }
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
            prepend: state(.prepend, error: nil, endReached: loadedOnce),
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
        if refreshError != nil { return nil }
        if let trailingError {
            guard next != nil else {
                return
                    "the append direction stopped with kind \(trailingError.kind.rawValue), which asking again cannot change: fetchData starts a new run"
            }
            return nil
        }
        return "no direction has failed: loadStates has no error"
    }

    /// Paging 3's `retry()`: asks again for the failed direction only, the first page when the
    /// run's first page failed, else the page after the last. Nil (and nothing happens) when
    /// `retryRefusal` says why not.
    @discardableResult
    package func retry() -> LoadDirection? {
        guard retryRefusal == nil else { return nil }
        if refreshError != nil {
            fetchData()
            return .refresh
        }
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

    private func load(_ page: PageRequest, replacing: Bool, delaySeconds: Double = 0, validators: Validators? = nil) {
        let target = target(of: page)
        let requestURL = url(of: target)
        request(target, delaySeconds: delaySeconds, validators: validators) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let response):
                self.received(response, for: page, requestURL: requestURL, replacing: replacing)
            case .failure(let error):
                self.failed(error, for: page, replacing: replacing, validators: validators)
            }
        }
    }

    // MARK: Responses

    private func received(_ response: DecodedResponse, for page: PageRequest, requestURL: String, replacing: Bool) {
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
        if replacing {
            refreshError = nil
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
        var kept = received, keptHashes = identity.hashes(of: received)
        if paginator.duplicates == .dropLater {
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
        metadata = paginator.metadata(of: response)
        stalledPages = !received.isEmpty && kept.isEmpty ? stalledPages + 1 : 0

        var failure: FetchError?
        switch nextPage(after: page, response: response, requestURL: requestURL, metadata: metadata, objectsReceived: objectsReceived) {
        case .success(let following):
            next = following
        case .failure(let error):
            next = nil
            failure = error
        }
        loadedPages.append(
            LoadedPage(
                request: page, validators: Validators(headers: response), kept: kept.count,
                received: received.count, next: next, metadata: metadata))
        if let following = next, failure == nil {
            if requestsMade.contains(Self.token(following)) {
                failure = loop(
                    "the next request repeats one already made in this run (\(describe(following)))", reason: loopReason(following))
            } else if stalledPages >= paginator.stalledPagesLimit {
                failure = loop("\(stalledPages) pages in a row brought no new object", reason: "noNewObjects")
            } else if pagesLoaded >= paginator.maximumPages {
                failure = loop("\(pagesLoaded) pages loaded, the most allowed (maxPages)", reason: "maxPages")
            }
        }
        if let failure {
            next = nil
            lastError = failure
            trailingError = failure
            compose(keptHead: keptHead, hashesAfterHead: keptHashes)
            confirmed()
            storeLoadedPages()
            emit(.failedWithError(.fetch(failure)))
            return
        }
        compose(keptHead: keptHead, hashesAfterHead: keptHashes)
        confirmed()
        storeLoadedPages()
        emit(.finishedLoading)
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
        if !paginator.allowCrossOrigin, URLResolution.origin(of: url) != URLResolution.origin(of: configuration.baseURL) {
            var error = FetchError(
                kind: .crossOrigin,
                message:
                    "the next page's URL \(URLResolution.redacted(url)) leaves \(URLResolution.origin(of: configuration.baseURL) ?? "the base URL's origin"); set pagination.allowCrossOrigin to follow it",
                url: lastURL)
            error.finalURL = URLResolution.redacted(url)
            return error
        }
        if let problem = URLResolution.authorityProblem(in: url) {
            return FetchError(kind: .transport, message: "the next page's URL is unusable: \(problem)", url: lastURL)
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

    private func failed(_ error: FetchError, for page: PageRequest, replacing: Bool, validators: Validators?) {
        // A server that asks to wait: retried here when allowed and not too long.
        if let delay = error.retryAfterSeconds, retriesLeft > 0, delay <= paginator.retryAfterMaximumSeconds {
            retriesLeft -= 1
            load(page, replacing: replacing, delaySeconds: delay, validators: validators)
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
        if replacing { refreshError = error }
        if loadedOnce {
            // The loaded rows stay; the trailing row shows the failure.
            if !replacing { trailingError = error }
            compose(keptHead: objects.count)
        } else if !showsPreviousQuery {
            setRows(placeholders.contains(.errors) ? [errorRow(for: error)] : [])
        }
        // Else the previous query's rows stay, still stale, as a remote source's do.
        emit(.failedWithError(.fetch(error)))
    }

    /// The rows for the current state: the objects, then the trailing placeholder.
    /// `keptHead`: how many leading objects are the rows they were; only the rows after
    /// them are built and compared (see `replaceTail`). `hashesAfterHead`: the identity
    /// hashes of the objects after the head, when the caller has them.
    private func compose(keptHead: Int, hashesAfterHead: [Int]? = nil) {
        var rows = Array(objects[keptHead...])
        if let trailingError {
            // Without a stored error row the failed page leaves no trailing row (Protocol.md):
            // a loading row there would claim a load that is not happening. The next
            // fetchNextPage, or displaying the last row, asks for the failed page again.
            if placeholders.contains(.errors) { rows.append(errorRow(for: trailingError)) }
        } else if hasMorePages, placeholders.contains(.loading) {
            rows.append(Placeholder.loadingRow)
        } else if objects.isEmpty, loadedOnce, placeholders.contains(.noResults) {
            rows.append(Placeholder.noResultsRow)
        }
        let hashes = hashesAfterHead.map { known in known + rows[known.count...].map(identity.hash(of:)) }
        setRows(keeping: keptHead, tail: rows, hashes: hashes)
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
        guard loadedPages.count <= configuration.cache.maximumPages else { return }
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

    /// Takes up a run where the cached pages left it (`cacheProblem(in:)` has checked them).
    /// A URL was stored without credentials: it gets the configured ones back, so that it is
    /// the URL the live run requested (a relative next link keeps the base URL's userinfo).
    private func restore(_ cached: CachedPages) {
        let collectionURL = url(of: .collection(query: []))
        func withConfiguredCredentials(_ request: PageRequest) -> PageRequest {
            guard case .url(let url) = request else { return request }
            return .url(URLResolution.withCredentials(of: collectionURL, appliedTo: url))
        }
        adopt(
            cached.pages.map {
                (
                    LoadedPage(
                        request: withConfiguredCredentials($0.request), validators: $0.validators, kept: $0.rows.count,
                        received: $0.received, next: $0.next.map(withConfiguredCredentials), metadata: $0.metadata), $0.rows
                )
            },
            duplicatesDropped: cached.duplicatesDropped)
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
            switch paginator.duplicates {
            case .keep:
                if page.received != page.rows.count {
                    return "\(field).received must be \(page.rows.count), the rows kept (duplicates are kept), got \(page.received)"
                }
            case .dropLater:
                // decode has checked received >= rows.count.
                droppedByPages = droppedByPages.addingClamped(page.received - page.rows.count)
                if let repeated = page.rows.firstIndex(where: { !identities.insert($0) }) {
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
    private func adopt(_ pages: [(page: LoadedPage, rows: [JSON])], duplicatesDropped dropped: Int? = nil) {
        var rows: [JSON] = [], identities = IdentitySet(identity: identity), droppedNow = 0
        var adopted: [LoadedPage] = []
        for var (page, pageRows) in pages {
            if paginator.duplicates == .dropLater {
                let kept = pageRows.filter { identities.insert($0) }
                droppedNow += pageRows.count - kept.count
                pageRows = kept
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
        if let following = next, requestsMade.contains(Self.token(following)) || pagesLoaded >= paginator.maximumPages { next = nil }
    }

    // MARK: Live lists

    /// Walks the loaded pages again from the first, each conditionally when its request is the
    /// one that loaded it, and, if any page came back different, replaces the rows once at the
    /// end: one `didChange` with the difference. A failed request changes nothing.
    @discardableResult
    package override func refresh(completion: @escaping (RefreshOutcome) -> Void) -> Bool {
        guard !isFetching, !isRefreshing, loadedOnce, !loadedPages.isEmpty else { return false }
        beginRefresh(completion)
        refreshPage(.first, walked: [], changed: false)
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
                        objectsReceived: received
                    ).get()) ?? nil
                walked.append(
                    (
                        LoadedPage(
                            request: page, validators: Validators(headers: response), kept: response.objects.count,
                            received: response.objects.count, next: following, metadata: metadata), response.objects
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
        let nextRequest: SourceDescription.NextPage?
        switch next {
        case nil: nextRequest = nil
        case .first: nextRequest = .page(paginator.firstPage)
        case .page(let number): nextRequest = .page(number)
        case .offset(let offset): nextRequest = .offset(offset)
        case .cursor(let cursor): nextRequest = .cursor(cursor)
        case .url(let url): nextRequest = .url(URLResolution.redacted(url))
        }
        return .paginated(
            remoteState,
            SourceDescription.PagingState(
                paginator: paginator, pageSize: metadata.pageSize ?? paginator.pageSize, currentPage: loadedOnce ? currentPage : nil,
                numberOfPages: metadata.numberOfPages, numberOfTotalResults: metadata.numberOfTotalResults,
                hasMorePages: hasMorePages, numberOfObjects: objects.count, next: nextRequest, pagesLoaded: pagesLoaded,
                duplicatesDropped: duplicatesDropped, loadStates: loadStates))
    }
}
