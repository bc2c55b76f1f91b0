/// A source whose rows are computed from one child's (sectioned, filtered). Fetching,
/// cancelling and paging go to the child; the subclass follows the child's events (as a
/// `DataSourceObserver`, its load cycle through `mirrorLoadCycle`) and computes its rows.
package class DerivedDataSource: DataSource {
    package let child: DataSource

    package override var children: [DataSource] { [child] }

    package init(name: String, identity: Identity, child: DataSource) {
        self.child = child
        super.init(name: name, identity: identity)
    }

    /// Fetches the child; this source's cycle mirrors the child's, which a well-behaved child
    /// opens at once with `willLoadData`.
    package override func fetchData() { child.fetchData() }

    package override func cancelFetch(reason: CancelReason = .cancelFetch) { child.cancelFetch(reason: reason) }

    /// The last row here stands for the end of the child's rows, though it may not be the
    /// child's last row (sorted, filtered): displaying it displays the child's last, so that
    /// a paginated child loads its next page.
    package override func willDisplayObject(at indexPath: IndexPath) {
        guard indexPath == lastIndexPath, let last = child.lastIndexPath else { return }
        child.willDisplayObject(at: last)
    }

    /// The child's pages to come are this source's.
    package override var hasMoreToLoad: Bool { child.hasMoreToLoad }
    @discardableResult
    package override func loadMore() -> Bool { child.loadMore() }
}
