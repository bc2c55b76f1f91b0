import JSONKit

/// Instant Cocoa's `ICRemoteDataSource`: one GET of a collection.
///
/// While a fetch is in flight the rows are the loading placeholder (if stored), unless they
/// are rows the fetch revalidates (rows from the persisted cache, or rows whose response
/// gave validators): those stay until the answer. On success they are the mapped objects,
/// or the no-results placeholder (if stored) when there are none; a `304` keeps them. On
/// failure or cancellation the objects loaded before come back; with none, the error
/// placeholder (if stored, and not for a cancellation).
package final class RemoteDataSource: RemoteCollection {
    package override var kind: String { "remote" }
    /// The validators of the response the rows came from.
    private var validators: Validators?
    private var loadedOnce = false
    /// Whether the cache entry holds the rows shown (restored or written since).
    private var cacheHoldsRows = false
    /// The values read from the environment or files that entry is stored under.
    private var rowsCachedWith: String?

    package override init(
        name: String, identity: Identity, configuration: RemoteConfiguration, loader: RemoteLoading
    ) {
        super.init(name: name, identity: identity, configuration: configuration, loader: loader)
    }

    package override var kindState: SourceDescription.KindState { .remote(remoteState) }

    package override func fetchData() {
        stopRefresh()
        if isFetching { endCycleAsCancelled("superseded by a new fetchData") }
        lastWarning = nil
        emit(.willLoadData)
        if !loadedOnce, let (cached, storedAt) = cachedPages(), let page = cached.pages.first {
            objects = page.rows
            rebaseObjects(in: 0..<objects.count, startsRun: true)
            validators = page.validators
            loadedOnce = true
            cacheHoldsRows = true
            rowsCachedWith = configuration.externalCacheMaterial()
            setRows(shownRows)
            showingCachedRows(storedAt: storedAt)
        }
        let revalidating = isStale || (loadedOnce && !(validators?.isEmpty ?? true))
        if !revalidating, placeholders.contains(.loading) { setRows([Placeholder.loadingRow]) }
        request(validators: revalidating ? validators : nil) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let loaded):
                self.accept(loaded)
                self.emit(.finishedLoading)
            case .failure(let error):
                self.lastError = error
                self.setRows(self.objects.isEmpty && self.placeholders.contains(.errors) ? [error.placeholderRow] : self.objects)
                self.emit(.failedWithError(.fetch(error)))
            }
        }
    }

    package override func cancelFetch(reason: CancelReason = .cancelFetch) {
        guard isFetching else { return }
        abandonRequest()
        setRows(objects)
        endCycleAsCancelled(reason.message)
    }

    @discardableResult
    package override func refresh(completion: @escaping (RefreshOutcome) -> Void) -> Bool {
        guard !isFetching, !isRefreshing, loadedOnce else { return false }
        beginRefresh(completion)
        request(validators: validators) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let loaded):
                let before = self.revision
                self.accept(loaded)
                self.endRefresh(self.revision == before ? .unchanged : .changed)
            case .failure(let error):
                self.endRefresh(.failed(error))
            }
        }
        return true
    }

    /// A remote source writes one page: the first, with no paging state.
    override func cacheProblem(in cached: CachedPages) -> String? {
        guard cached.pages.count == 1 else { return "a remote source's entry holds one page, not \(cached.pages.count)" }
        let page = cached.pages[0]
        if page.request != .first { return "pages[0].request must be {\"first\": true}" }
        if page.next != nil { return "pages[0].next must be absent: a remote source has one page" }
        if page.received != page.rows.count { return "pages[0].received must be \(page.rows.count), the rows kept, got \(page.received)" }
        if page.metadata != PageMetadata() { return "pages[0].metadata must be empty for a remote source" }
        if cached.currentPage != 1 { return "currentPage must be 1, got \(cached.currentPage)" }
        if cached.duplicatesDropped != 0 { return "duplicatesDropped must be 0, got \(cached.duplicatesDropped)" }
        return mappedRowsProblem(page.rows, field: "pages[0].rows")
    }

    override func startNewQuery(keepingRows: Bool) {
        loadedOnce = false
        validators = nil
        cacheHoldsRows = false
        rowsCachedWith = nil
        guard !keepingRows else { return }
        objects = []
        setRows(placeholders.contains(.loading) ? [Placeholder.loadingRow] : [])
    }

    /// The rows shown are the objects (or a placeholder row): the edit shows in place while
    /// they are, else as the difference to the rows to show.
    override func showEdit(_ edit: ObjectEdit) {
        let shown = numberOfObjects(inSection: 0)
        let showsPlaceholder = shown == 1 && layout.sections[0][0].hasMember(Placeholder.memberName)
        // While a load shows its loading row, the edit shows when the objects do.
        if isFetching, showsPlaceholder, layout.sections[0][0] == Placeholder.loadingRow { return }
        let before: Int
        switch edit {
        case .replaced: before = objects.count
        case .removed: before = objects.count + 1
        case .inserted: before = objects.count - 1
        }
        guard shown == before, !objects.isEmpty, !showsPlaceholder else { return setRows(shownRows) }
        super.showEdit(edit)
    }

    private var shownRows: [JSON] {
        objects.isEmpty && placeholders.contains(.noResults) ? [Placeholder.noResultsRow] : objects
    }

    /// A response: new rows (the change set says which differ), or a `304` confirming them.
    private func accept(_ loaded: DecodedResponse) {
        lastError = nil
        loadedOnce = true
        if loaded.isNotModified {
            validators = Validators(headers: loaded, keeping: validators)
            setRows(shownRows)
            confirmed()
            touchCache()
            return
        }
        let before = revision
        objects = loaded.objects
        validators = Validators(headers: loaded)
        if rebaseObjects(in: 0..<objects.count, startsRun: true) || objects.isEmpty {
            setRows(shownRows)
        } else {
            setRows(objects, hashes: loaded.hashes(by: identity))
        }
        confirmed()
        // The same rows as shown are the rows stored, unless actions changed rows since (a
        // committed remove leaves the stored entry with a row the server no longer has).
        if revision == before, cacheHoldsRows, rowsCachedWith == responseCredentials, !actionsChangedRowsSinceStored {
            touchCache()
        } else {
            cacheHoldsRows = true
            rowsCachedWith = responseCredentials
            storeInCache(
                CachedPages(
                    pages: [
                        CachedPages.Page(
                            request: .first, validators: validators ?? Validators(), rows: objects,
                            received: objects.count, next: nil, metadata: PageMetadata())
                    ],
                    currentPage: 1, duplicatesDropped: 0
                ).entryPages())
        }
    }
}
