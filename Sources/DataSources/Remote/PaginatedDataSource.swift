import JSONKit

/// Instant Cocoa's `ICPaginatedDataSource`: a collection fetched page by page.
///
/// `fetchData` loads the first page and replaces the rows when it arrives. While more
/// pages may remain, a trailing loading placeholder (if stored) ends the list, so showing
/// it asks for the next page. `fetchNextPage` appends the next page; a failed page leaves
/// the loaded rows, puts the error placeholder (if stored) in the trailing row, and is
/// asked for again by the next `fetchNextPage`.
public final class PaginatedDataSource: RemoteCollection {
    public let paginator: PaginatorConfiguration
    /// The last page loaded; `firstPage - 1` before any.
    private(set) var currentPage: Int
    private(set) var hasMorePages = false
    private var metadata = PageMetadata()
    private var trailingError: FetchError?
    private var loadedOnce = false

    public override var kind: String { "paginated" }

    public init(name: String, identity: Identity, configuration: RemoteConfiguration, paginator: PaginatorConfiguration,
                loader: RemoteLoading, errorRow: @escaping (FetchError) -> JSON) {
        self.paginator = paginator
        currentPage = paginator.firstPage - 1
        super.init(name: name, identity: identity, configuration: configuration, loader: loader, errorRow: errorRow)
    }

    public override func fetchData() {
        if isFetching { endCycleAsCancelled("superseded by a new fetchData") }
        emit(.willLoadData)
        if !loadedOnce, placeholders.contains(.loading) { setRows([Placeholder.loadingRow]) }
        load(page: paginator.firstPage, replacing: true)
    }

    /// Why `fetchNextPage` would do nothing, or nil when it would load a page.
    public var nextPageRefusal: String? {
        if isFetching { return "a fetch is in flight" }
        if !loadedOnce { return "no page is loaded yet: call fetchData first" }
        if !hasMorePages { return "there are no more pages" }
        return nil
    }

    /// Loads the next page; false (and nothing happens) while fetching or when none remain.
    @discardableResult
    public func fetchNextPage() -> Bool {
        guard nextPageRefusal == nil else { return false }
        emit(.willLoadData)
        trailingError = nil
        compose(keptHead: objects.count)
        load(page: currentPage + 1, replacing: false)  // hasMorePages is false at Int.max: no overflow
        return true
    }

    public override func willDisplayObject(at indexPath: IndexPath) {
        if indexPath == lastIndexPath { fetchNextPage() }
    }

    public override func cancelFetch(reason: CancelReason = .cancelFetch) {
        guard isFetching else { return }
        abandonRequest()
        compose(keptHead: objects.count)
        endCycleAsCancelled(reason.message)
    }

    private func load(page: Int, replacing: Bool) {
        request(extraQuery: paginator.queryParameters(forPage: page)) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let loaded):
                let keptHead = replacing ? 0 : self.objects.count
                if replacing { self.objects = loaded.objects } else { self.objects.append(contentsOf: loaded.objects) }
                self.currentPage = page
                self.loadedOnce = true
                self.lastError = nil
                self.trailingError = nil
                self.metadata = self.paginator.metadata(in: loaded.document)
                self.hasMorePages = self.metadata.hasMorePages(after: page, firstPage: self.paginator.firstPage,
                                                               received: loaded.objects.count, loaded: self.objects.count)
                self.compose(keptHead: keptHead)
                self.emit(.finishedLoading)
            case .failure(let error):
                self.lastError = error
                if self.loadedOnce {
                    // The loaded rows stay; the trailing row shows the failure.
                    if !replacing { self.trailingError = error }
                    self.compose(keptHead: self.objects.count)
                } else {
                    self.setRows(self.placeholders.contains(.errors) ? [self.errorRow(for: error)] : [])
                }
                self.emit(.failedWithError(.fetch(error)))
            }
        }
    }

    /// The rows for the current state: the objects, then the trailing placeholder.
    /// `keptHead`: how many leading objects are the rows they were (see `replaceLayout`).
    private func compose(keptHead: Int) {
        var rows = objects
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
        setRows(rows, keptHead: keptHead)
    }

    public override var kindState: SourceDescription.KindState {
        .paginated(remoteState, SourceDescription.PagingState(
            paginator: paginator, pageSize: metadata.pageSize ?? paginator.pageSize, currentPage: loadedOnce ? currentPage : nil,
            numberOfPages: metadata.numberOfPages, numberOfTotalResults: metadata.numberOfTotalResults,
            hasMorePages: hasMorePages, numberOfObjects: objects.count))
    }
}
