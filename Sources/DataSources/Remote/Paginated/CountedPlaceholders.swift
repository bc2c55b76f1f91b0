import JSONKit

/// Counted placeholders (`placeholders: "counted"`): the list has its full size, and the
/// loaded run sits at its place in it among unloaded rows, when a total says the size and
/// the run's place in the list is known.
///
/// Each change of the run is an event, `compose`, answering what to do to the rows: all
/// replaced, some overwritten in place, or (not counted) the objects with a trailing row.
struct CountedPlaceholders {
    /// What the list's size is worked out from.
    struct Run {
        var loadedOnce: Bool
        /// Where the loaded objects start in the whole list, and whether that is known.
        var start: Int
        var startKnown: Bool
        var objectCount: Int
        var metadata: PageMetadata
        /// The page size a page count is multiplied by (`Jumps.pageSize`).
        var pageSize: Int?
        var hasMorePages: Bool
        var appendFailed: Bool
        /// The most rows this client is shown (`PaginatedDataSource.maximumCountedRowsForClient`).
        var maximumRows: Int
    }

    /// What the owner does to the rows.
    enum Action {
        /// Every row replaced: unloaded rows with the objects at their place.
        case replaceAll(RowArray<JSON>, hashes: RowArray<Int>)
        /// The rows keep their places; only these change, the list grown or shrunk to `count`.
        case overwrite(count: Int, [(item: Int, row: JSON)])
        /// Counted no more (a new query without a total): the rows are no longer positions, so
        /// every row is replaced by the objects and the trailing row.
        case uncount
        /// Not counted: the objects and the trailing row.
        case trailing
    }

    /// Whether `placeholders: "counted"` was asked for.
    let asked: Bool
    /// The metadata key of the total, for a refusal to name.
    let totalKey: String
    /// The positions showing the loaded objects while the rows are counted; nil while they are not.
    private(set) var shown: Range<Int>?
    /// Why counted placeholders, asked for, are not in force; nil when they are (or were not asked for).
    private(set) var refusal: String?
    /// Where the list ends, once a page with none after it has been loaded at a known position:
    /// a page count's estimate no longer counts after that.
    private var listEnd: Int?

    init(paginator: PaginatorConfiguration) {
        asked = paginator.placeholderMode == .counted
        totalKey = paginator.keys.numberOfTotalObjects
    }

    /// The most rows a counted list has (its unloaded rows are repeated chunks of `RowArray`:
    /// a few bytes per thousand).
    static let maximumRows = 50_000_000

    // MARK: Events

    /// The run changed: what the rows become. `objects` are the loaded ones; `unloadedHash`
    /// the identity hash of `Placeholder.unloadedStored`.
    mutating func compose(_ run: Run, objects: [JSON], identity: Identity, unloadedHash: Int) -> Action {
        guard let size = size(of: run) else {
            guard shown != nil else { return .trailing }
            shown = nil
            return .uncount
        }
        let loaded = run.start..<run.start + objects.count
        guard let before = shown else {
            // Unloaded rows as repeated chunks: memory for the loaded pages only.
            var rows = RowArray<JSON>(), hashes = RowArray<Int>()
            rows.append(repeating: Placeholder.unloadedStored, count: loaded.lowerBound)
            rows.append(contentsOf: objects)
            rows.append(repeating: Placeholder.unloadedStored, count: size - loaded.upperBound)
            hashes.append(repeating: unloadedHash, count: loaded.lowerBound)
            hashes.append(contentsOf: identity.hashes(of: objects))
            hashes.append(repeating: unloadedHash, count: size - loaded.upperBound)
            shown = loaded
            return .replaceAll(rows, hashes: hashes)
        }
        // Only the rows of the loaded run before and now change.
        var overwrites: [(item: Int, row: JSON)] = []
        overwrites.reserveCapacity(objects.count + before.count)
        for item in before where !loaded.contains(item) { overwrites.append((item, Placeholder.unloadedStored)) }
        for (offset, object) in objects.enumerated() { overwrites.append((loaded.lowerBound + offset, object)) }
        shown = loaded
        return .overwrite(count: size, overwrites)
    }

    /// Rows as clients read them: an unloaded row with its index (`start`: the first row's).
    func presented(_ rows: [JSON], from start: Int) -> [JSON] {
        guard shown != nil else { return rows }
        return rows.enumerated().map { Self.presented($1, at: start + $0) }
    }

    /// A row as clients read it: an unloaded row with its index.
    static func presented(_ row: JSON, at item: Int) -> JSON {
        row.isIdentical(to: Placeholder.unloadedStored) ? Placeholder.unloadedRow(index: item) : row
    }

    /// The row after the objects of a list not counted: the error, loading or no-results
    /// placeholder (if `stored`), or nil.
    static func trailingRow(appendError: FetchError?, hasMorePages: Bool, noResults: Bool, stored: PlaceholderStorageOptions) -> JSON? {
        if let appendError {
            // Without a stored error row the failed page leaves no trailing row (Protocol.md):
            // a loading row there would claim a load that is not happening. The next
            // fetchNextPage, or displaying the last row, asks for the failed page again.
            // (JSON takes `nil` as null: the placeholders are asked for with `if`, not `?:`.)
            if stored.contains(.errors) { return appendError.placeholderRow }
            return .none
        }
        if hasMorePages, stored.contains(.loading) { return Placeholder.loadingRow }
        if noResults, stored.contains(.noResults) { return Placeholder.noResultsRow }
        return .none
    }

    /// A new query: where its list ends is unknown; without `keepingRows` the rows go.
    mutating func forget(keepingRows: Bool) {
        listEnd = nil
        if !keepingRows { shown = nil }
    }

    /// The list's full size when counted placeholders are asked for and can be shown; else nil,
    /// and `refusal` says why (when they were asked for).
    private mutating func size(of run: Run) -> Int? {
        guard asked else {
            refusal = nil
            return nil
        }
        guard run.loadedOnce else {
            refusal = "no page is loaded yet"
            return nil
        }
        let loadedEnd = run.start.addingClamped(run.objectCount)
        let total: Int
        if let given = run.metadata.numberOfTotalResults {
            total = given
        } else if let pages = run.metadata.numberOfPages, let size = run.pageSize {
            // The last page may be short: the size shrinks when it arrives.
            if !run.hasMorePages, run.startKnown, !run.appendFailed { listEnd = loadedEnd }
            total = listEnd ?? pages.multipliedClamped(by: size)
        } else {
            refusal =
                "no total: the responses give no total (\(totalKey), totalPath, totalHeader) nor a page count with a page size"
            return nil
        }
        if !run.startKnown {
            refusal =
                "where the loaded rows start in the list is unknown (a run from initialCursor, or a page number without a page size)"
            return nil
        }
        let size = max(total, loadedEnd)
        if size == 0 {
            refusal = "the total is 0"
            return nil
        }
        if size > Self.maximumRows {
            refusal = "the total \(size) is more than counted placeholders show (\(Self.maximumRows) rows)"
            return nil
        }
        if size > run.maximumRows {
            refusal =
                "the total \(size) is more than counted placeholders show to a client without the changeRanges capability (\(run.maximumRows) rows): initialize with capabilities {\"changeRanges\": true}"
            return nil
        }
        refusal = nil
        return size
    }
}
