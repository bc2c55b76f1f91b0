import JSONKit

/// A paging run's bookkeeping: the request plan, the pages held in the window, the duplicates
/// kept out, and where the run stands (the last page's metadata, `currentPage`).
///
/// Pages arriving, dropped or taken up whole are events; each answers the rows to hold and
/// the failure that ends the direction, and the owner puts the rows in place.
struct PagingRun {
    /// A page that arrived, as the run takes it.
    struct Arrival {
        /// The rows to hold (later duplicates dropped), with their identity hashes.
        var kept: [JSON]
        var hashes: [Int]
        /// Why paging stops in the page's direction (a link that may not be followed, a loop).
        var failure: FetchError?
    }

    let paginator: PaginatorConfiguration
    private(set) var plan: RequestPlan
    /// The pages held; rows displayed and read steer it (`focus(on:)`).
    var window: PageWindow
    private(set) var duplicates: DuplicateFilter
    /// The last page's metadata.
    private(set) var metadata = PageMetadata()
    /// The page number of the last page loaded (page numbers), else the pages loaded in this run.
    private(set) var currentPage: Int

    init(paginator: PaginatorConfiguration, identity: Identity) {
        self.paginator = paginator
        plan = RequestPlan(paginator: paginator)
        window = PageWindow(limits: paginator.window)
        // A counted list keeps every row where the server put it (a dropped one would move
        // every row after it off its index).
        duplicates = DuplicateFilter(
            policy: paginator.placeholderMode == .counted ? .keep : paginator.duplicates, identity: identity)
        currentPage = paginator.firstPage.addingClamped(-1)
    }

    /// A row an action put in the list: a page that brings it again brings a duplicate.
    mutating func hold(_ row: JSON) { duplicates.hold(row) }

    /// A run's first page (`startsRun`) or the page after the last arrived. `fromCache`: the
    /// persisted page a `304` confirmed (`response` holds its rows).
    mutating func nextPageArrived(
        _ page: PageRequest, response: DecodedResponse, fromCache: CachedPages.Page?, startsRun: Bool, links: LinkContext
    ) -> Arrival {
        metadata = fromCache?.metadata ?? paginator.metadata(of: response)
        if startsRun {
            window.startRun(
                at: paginator.startPosition(of: page, metadata: metadata), known: paginator.positionIsKnown(of: page, metadata: metadata))
            plan.startRun()
            duplicates.startRun()
        }
        let kept = duplicates.keep(response.objects, hashes: response.hashes(by: duplicates.identity))
        var failure = plan.nextPageArrived(
            page, response: response, metadata: metadata, kept: kept.rows.count,
            receivedInRun: window.endOfRun(receiving: response.objects.count), startsRun: startsRun, links: links)
        currentPage = paginator.currentPage(after: page, pagesLoaded: plan.pagesLoaded)
        window.appended(
            LoadedPage(
                request: page, validators: Validators(headers: response, keeping: fromCache?.validators), kept: kept.rows.count,
                received: response.objects.count, next: plan.next, metadata: metadata, previous: startsRun ? plan.previous : nil))
        failure = failure ?? plan.guardNext(pagesHeld: window.pages.count, errorURL: links.errorURL)
        return Arrival(kept: kept.rows, hashes: kept.hashes, failure: failure)
    }

    /// The page before the first one held arrived (its hashes are not answered).
    mutating func previousPageArrived(
        _ page: PageRequest, response: DecodedResponse, fromCache: CachedPages.Page?, links: LinkContext
    ) -> Arrival {
        var received = response.objects
        if case .offset = paginator.strategy {
            // The page asked for may reach past where the first page held starts (an offset
            // not a multiple of the page size): only the objects before it are new.
            let wanted = max(0, window.start - paginator.startPosition(of: page, metadata: PageMetadata()))
            if received.count > wanted { received = Array(received.prefix(wanted)) }
        }
        let kept = duplicates.keep(received)
        let metadataOfPage = fromCache?.metadata ?? paginator.metadata(of: response)
        var failure = plan.previousPageArrived(page, response: response, links: links)
        // Where a cursor's or a URL's page starts is where the run started, less what it brings;
        // the page before which there is none starts the list.
        let known = paginator.positionIsKnown(of: page, metadata: metadataOfPage)
        window.prepended(
            LoadedPage(
                request: page, validators: Validators(headers: response, keeping: fromCache?.validators), kept: kept.count,
                received: received.count, next: window.pages.first?.request, metadata: metadataOfPage, previous: plan.previous),
            position: known ? paginator.startPosition(of: page, metadata: metadataOfPage) : nil,
            startsList: page == .first || (failure == nil && plan.previous == nil && !response.objects.isEmpty))
        failure = failure ?? plan.guardPrevious(pagesHeld: window.pages.count, errorURL: links.errorURL)
        return Arrival(kept: kept, hashes: [], failure: failure)
    }

