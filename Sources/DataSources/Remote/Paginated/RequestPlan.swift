import JSONKit

/// Where a response's links are read: relative ones resolve against the URL that was
/// requested, and may not leave the source's own origin unless allowed; a refusal names the
/// URL last requested.
struct LinkContext {
    var requestURL: String
    var ownOrigin: String?
    var errorURL: String?
}

/// Which page a paging run asks for next, in either direction, and the loop guard that keeps a
/// run from requesting forever: a request already made in the run, pages that bring no new
/// object, more pages than allowed.
///
/// Each arrival is an event; what it answers is the failure that ends the direction (a link
/// that may not be followed, a loop), or nil when paging may go on from `next` / `previous`.
struct RequestPlan {
    let paginator: PaginatorConfiguration

    /// The next page to load; nil when none remains (or before the first).
    private(set) var next: PageRequest?
    /// The page before the first one held; nil when none is before it, or when the strategy
    /// cannot say (`paginator.previousPageUnsupported`).
    private(set) var previous: PageRequest?
    /// Pages loaded in this run, in either direction.
    private(set) var pagesLoaded = 0
    private var requestsMade: Set<String> = []
    private var stalledPages = 0

    init(paginator: PaginatorConfiguration) {
        self.paginator = paginator
    }

    // MARK: Events

    /// A first page arrived that starts a run.
    mutating func startRun() {
        requestsMade = []
        stalledPages = 0
        pagesLoaded = 0
    }

    /// A new query: what the last run said of its neighbours no longer holds.
    mutating func forgetNeighbours() {
        next = nil
        previous = nil
    }

    /// A page after the last held (or a run's first page, `startsRun`) arrived with `received`
    /// objects, `kept` of them new. Reads `next` (and with `startsRun`, `previous`) from it;
    /// answers why paging must stop (a next link that may not be followed), else nil.
    /// `receivedInRun`: where the objects loaded end in the whole list, with this page's.
    mutating func nextPageArrived(
        _ page: PageRequest, response: DecodedResponse, metadata: PageMetadata, kept: Int, receivedInRun: Int,
        startsRun: Bool, links: LinkContext
    ) -> FetchError? {
        requestsMade.insert(page.loopToken)
        pagesLoaded += 1
        stalledPages = !response.objects.isEmpty && kept == 0 ? stalledPages + 1 : 0
        if startsRun { previous = try? previousPage(before: page, response: response, links: links).get() ?? nil }
        switch nextPage(after: page, response: response, metadata: metadata, objectsReceived: receivedInRun, links: links) {
        case .success(let following):
            next = following
            return nil
        case .failure(let error):
            next = nil
            return error
        }
    }

    /// The loop guard, once the page that arrived is held (`pagesHeld` pages): a `loop` failure
    /// when `next` repeats a request of the run, pages stopped bringing new objects, or the
    /// run holds as many pages as allowed. `next` is nil after a failure.
    mutating func guardNext(pagesHeld: Int, errorURL: String?) -> FetchError? {
        guard let following = next else { return nil }
        let failure: FetchError?
        if requestsMade.contains(following.loopToken) {
            failure = loop(
                "the next request repeats one already made in this run (\(following.described))", reason: following.kindName,
                errorURL: errorURL)
        } else if stalledPages >= paginator.stalledPagesLimit {
            failure = loop("\(stalledPages) pages in a row brought no new object", reason: "noNewObjects", errorURL: errorURL)
        } else {
            failure = pagesLimitReached(pagesHeld: pagesHeld, errorURL: errorURL)
        }
        if failure != nil { next = nil }
        return failure
    }

    /// The page before the first one held arrived: reads `previous` from it (none after an
    /// empty page); answers why paging back must stop (a link that may not be followed), else nil.
    mutating func previousPageArrived(_ page: PageRequest, response: DecodedResponse, links: LinkContext) -> FetchError? {
        requestsMade.insert(page.loopToken)
        pagesLoaded += 1
        switch previousPage(before: page, response: response, links: links) {
        case .success(let request):
            previous = response.objects.isEmpty ? nil : request
            return nil
        case .failure(let error):
            previous = nil
            return error
        }
    }

    /// The loop guard for `previous`, once the page that arrived is held.
    mutating func guardPrevious(pagesHeld: Int, errorURL: String?) -> FetchError? {
        guard let before = previous else { return nil }
        let failure =
            requestsMade.contains(before.loopToken)
            ? loop(
                "the previous request repeats one already made in this run (\(before.described))", reason: before.kindName,
                errorURL: errorURL)
            : pagesLimitReached(pagesHeld: pagesHeld, errorURL: errorURL)
        if failure != nil { previous = nil }
        return failure
    }

    /// The server said past the last page that there is none (a `404` taken as the end).
    mutating func endReached() { next = nil }

