import Basics
import JSONKit

/// How a paginated source asks for pages and reads where it is: one strategy for the next
/// request (a page number, an offset, a cursor from the body, a next URL from the body or the
/// `Link` header), and the rules every strategy shares (totals, end detection, the loop
/// guard, duplicates, prefetch, `Retry-After`).
package struct PaginatorConfiguration: Sendable {
    /// Names in the response metadata (and, unless `requestKeys` says otherwise, in the query).
    package struct Keys: Sendable {
        package var pageSize = "page_size"
        package var currentPage = "page"
        package var numberOfPages = "number_of_pages"
        package var numberOfTotalObjects = "total_count"

        package init() {}
    }

    /// What the next request is made from.
    package enum Strategy: Sendable {
        /// `page=N` (Instant Cocoa's only strategy, and the default).
        case pageNumber
        /// `offset=N&limit=M`: N is the number of objects loaded so far, or the value at
        /// `nextOffsetPath` when the API sends one.
        case offset(offsetKey: String, limitKey: String, nextOffsetPath: JSONKeyPath?)
        /// A cursor read at `cursorPath` (or the identity at `fromLastObject` of the last
        /// object loaded, as Stripe's `starting_after`), sent under `cursorKey`; the end is
        /// an absent, null or empty cursor, or false at `hasMorePath`.
        case cursor(cursorKey: String, cursorPath: JSONKeyPath?, fromLastObject: JSONKeyPath?, hasMorePath: JSONKeyPath?)
        /// A full or relative URL at `path`, followed as is; the end is a null or absent URL
        /// (or false at `hasMorePath`).
        case nextURL(path: JSONKeyPath, hasMorePath: JSONKeyPath?)
        /// The `Link` header's `rel="next"` (RFC 8288), followed as is; the end is its absence.
        case linkHeader

        package var name: String {
            switch self {
            case .pageNumber: "pageNumber"
            case .offset: "offset"
            case .cursor: "cursor"
            case .nextURL: "nextURL"
            case .linkHeader: "linkHeader"
            }
        }
    }

    /// What to do with an object whose identity is already loaded (the list shifted
    /// between two requests).
    package enum DuplicatePolicy: String, Sendable, CaseIterable {
        /// Keep the first, drop the later one and count it (the default).
        case dropLater
        /// Keep both (`indexPathForObject` answers the first).
        case keep
    }

    package var strategy = Strategy.pageNumber
    package var keys = Keys()
    /// Query parameter names for the page number and page size.
    package var pageQueryKey: String
    package var pageSizeQueryKey: String
    /// Sent under `pageSizeQueryKey` (the limit key for offsets) when set.
    package var pageSize: Int?
    package var firstPage = 1
    /// Where the metadata sits in the response; nil for the top level.
    package var metadataKeyPath: JSONKeyPath?
    /// Where the total number of objects is: a key path in the body, or a header.
    package var totalPath: JSONKeyPath?
    package var totalHeader: String?
    /// The loop guard: at most this many pages per cycle, and at most this many consecutive
    /// pages that bring no new object.
    package var maximumPages = 1000
    package var stalledPagesLimit = 2
    /// A page after the first answered 404 ends pagination (Django REST framework's
    /// "Invalid page."), unless false.
    package var endOnNotFound = true
    /// Whether a next URL may leave the origin of `baseURL` (its headers go with it).
    package var allowCrossOrigin = false
    package var duplicates = DuplicatePolicy.dropLater
    /// `willDisplayObjectAtIndexPath` within this many rows of the end loads the next page.
    package var prefetchDistance = 0
    /// 429/503 with `Retry-After`: retried by the daemon this many times, when the delay is
    /// at most `retryAfterMaximumSeconds`; otherwise reported with `retryAfterSeconds`.
    package var retryAfterRetries = 0
    package var retryAfterMaximumSeconds = 60.0
    /// A response header holding the page metadata as JSON (flask-smorest's `X-Pagination`):
    /// every metadata path reads from it instead of the body (`ResponseDecoding.readingMetadata`).
    package var metadataHeader: String?

    // Paging backwards (issue 31).
    /// (`cursor`) Where a response gives the cursor of the page before it, sent under the
    /// cursor key; nil: a cursor source cannot page backwards.
    package var previousCursorPath: JSONKeyPath?
    /// (`nextURL`) Where a response gives the URL of the page before it (Django REST
    /// framework's `previous`, JSON:API's `links.prev`, HAL's `_links.prev.href`).
    package var previousURLPath: JSONKeyPath?
    /// (`cursor`) What a response says of a page before it (Relay's `hasPreviousPage`); false ends paging back.
    package var previousHasMorePath: JSONKeyPath?
    /// (`cursor`) The names a page before is asked for by, when they are not the forward ones
    /// (Relay's `before` and `last`): such a request is a `PageRequest.before`.
    package var previousCursorKey: String?
    package var previousPageSizeKey: String?

    // Requests with a body.
    /// `requestIn`: where the page values go. In the body, each name is a key path.
    package var requestIn = PageValuesPlace.query

    /// Whether cursors are JSON text: a cursor from the last object sent in a body keeps its
    /// JSON type (Elasticsearch's `search_after` is an array).
    package var cursorsAreJSON: Bool {
        guard requestIn == .body, case .cursor(_, _, let fromLastObject?, _) = strategy else { return false }
        _ = fromLastObject
        return true
    }
    /// Where a run starts, when not at the first page: `initialPage`, `initialOffset`, `initialCursor`.
    package var initialPosition: InitialPosition?
    /// `window`: the most pages and objects held; pages far from the rows displayed are
    /// dropped, whole, past either. Nil: every page loaded is held.
    package var window: Window?
    /// `placeholders`: whether the list has its full size from the first page, with
    /// `{"$placeholder": "unloaded", "index": N}` rows where nothing is loaded (`counted`),
    /// or only the rows loaded and a trailing placeholder (`trailing`, the seed's).
    package var placeholderMode = PlaceholderMode.trailing
    /// `jumpThreshold`: a displayed unloaded row farther than this many rows from the loaded
    /// ones is a jump (its page loads, not those between); nil: two pages.
    package var jumpThreshold: Int?

    package enum PlaceholderMode: String, Sendable, Equatable, CaseIterable {
        case trailing, counted
    }

    /// Why a source of this configuration cannot jump (load the page of a far row without those
    /// between), or nil when it can: only page numbers and offsets say where a row's page is.
    package var jumpUnsupported: String? {
        switch strategy {
        case .pageNumber, .offset: nil
        case .cursor, .nextURL, .linkHeader:
            "the \(strategy.name) strategy cannot load the page of a far row: each page's request comes from the page before it (a jump needs the pageNumber or offset strategy)"
        }
    }

    /// `window: {maxPages?, maxObjects?}`.
    package struct Window: Sendable, Equatable {
        package var maximumPages: Int?
        package var maximumObjects: Int?

        package init(maximumPages: Int? = nil, maximumObjects: Int? = nil) {
            self.maximumPages = maximumPages
            self.maximumObjects = maximumObjects
        }

        /// Whether `pages` pages of `objects` objects are more than the window holds.
        func isExceeded(pages: Int, objects: Int) -> Bool {
            if let maximumPages, pages > maximumPages { return true }
            if let maximumObjects, objects > maximumObjects { return true }
            return false
        }
    }

    /// `initialPage` / `initialOffset` / `initialCursor`, each of its own strategy.
    package enum InitialPosition: Sendable, Equatable {
        case page(Int)
        case offset(Int)
        case cursor(String)
    }

    /// How a source of this configuration can page backwards, or why it cannot: nil when it can.
    package var previousPageUnsupported: String? {
        switch strategy {
        case .pageNumber, .offset, .linkHeader: nil
        case .cursor:
            previousCursorPath == nil ? "the cursor strategy pages backwards only with pagination.prevCursorPath" : nil
        case .nextURL:
            previousURLPath == nil ? "the nextURL strategy pages backwards only with pagination.previousURLPath" : nil
        }
    }

    /// Leaves room to count pages up without overflow (the wire layer enforces it).
    package static let maximumFirstPage = 1 << 31
    package static let maximumPageSize = 1 << 31
    package static let maximumPagesLimit = 1_000_000
    package static let maximumPrefetchDistance = 1_000_000
    /// Far from overflowing when a page size is added.
    package static let maximumInitialOffset = 1 << 53
    package static let maximumWindowObjects = 1 << 31
    package static let maximumJumpThreshold = 1 << 31
    /// The most pages loaded one after another to reach a displayed row: a row farther is a
    /// jump (or, where jumps are impossible, refused), whatever `jumpThreshold` says.
    package static let maximumPagesWalked = 10

    package init(
        keys: Keys = Keys(), pageQueryKey: String? = nil, pageSizeQueryKey: String? = nil, pageSize: Int? = nil,
        firstPage: Int = 1, metadataKeyPath: JSONKeyPath? = nil
    ) {
        self.keys = keys
        self.pageQueryKey = pageQueryKey ?? keys.currentPage
        self.pageSizeQueryKey = pageSizeQueryKey ?? keys.pageSize
        self.pageSize = pageSize
        self.firstPage = firstPage
        self.metadataKeyPath = metadataKeyPath
    }

    /// The query parameters that ask for `page`.
    package func queryParameters(forPage page: Int) -> [(name: String, value: String)] {
        var parameters = [(name: pageQueryKey, value: String(page))]
        if let pageSize { parameters.append((pageSizeQueryKey, String(pageSize))) }
        return parameters
    }

    /// The page metadata of a response: the metadata keys in its body, and the total from
    /// `totalPath` or `totalHeader` when configured.
    package func metadata(of response: DecodedResponse) -> PageMetadata {
        var metadata = metadata(in: response.document)
        if let totalPath, let value = response.document?.value(at: totalPath) {
            metadata.numberOfTotalResults = Self.count(value) ?? metadata.numberOfTotalResults
        }
        if let totalHeader, let value = response.headerValues(totalHeader).first {
            metadata.numberOfTotalResults = Self.count(JSON(value)) ?? metadata.numberOfTotalResults
        }
        return metadata
    }

    /// A count from the server: an integer or a string of digits; a negative one is ignored.
    static func count(_ value: JSON) -> Int? {
        let number = value.kind == .integer ? value.integerValue : value.stringValue.flatMap { Int($0.trimmingSpaces()) }
        return number.flatMap { $0 >= 0 ? $0 : nil }
    }

    /// The page metadata in a response document, where present.
    package func metadata(in document: JSON?) -> PageMetadata {
        guard let document else { return PageMetadata() }
        let container: JSON?
        if let metadataKeyPath { container = document.value(at: metadataKeyPath) } else { container = document }
        /// Counts from the server: a negative one is ignored, as if absent.
        func integer(_ key: String) -> Int? { container?[key].flatMap(Self.count) }
        return PageMetadata(
            pageSize: integer(keys.pageSize), currentPage: integer(keys.currentPage),
            numberOfPages: integer(keys.numberOfPages), numberOfTotalResults: integer(keys.numberOfTotalObjects))
    }
}

