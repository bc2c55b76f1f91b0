import JSONKit

/// One page's request, as a paging run makes it and the persisted cache stores it.
package enum PageRequest: Hashable, Sendable {
    case first
    case page(Int)
    case offset(Int)
    case cursor(String)
    /// The page before a cursor, asked for by the names of paging back (Relay's `before`).
    case before(String)
    case url(String)
}

extension PaginatedDataSource {
    /// The name the cache and its tests know the request by.
    typealias PageRequest = DataSources.PageRequest
}

extension PageRequest {
    /// What names the request in the loop guard: a run never makes the same request twice.
    var loopToken: String {
        switch self {
        case .first: kindName
        case .page(let value as any CustomStringConvertible), .offset(let value as any CustomStringConvertible),
            .cursor(let value as any CustomStringConvertible), .before(let value as any CustomStringConvertible),
            .url(let value as any CustomStringConvertible):
            "\(kindName):\(value)"
        }
    }

    /// The request's kind, as a `loop` failure's `reason` and the cache's checks name it.
    var kindName: String {
        switch self {
        case .first: "first"
        case .page: "page"
        case .offset: "offset"
        case .cursor: "cursor"
        case .before: "before"
        case .url: "url"
        }
    }

    /// The request as a message names it: a cursor shortened, a URL without its credentials.
    var described: String {
        switch self {
        case .first: "the first page"
        case .page(let number): "page \(number)"
        case .offset(let offset): "offset \(offset)"
        case .cursor(let cursor): "cursor \"\(cursor.prefix(100))\""
        case .before(let cursor): "the page before cursor \"\(cursor.prefix(100))\""
        case .url(let url): URLResolution.redacted(url)
        }
    }

    /// The offset asked for: 0 for the first page and for requests that are not offsets.
    var offsetAsked: Int {
        if case .offset(let offset) = self { return offset }
        return 0
    }
}

/// One page of the run held: what revalidates it (a refresh, the cache) and how many of the
/// rows held are its own.
struct LoadedPage: Equatable {
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

/// The arithmetic of requests each strategy makes: what a request asks the server for, and
/// where its page sits in the whole list.
extension PaginatorConfiguration {
    /// The request that starts a run: the first page, or `initialPage` / `initialOffset` / `initialCursor`.
    var firstRequest: PageRequest {
        switch initialPosition {
        case .page(let number)?: number == firstPage ? .first : .page(number)
        case .offset(let offset)?: offset == 0 ? .first : .offset(offset)
        case .cursor(let cursor)?: .cursor(cursor)
        case nil: .first
        }
    }

    /// What to request for `page`: the values that ask for it (in the query, or at key paths
    /// of the body with `requestIn: body`), or the URL a server gave.
    func target(of page: PageRequest) -> RemoteCollection.RequestTarget {
        var values: [(name: String, value: JSON)] = []
        var sizeKey = pageSizeQueryKey
        switch (strategy, page) {
        case (.pageNumber, .first):
            values = [(pageQueryKey, JSON(firstPage))]
        case (.pageNumber, .page(let number)):
            values = [(pageQueryKey, JSON(number))]
        case (.offset(let offsetKey, let limitKey, _), .first):
            values = [(offsetKey, 0)]
            sizeKey = limitKey
        case (.offset(let offsetKey, let limitKey, _), .offset(let offset)):
            values = [(offsetKey, JSON(offset))]
            sizeKey = limitKey
        case (.cursor(let cursorKey, _, _, _), .cursor(let cursor)):
            values = [(cursorKey, cursorValue(cursor))]
        case (.cursor(let cursorKey, _, _, _), .before(let cursor)):
            values = [(previousCursorKey ?? cursorKey, cursorValue(cursor))]
            sizeKey = previousPageSizeKey ?? sizeKey
        case (_, .url(let url)):
            return .url(url)
        case (.offset(_, let limitKey, _), _):
            sizeKey = limitKey
        default:
            break
        }
        if let pageSize { values.append((sizeKey, JSON(pageSize))) }
        switch requestIn {
        case .query:
            return .collection(query: values.map { ($0.name, $0.value.stringValue ?? $0.value.text()) })
        case .body:
            return .collection(query: [], body: values.map { (JSONKeyPath($0.name), $0.value) })
        }
    }

    /// A cursor as sent: its JSON value when cursors are JSON text (`cursorsAreJSON`), else the string.
    private func cursorValue(_ cursor: String) -> JSON {
        guard cursorsAreJSON, let value = try? JSON.parse(cursor) else { return JSON(cursor) }
        return value
    }

    /// Whether `startPosition(of:metadata:)` is where `page` starts in the whole list.
    func positionIsKnown(of page: PageRequest, metadata: PageMetadata) -> Bool {
        switch page {
        case .first, .offset: true
        case .page: (pageSize ?? metadata.pageSize) != nil
        case .cursor, .before, .url: false
        }
    }

    /// Where `page` starts in the whole list, when its request says; else 0.
    func startPosition(of page: PageRequest, metadata: PageMetadata) -> Int {
        switch page {
        case .offset(let offset):
            return offset
        case .page(let number):
            guard let size = pageSize ?? metadata.pageSize else { return 0 }
            let (pagesBefore, overflow) = number.subtractingReportingOverflow(firstPage)
            let (start, tooFar) = pagesBefore.multipliedReportingOverflow(by: size)
            return overflow || tooFar || pagesBefore < 0 ? 0 : start
        default:
            return 0
        }
    }

    /// `currentPage` after a page: its number when pages are numbered, else the pages loaded.
    func currentPage(after request: PageRequest, pagesLoaded: Int) -> Int {
        switch (strategy, request) {
        case (_, .page(let number)): number
        case (.pageNumber, .first): firstPage
        default: pagesLoaded
        }
    }

    /// A request as `describeSource` shows it (`next`, `previous`): the first page by its
    /// number or offset, a URL without its credentials.
    func shown(_ request: PageRequest?) -> PageRequest? {
        switch request {
        case .first?: if case .offset = strategy { .offset(0) } else { .page(firstPage) }
        case .url(let url)?: .url(URLResolution.redacted(url))
        default: request
        }
    }
}