    /// The window dropped the first page held: it is the page before again, and asking for it
    /// again is no loop.
    mutating func droppedFirstPage(_ page: LoadedPage) {
        requestsMade.remove(page.request.loopToken)
        previous = page.request
    }

    /// The window dropped the last page held: it is the next page again.
    mutating func droppedLastPage(_ page: LoadedPage) {
        requestsMade.remove(page.request.loopToken)
        next = page.request
    }

    /// `page` follows the pages adopted (a reopened list reads its stored pages in turns): the
    /// next request is its own, unless the loop guard stops it.
    mutating func adoptFollowing(_ page: LoadedPage) {
        pagesLoaded += 1
        requestsMade.insert(page.request.loopToken)
        next = page.next
        if let following = next, requestsMade.contains(following.loopToken) || pagesLoaded >= paginator.maximumPages {
            next = nil
        }
    }

    /// `pages` are the run (restored from the cache, or walked again by a refresh): the next
    /// request is the last page's, unless the loop guard stops it.
    mutating func adopt(_ pages: [LoadedPage]) {
        pagesLoaded = pages.count
        requestsMade = Set(pages.map(\.request.loopToken))
        stalledPages = 0
        next = pages.last?.next
        previous = pages.first?.previous
        if let following = next, requestsMade.contains(following.loopToken) || pagesLoaded >= paginator.maximumPages {
            next = nil
        }
    }

    /// What `pagination.maxPages` bounds: the pages loaded in the run, or with a window the
    /// pages held (scrolling a long list through a window loads many more pages than it holds).
    private func pagesLimitReached(pagesHeld: Int, errorURL: String?) -> FetchError? {
        let counted = paginator.window == nil ? pagesLoaded : pagesHeld
        guard counted >= paginator.maximumPages else { return nil }
        return loop("\(counted) pages loaded, the most allowed (maxPages)", reason: "maxPages", errorURL: errorURL)
    }

    private func loop(_ message: String, reason: String, errorURL: String?) -> FetchError {
        var error = FetchError(kind: .loop, message: "pagination stopped: \(message)", url: errorURL)
        error.loopReason = reason
        error.pagesLoaded = pagesLoaded
        return error
    }

    // MARK: Reading a response

