/// How a counted list follows the rows displayed: a row near either end of the loaded run,
/// or an unloaded one within `jumpThreshold` rows of it, loads the page next to the run on
/// its side; an unloaded row farther away is a jump, as Paging 3 makes past its jump threshold:
/// the page holding it loads as a new run, and no page between is requested.
///
/// Displays (and arrivals, so that pages towards a row displayed while another loaded follow
/// one another) are events; `pageTowardsDisplayedRow` answers the load to start.
struct Jumps {
    /// What the owner loads.
    enum Action: Equatable {
        case none
        /// The page holding row `item`, as a new run.
        case jump(to: Int, PageRequest)
        case fetchNext
        case fetchPrevious
        /// The row displayed is loaded: the page after the run when it is near the end, else
        /// the page before when it is near the start.
        case nearEnds(next: Bool, previous: Bool)
    }

    /// What the page size is worked out from, besides the configuration.
    struct Sizes {
        /// The metadata's page size.
        var metadataPageSize: Int?
        /// Objects the first page held sent.
        var firstPageReceived: Int?
    }

    let paginator: PaginatorConfiguration
    /// The last row the client displayed, which a counted list pages towards; nil before any.
    private(set) var displayedItem: Int?
    /// The row a jump is loading the page of, until it arrives or fails.
    private(set) var pending: Int?
    /// Jumps made in this source's life (`describeSource.jumps`).
    private(set) var made = 0
    /// The row being walked to, the pages loaded towards it so far, and whether it was jumped to.
    private var walk: (item: Int, pages: Int, jumped: Bool)?

    init(paginator: PaginatorConfiguration) {
        self.paginator = paginator
    }

    // MARK: Events

    /// The client displayed row `item`.
    mutating func displayed(_ item: Int) { displayedItem = item }

    /// The window dropped `rows` rows above the row displayed (a list not counted).
    mutating func rowsRemovedAbove(_ rows: Int) {
        if let item = displayedItem { displayedItem = max(0, item - rows) }
    }

    /// A jump's load starts.
    mutating func jumping(to item: Int) {
        pending = item
        made = made.addingClamped(1)
    }

    /// The jump's page arrived, failed or was cancelled.
    mutating func landed() { pending = nil }

    /// A new query: no row displayed is one of its rows.
    mutating func forget() {
        displayedItem = nil
        pending = nil
    }

    /// The load that brings the loaded rows (`run`, in the whole list) towards the row last
    /// displayed. A jump goes at once, superseding a load in flight; paging waits for it.
    /// Pages are counted as they load, not only worked out from a page size the server may not
    /// keep to: a walk towards one row loads at most `maximumPagesWalked` pages, then jumps.
    mutating func pageTowardsDisplayedRow(run: Range<Int>?, isFetching: Bool, sizes: Sizes) -> Action {
        guard let run, let item = displayedItem, !run.isEmpty else { return .none }
        if Self.distance(of: item, from: run) > threshold(sizes) {
            let samePage = pending.map { page(of: $0, sizes: sizes) == page(of: item, sizes: sizes) } ?? false
            return refusal(sizes) == nil && !samePage ? .jump(to: item, page(of: item, sizes: sizes)) : .none
        }
        guard !isFetching else { return .none }
        if run.contains(item) {
            walk = nil
            return .nearEnds(
                next: run.upperBound - 1 - item <= paginator.prefetchDistance, previous: item - run.lowerBound <= paginator.prefetchDistance
            )
        }
        if walk?.item != item { walk = (item, 0, false) }
        guard walk!.pages < PaginatorConfiguration.maximumPagesWalked else {
            // Once: a jump that does not reach the row either (a server that keeps to no page
            // size) ends the walk; displaying another row starts a new one.
            guard !walk!.jumped, refusal(sizes) == nil else { return .none }
            walk!.jumped = true
            return .jump(to: item, page(of: item, sizes: sizes))
        }
        walk!.pages += 1
        return item >= run.upperBound ? .fetchNext : .fetchPrevious
    }

    /// A list not counted follows the rows displayed by prefetching only: within
    /// `prefetchDistance` rows of its last row the page after, else of its first the page before.
    func nearEnds(displayed item: Int, lastItem: Int) -> Action {
        guard item <= lastItem else { return .none }
        // The client's item is range-checked on the wire; a library caller's may be anything.
        let (distance, overflow) = lastItem.subtractingReportingOverflow(item)
        return .nearEnds(
            next: !overflow && distance <= paginator.prefetchDistance, previous: item >= 0 && item <= paginator.prefetchDistance)
    }

    // MARK: Geometry

    /// The page size a jump works out a row's page with: the configured one, else the one the
    /// metadata gives. nil when neither says, or the metadata says 0 (a first page's length is no
    /// page size: it may be short).
    func pageSize(_ sizes: Sizes) -> Int? { (paginator.pageSize ?? sizes.metadataPageSize).flatMap { $0 > 0 ? $0 : nil } }

    /// Why this source cannot jump, or nil when it can (`describeSource.capabilities`).
    func refusal(_ sizes: Sizes) -> String? {
        if let unsupported = paginator.jumpUnsupported { return unsupported }
        if paginator.placeholderMode != .counted {
            return "a jump needs placeholders \"counted\": without them a far row is not in the list"
        }
        if pageSize(sizes) == nil {
            return "the page size is unknown (set pageSize, or the metadata's pageSize key): a row's page cannot be worked out"
        }
        return nil
    }

    /// Rows: a displayed unloaded row farther than this from the loaded ones is a jump. Never
    /// more than `PaginatorConfiguration.maximumPagesWalked` pages, whatever `jumpThreshold`
    /// says: walking to a row loads each page between, one request each.
    func threshold(_ sizes: Sizes) -> Int {
        let size = max(1, pageSize(sizes) ?? sizes.firstPageReceived ?? 100)
        let walked = size.multipliedClamped(by: PaginatorConfiguration.maximumPagesWalked)
        return min(paginator.jumpThreshold ?? size.multipliedClamped(by: 2), walked)
    }

    /// The request of the page holding row `item`, by the page size (`refusal` is nil).
    func page(of item: Int, sizes: Sizes) -> PageRequest {
        let size = max(1, pageSize(sizes) ?? 1)
        let pageIndex = item / size
        switch paginator.strategy {
        case .offset: return pageIndex == 0 ? .first : .offset(pageIndex * size)
        default: return pageIndex == 0 ? .first : .page(paginator.firstPage.addingClamped(pageIndex))
        }
    }

    /// Why displaying row `item` would be refused: an unloaded row of a counted list (`run`),
    /// farther than `threshold` rows from the loaded ones, on a source that cannot jump. Nil otherwise.
    func displayRefusal(of item: Int, run: Range<Int>?, sizes: Sizes) -> String? {
        guard let run, !run.isEmpty, !run.contains(item) else { return nil }
        let distance = Self.distance(of: item, from: run)
        let threshold = threshold(sizes)
        guard distance > threshold, let refusal = refusal(sizes) else { return nil }
        return
            "row \(item) is not loaded and lies \(distance) rows from the loaded rows \(run.lowerBound)..<\(run.upperBound), more than jumpThreshold (\(threshold)): \(refusal); display rows nearer the loaded ones, or fetchNextPage"
    }

    /// Rows from `item` to the nearest row of `run` (not empty); 0 inside it.
    static func distance(of item: Int, from run: Range<Int>) -> Int {
        if item >= run.upperBound { return item - (run.upperBound - 1) }
        return max(0, run.lowerBound - item)
    }
}
