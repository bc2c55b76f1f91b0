import JSONKit

/// What a paginated source does with the answers to its page requests: the rows of a page
/// that arrived go in place, a failed page is retried, ends the list or fails the load.
/// `PagingRun`, `PageFailures` and `CacheRestore` decide; this performs what they say.
extension PaginatedDataSource {
    /// `cached`: the persisted copy of a page loaded again (`storedCopy(of:)`), whose
    /// validators make the request conditional: a `304` brings its rows back from the cache.
    func load(
        _ page: PageRequest, _ direction: LoadDirection, delaySeconds: Double = 0, validators: Validators? = nil,
        cached: CachedPages.Page? = nil
    ) {
        let target = paginator.target(of: page)
        let requestURL = url(of: target)
        let validators = validators.flatMap { $0.isEmpty ? nil : $0 }
        request(target, delaySeconds: delaySeconds, validators: validators) { [weak self] result in
            guard let self else { return }
            // A page asked for again: a `304` brings the stored copy's rows back.
            let (result, fromCache) =
                direction == .refresh ? (result, nil) : CacheRestore.revalidated(result, cached: cached, errorURL: self.lastURL)
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

    func storedCopy(of page: PageRequest) -> CachedPages.Page? {
        cache.storedCopy(of: page, positions: storedPositions) { self.cachedPage(at: $0) }
    }

    func links(_ requestURL: String) -> LinkContext {
        LinkContext(requestURL: requestURL, ownOrigin: configuration.ownOrigin, errorURL: lastURL)
    }

    /// A run's first page (`replacing`) or the page after the last. `fromCache`: the persisted
    /// page a `304` confirmed (`response` holds its rows).
    func received(
        _ response: DecodedResponse, for page: PageRequest, requestURL: String, replacing: Bool, fromCache: CachedPages.Page?
    ) {
        if response.isNotModified || (replacing && repeatsHeldFirstPage(page, response)) {
            // The first page as loaded is current: so are the pages after it, for this fetch.
            // (Only a conditional request made from a loaded first page, or a POST's first page
            // answered again with its rows, gets here.)
            run.window.firstPageConfirmed(headers: response)
            lastError = nil
            loads.confirmed()
            compose(keptHead: objects.count)
            confirmed()
            touchCache()
            return emit(.finishedLoading)
        }
        if replacing,
            let beyond = run.plan.beyondEnd(
                page, response: response, metadata: fromCache?.metadata ?? paginator.metadata(of: response), jumpingTo: jumps.pending,
                errorURL: lastURL)
        {
            // Like any failed first page: the rows loaded (or the previous query's) stay.
            return failed(beyond, for: page, .refresh, validators: nil)
        }
        loads.arrived(replacing ? .refresh : .append)
        if replacing {
            // The server's first page replaces the stored run: its pages not yet read stay unread.
            stopRestoring()
            jumps.landed()
            objects = []
        }
        let keptHead = objects.count
        let arrival = run.nextPageArrived(page, response: response, fromCache: fromCache, startsRun: replacing, links: links(requestURL))
        objects.append(contentsOf: arrival.kept)
        // Pending actions stay applied over the server's rows.
        let rebased = rebaseObjects(in: keptHead..<objects.count, startsRun: replacing)
        loadedOnce = true
        lastError = arrival.failure
        if let failure = arrival.failure { loads.failed(.append, failure) }
        compose(keptHead: keptHead, hashesAfterHead: rebased ? nil : arrival.hashes)
        arrived(.append, failure: arrival.failure)
    }

    /// Whether a POST's first page came back with exactly the rows held for it. POST answers
    /// rarely carry validators, so this is their `304`: the pages held stay, confirmed, and no
    /// `didChange` is sent. (A GET without validators replaces its run, as it always has.)
    func repeatsHeldFirstPage(_ page: PageRequest, _ response: DecodedResponse) -> Bool {
        guard configuration.bodyTemplate != nil, loadedOnce, run.window.start == 0, let first = run.window.pages.first,
            first.request == page, first.kept == first.received, response.objects.count == first.kept, first.kept <= objects.count
        else { return false }
        return objects[..<first.kept].elementsEqual(response.objects)
    }

    /// The page before the first one loaded arrived: its rows go in at the top (an `inserted`
    /// change set), the rows loaded stay where they are relative to one another.
    func receivedPrevious(_ response: DecodedResponse, for page: PageRequest, requestURL: String, fromCache: CachedPages.Page?) {
        let arrival = run.previousPageArrived(page, response: response, fromCache: fromCache, links: links(requestURL))
        let (kept, hidden) = rebased(arrival.kept)
        for _ in 0..<hidden { keepPagesInStep(with: .removed(0)) }
        objects.insert(contentsOf: kept, at: 0)
        if counted.shown == nil { insertRows(kept, at: 0) }
        // A no-results row goes once there are objects.
        compose(keptHead: objects.count)
        lastError = arrival.failure
        if let failure = arrival.failure { loads.failed(.prepend, failure) }
        arrived(.prepend, failure: arrival.failure)
    }

    /// What follows a page that arrived, its rows in place: the cache stores the run, the
    /// window drops what it does not hold, the load ends, and a counted list pages on.
    func arrived(_ direction: LoadDirection, failure: FetchError?) {
        if direction == .append { confirmed() }
        storeLoadedPages()
        applyWindow(arrived: direction)
        if let failure { return emit(.failedWithError(.fetch(failure))) }
        emit(.finishedLoading)
        pageTowardsDisplayedRow()
    }

    func failed(
        _ error: FetchError, for page: PageRequest, _ direction: LoadDirection, validators: Validators?, cached: CachedPages.Page? = nil
    ) {
        switch failures.failed(error, direction, loadedOnce: loadedOnce) {
        case .retry(let delay):
            load(page, direction, delaySeconds: delay, validators: validators, cached: cached)
        case .endList:
            run.endReached()
            loads.endMoved(.append)
            compose(keptHead: objects.count)
            emit(.finishedLoading)
        case .fail(let recordedIn, let rows):
            lastError = error
            if let recordedIn { loads.failed(recordedIn, error) }
            if direction == .refresh { jumps.landed() }
            switch rows {
            case .stay: break
            case .trailingRowShowsIt: compose(keptHead: objects.count)
            // Else the previous query's rows stay, still stale, as a remote source's do.
            case .errorRow where !showsPreviousQuery: setRows(placeholders.contains(.errors) ? [error.placeholderRow] : [])
            case .errorRow: break
            }
            emit(.failedWithError(.fetch(error)))
        }
    }
}