    /// The next page's request, nil when the response says there is none, or why paging
    /// must stop (a next URL that leaves the origin).
    func nextPage(
        after page: PageRequest, response: DecodedResponse, metadata: PageMetadata, objectsReceived: Int, links: LinkContext
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
            let (offset, overflow) = page.offsetAsked.addingReportingOverflow(response.objects.count)
            return .success(overflow ? nil : .offset(offset))
        case .cursor(_, let cursorPath, let fromLastObject, let hasMorePath):
            if flag(hasMorePath) == false { return .success(nil) }
            if let fromLastObject {
                guard let last = response.objects.last?.value(at: fromLastObject),
                    let cursor = paginator.cursorsAreJSON ? Self.cursorJSONText(last) : Self.cursorText(last)
                else { return .success(nil) }
                return .success(.cursor(cursor))
            }
            guard let cursorPath, let value = document?.value(at: cursorPath), let cursor = Self.cursorText(value) else {
                return .success(nil)
            }
            return .success(.cursor(cursor))
        case .nextURL(let path, let hasMorePath):
            if flag(hasMorePath) == false { return .success(nil) }
            guard let link = document?.value(at: path)?.stringValue, !link.isEmpty else { return .success(nil) }
            return follow(link, links: links)
        case .linkHeader:
            guard let link = LinkHeader.target("next", in: response.headerValues("link")), !link.isEmpty else { return .success(nil) }
            return follow(link, links: links)
        }
    }

    /// The request for the page before `page`, nil when the response says there is none (or
    /// the strategy cannot page backwards), or why it must not be made (a previous URL that
    /// leaves the origin). Page numbers and offsets are arithmetic; the page before the first
    /// one is `.first`, so that a run paged back to its start is a run from the first page.
    func previousPage(before page: PageRequest, response: DecodedResponse, links: LinkContext) -> Result<PageRequest?, FetchError> {
        let document = response.document
        switch paginator.strategy {
        case .pageNumber:
            guard case .page(let number) = page, number > paginator.firstPage else { return .success(nil) }
            return .success(number - 1 == paginator.firstPage ? .first : .page(number - 1))
        case .offset:
            guard case .offset(let offset) = page, offset > 0 else { return .success(nil) }
            let size = paginator.pageSize ?? paginator.metadata(of: response).pageSize ?? response.objects.count
            guard size > 0 else { return .success(nil) }
            return .success(offset <= size ? .first : .offset(offset - size))
        case .cursor:
            if let path = paginator.previousHasMorePath, document?.value(at: path)?.boolValue == false { return .success(nil) }
            guard let path = paginator.previousCursorPath, let value = document?.value(at: path), let cursor = Self.cursorText(value)
            else { return .success(nil) }
            return .success(paginator.previousCursorKey == nil ? .cursor(cursor) : .before(cursor))
        case .nextURL:
            guard let path = paginator.previousURLPath, let link = document?.value(at: path)?.stringValue, !link.isEmpty else {
                return .success(nil)
            }
            return follow(link, links: links)
        case .linkHeader:
            let headerLinks = response.headerValues("link")
            guard let link = LinkHeader.target("prev", in: headerLinks) ?? LinkHeader.target("previous", in: headerLinks), !link.isEmpty
            else {
                return .success(nil)
            }
            return follow(link, links: links)
        }
    }

    /// A link resolved against the request's URL (RFC 3986); refused when it leaves the
    /// base URL's origin, unless allowed: the source's headers (credentials) go with it.
    private func follow(_ link: String, links: LinkContext) -> Result<PageRequest?, FetchError> {
        let resolved = URLResolution.resolve(link, against: links.requestURL)
        if let refusal = refusal(ofNextURL: resolved, ownOrigin: links.ownOrigin, errorURL: links.errorURL) {
            return .failure(refusal)
        }
        return .success(.url(resolved))
    }

    /// Why a next URL (a server's, or one restored from the cache) must not be requested: it
    /// leaves the base URL's origin (unless allowed), or it has no host or a port that does
    /// not fit. Nil when it may be.
    func refusal(ofNextURL url: String, ownOrigin: String?, errorURL: String?) -> FetchError? {
        // Unusable first: a URL that cannot be requested at all is not a question of origins.
        let scheme = URLResolution.scheme(of: url)
        if let problem = scheme == "http" || scheme == "https" ? URLResolution.authorityProblem(in: url) : "it is not an http or https URL"
        {
            var error = FetchError(kind: .transport, message: "the next page's URL is unusable: \(problem)", url: errorURL)
            error.finalURL = URLResolution.redacted(url)
            return error
        }
        if !paginator.allowCrossOrigin, URLResolution.origin(of: url) != ownOrigin {
            var error = FetchError(
                kind: .crossOrigin,
                message:
                    "the next page's URL \(URLResolution.redacted(url)) leaves \(ownOrigin ?? "the source's origin"); set pagination.allowCrossOrigin to follow it",
                url: errorURL)
            error.finalURL = URLResolution.redacted(url)
            return error
        }
        return nil
    }

    /// A cursor sent in a body with its JSON type (`PaginatorConfiguration.cursorsAreJSON`): any
    /// value but null, an empty string or an empty array, as JSON text.
    private static func cursorJSONText(_ value: JSON) -> String? {
        if value.isNull || value.stringValue == "" || (value.isArray && value.count == 0) { return nil }
        return value.text()
    }

    /// A cursor as sent in a query: a non-empty string, or a number as JSON writes it.
    private static func cursorText(_ value: JSON) -> String? {
        switch value.kind {
        case .string: return value.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        case .integer, .real: return value.description
        default: return nil
        }
    }

    /// Why a run's `initialPage` or `initialOffset` (or a jump, to row `jumpingTo`) answered
    /// nothing to show: it lies past the end of the list (by the metadata's page count or
    /// total, or an empty page). Nil otherwise, and for every other first request.
    func beyondEnd(
        _ page: PageRequest, response: DecodedResponse, metadata: PageMetadata, jumpingTo jump: Int?, errorURL: String?
    ) -> FetchError? {
        guard !response.isNotModified else { return nil }
        func outOfRange(_ message: String) -> FetchError { FetchError(kind: .outOfRange, message: message, url: errorURL) }
        let position: String
        switch page {
        case .page(let number):
            position = jump.map { "the jump to row \($0) (page \(number))" } ?? "initialPage \(number)"
            let (pagesBefore, overflow) = number.subtractingReportingOverflow(paginator.firstPage)
            if let pages = metadata.numberOfPages, !overflow, pagesBefore >= pages {
                return outOfRange(
                    "\(position) is past the last page: the list has \(pages) page\(pages == 1 ? "" : "s") from page \(paginator.firstPage) (\(paginator.keys.numberOfPages))"
                )
            }
            if let total = metadata.numberOfTotalResults, let size = paginator.pageSize ?? metadata.pageSize, !overflow {
                let (start, tooFar) = pagesBefore.multipliedReportingOverflow(by: size)
                if !tooFar, start >= total {
                    return outOfRange("\(position) is past the end: the list has \(total) objects, \(size) a page")
                }
            }
        case .offset(let offset):
            position = jump.map { "the jump to row \($0) (offset \(offset))" } ?? "initialOffset \(offset)"
            if let total = metadata.numberOfTotalResults, offset >= total {
                return outOfRange("\(position) is past the end: the list has \(total) objects")
            }
        default:
            return nil
        }
        return response.objects.isEmpty ? outOfRange("\(position) is past the end of the list: its page is empty") : nil
    }
}