    /// Why a page before (`.prepend`) or after (`.append`) the run would not be loaded, or nil
    /// when it would.
    func refusal(_ direction: LoadDirection, isFetching: Bool, loadedOnce: Bool) -> String? {
        if isFetching { return "a fetch is in flight" }
        if !loadedOnce { return "no page is loaded yet: call fetchData first" }
        switch direction {
        case .refresh: return nil
        case .append: return plan.next == nil ? "there are no more pages" : nil
        case .prepend:
            if plan.previous != nil { return nil }
            if let unsupported = paginator.previousPageUnsupported { return unsupported }
            switch window.pages.first?.request {
            case .first?, nil: return "the first page is loaded: there is no page before it"
            default: return "the server named no page before the first one loaded"
            }
        }
    }

    /// The server said past the last page that there is none.
    mutating func endReached() { plan.endReached() }

    /// The page the window drops next (`PageWindow.nextDrop`): the plan asks for it again
    /// when paging back (or on) reaches it, and the last page held says where the run stands.
    /// The owner removes its rows, then tells `holdOnly(_:)` the rows held.
    mutating func nextDrop(objectCount: Int, counted: Bool, arrived: LoadDirection) -> PageWindow.Drop? {
        let drop = window.nextDrop(objectCount: objectCount, counted: counted, arrived: arrived)
        switch drop {
        case .first(let page)?:
            plan.droppedFirstPage(page)
        case .last(let page, let nowLast)?:
            plan.droppedLastPage(page)
            currentPage = paginator.currentPage(after: nowLast.request, pagesLoaded: window.pages.count)
            metadata = nowLast.metadata
        case nil: break
        }
        return drop
    }

    /// Rows the window dropped may come back: only `held` are duplicates now.
    mutating func holdOnly(_ held: [JSON]) { duplicates.holdOnly(held) }

    /// Takes up `run` whole (restored from the cache, or walked again by a refresh): its rows,
    /// later duplicates dropped again, counts, the loop guard's requests, and the next request
    /// after the last page, unless the guard stops it. `hashes`: each page's rows' identity
    /// hashes, when the caller has them (the kept rows' are answered then, else none).
    mutating func adopt(
        _ run: [(page: LoadedPage, rows: [JSON])], hashes: [[Int]]?, duplicatesDropped: Int?
    ) -> (rows: [JSON], hashes: [Int]) {
        let kept = duplicates.adopt(run.map(\.rows), hashes: hashes, dropped: duplicatesDropped)
        var pages = run.map(\.page)
        for index in pages.indices { pages[index].kept = kept.pages[index].count }
        plan.adopt(pages)
        window.adopt(pages, start: pages.first.map { paginator.startPosition(of: $0.request, metadata: $0.metadata) } ?? 0)
        metadata = pages.last?.metadata ?? PageMetadata()
        currentPage = pages.last.map { paginator.currentPage(after: $0.request, pagesLoaded: plan.pagesLoaded) } ?? currentPage
        return (Array(kept.pages.joined()), kept.hashes)
    }

    /// Pages of a stored run that follow the pages held, taken up as stored (`adopt` took the
    /// first ones): the rows kept and their hashes. `duplicatesDropped`: the count to report.
    mutating func adoptFollowing(
        _ run: [(page: LoadedPage, rows: [JSON])], hashes: [[Int]], duplicatesDropped: Int
    ) -> (rows: [JSON], hashes: [Int]) {
        var rows: [JSON] = [], keptHashes: [Int] = []
        for (index, (var page, pageRows)) in run.enumerated() {
            let kept = duplicates.keep(pageRows, hashes: hashes[index])
            page.kept = kept.rows.count
            plan.adoptFollowing(page)
            window.appended(page)
            rows += kept.rows
            keptHashes += kept.hashes
        }
        duplicates.reported(duplicatesDropped)
        if let last = run.last?.page {
            metadata = last.metadata
            currentPage = paginator.currentPage(after: last.request, pagesLoaded: plan.pagesLoaded)
        }
        return (rows, keptHashes)
    }

    /// A new query: what the last run said of its neighbours and its place no longer holds.
    mutating func forget() {
        window.forget()
        plan.forgetNeighbours()
        metadata = PageMetadata()
        currentPage = paginator.firstPage.addingClamped(-1)
    }
}