/// What a response says about where the pagination stands.
package struct PageMetadata: Sendable, Equatable {
    package var pageSize: Int?
    package var currentPage: Int?
    package var numberOfPages: Int?
    package var numberOfTotalResults: Int?

    package init(pageSize: Int? = nil, currentPage: Int? = nil, numberOfPages: Int? = nil, numberOfTotalResults: Int? = nil) {
        self.pageSize = pageSize
        self.currentPage = currentPage
        self.numberOfPages = numberOfPages
        self.numberOfTotalResults = numberOfTotalResults
    }

    /// Whether another page may hold more objects after `page` brought `received` objects
    /// and `loaded` are loaded in all. An empty page ends it (the original's only rule);
    /// so does the metadata, without that wasted request.
    package func hasMorePages(after page: Int, firstPage: Int, received: Int, loaded: Int) -> Bool {
        if received == 0 || page == Int.max { return false }
        if let numberOfPages {
            // Pages from the first to this one, against the count, neither of which may wrap:
            // a page too far from the first to count, or a count of 0 or less, ends paging.
            let (pagesBefore, overflow) = page.subtractingReportingOverflow(firstPage)
            if overflow || numberOfPages <= 0 || pagesBefore >= numberOfPages - 1 { return false }
        }
        if let numberOfTotalResults, loaded >= numberOfTotalResults { return false }
        return true
    }
}

extension Int {
    /// The sum, or the nearest `Int` when it does not fit: for counts that add up what a
    /// server or a file gave, where a trap would end the daemon.
    func addingClamped(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }

    /// The product, or the nearest `Int` when it does not fit.
    func multipliedClamped(by other: Int) -> Int {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        guard overflow else { return product }
        return (self < 0) == (other < 0) ? .max : .min
    }
}
