import JSONKit

/// The persisted cache as a paging run uses it: what an entry must be to be taken up (a run
/// this source could have loaded and stored), the run an entry restores, the entry a run
/// stores, and the stored copy of a page asked for again.
struct CacheRestore {
    let paginator: PaginatorConfiguration
    let duplicatePolicy: PaginatorConfiguration.DuplicatePolicy

    /// The run as the cache keeps it: its first `maximumPages` pages, each with its rows
    /// (`objects` are the rows held, page after page), made page by page as the store writes
    /// them; the first `unchanged` are as stored. Nil for a run the cache does not keep:
    /// longer, or starting in the middle (initialPage...), which the cache never restores.
    func entry(
        of pages: [LoadedPage], objects: [JSON], unchanged: Int, currentPage: Int, duplicatesDropped: Int, maximumPages: Int
    ) -> EntryPages? {
        guard pages.count <= maximumPages, pages.first?.request == .first else { return nil }
        var starts: [Int] = []
        starts.reserveCapacity(pages.count)
        var start = 0
        for page in pages {
            starts.append(start)
            start += page.kept
        }
        let offsets = starts
        return EntryPages(
            count: pages.count, unchanged: unchanged,
            head: { CachedPages.head(pageCount: pages.count, currentPage: currentPage, duplicatesDropped: duplicatesDropped) },
            page: { index in
                let page = pages[index]
                return CachedPages.Page(
                    request: page.request, validators: page.validators, rows: Array(objects[offsets[index]..<offsets[index] + page.kept]),
                    received: page.received, next: page.next, metadata: page.metadata
                ).encoded()
            })
    }

    /// The run an entry restores, page by page with its rows. A URL was stored without
    /// credentials: it gets those of `collectionURL` back, so that it is the URL the live run
    /// requested (a relative next link keeps the base URL's userinfo).
    func restoredRun(from cached: CachedPages, collectionURL: String) -> [(page: LoadedPage, rows: [JSON])] {
        func withConfiguredCredentials(_ request: PageRequest) -> PageRequest {
            guard case .url(let url) = request else { return request }
            return .url(URLResolution.withCredentials(of: collectionURL, appliedTo: url))
        }
        return cached.pages.map {
            (
                LoadedPage(
                    request: withConfiguredCredentials($0.request), validators: $0.validators, kept: $0.rows.count,
                    received: $0.received, next: $0.next.map(withConfiguredCredentials), metadata: $0.metadata), $0.rows
            )
        }
    }

    /// Where each page that can come back from the cache sits in the entry holding `pages`:
    /// when the strategy numbers its pages (a page number or an offset names the same rows in
    /// every run; a cursor or a URL from a server may not be asked for again), each page with
    /// validators. `storedCopy` then reads that page alone.
    /// From `first` on: the positions of pages taken up after the others.
    func positions(of pages: [LoadedPage], from first: Int = 0) -> [PageRequest: Int] {
        switch paginator.strategy {
        case .pageNumber, .offset: break
        case .cursor, .nextURL, .linkHeader: return [:]
        }
        var positions: [PageRequest: Int] = [:]
        for index in pages.indices.dropFirst(first) where !pages[index].validators.isEmpty { positions[pages[index].request] = index }
        return positions
    }

    /// The stored copy of `page`, read alone at its position (`positions(of:)`) when the entry
    /// holds one with validators: a page the window dropped, scrolled back to, is asked for
    /// conditionally and, unchanged, comes back from the cache.
    func storedCopy(
        of page: PageRequest, positions: [PageRequest: Int], read: (Int) -> CachedPages.Page?
    ) -> CachedPages.Page? {
        guard let position = positions[page], let copy = read(position), copy.request == page, !copy.validators.isEmpty else {
            return nil
        }
        return copy
    }

    /// The answer to a page asked for again, conditionally when `cached` is its stored copy:
    /// a `304` means the copy is current, and brings its rows back with the 304's headers; a
    /// `304` to an unconditional request is a failure. Answers the stored copy used, if any.
    static func revalidated(
        _ result: Result<DecodedResponse, FetchError>, cached: CachedPages.Page?, errorURL: String?
    ) -> (Result<DecodedResponse, FetchError>, CachedPages.Page?) {
        guard case .success(let response) = result, response.isNotModified else { return (result, nil) }
        guard let cached else {
            return (
                .failure(FetchError(kind: .http, message: "HTTP status 304 to an unconditional request", url: errorURL, status: 304)), nil
            )
        }
        return (.success(DecodedResponse(objects: cached.rows, document: nil, headers: response.headers)), cached)
    }

    /// Why `cached` is not a run this source could have loaded and stored: the first page
    /// first, each page's request the one the page before it named, every next request one this
    /// strategy makes (and a next URL one the request plan would follow, from `ownOrigin`),
    /// counts that add up, no identity twice when duplicates are dropped, no more pages than
    /// `maxPages`, rows the mapping could have made (`mappedRowsProblem`). Nil when it is one.
    /// The same checks as a reopened list makes page by page (`Checks`).
    func problem(
        in cached: CachedPages, identity: Identity, ownOrigin: String?, mappedRowsProblem: ([JSON], String) -> String?
    ) -> String? {
        let head = CachedPages.Head(
            pageCount: cached.pages.count, currentPage: cached.currentPage, duplicatesDropped: cached.duplicatesDropped)
        if let problem = problem(of: head) { return problem }
        var checks = Checks(head: head, identity: identity)
        for page in cached.pages {
            if let problem = problem(of: page, &checks, ownOrigin: ownOrigin, mappedRowsProblem: mappedRowsProblem) { return problem }
        }
        return problem(atEndOf: checks)
    }

    /// What the checks of a stored run carry from one page to the next.
    struct Checks {
        let head: CachedPages.Head
        /// The pages checked so far.
        fileprivate(set) var count = 0
        fileprivate var identities: IdentitySet
        fileprivate var droppedByPages = 0
        fileprivate var last: CachedPages.Page?

        init(head: CachedPages.Head, identity: Identity) {
            self.head = head
            identities = IdentitySet(identity: identity)
        }

        /// The objects dropped as duplicates that the pages checked account for, within what
        /// the head says (`describeSource.duplicatesDropped` while a list reopens).
        var duplicatesDropped: Int { min(head.duplicatesDropped, droppedByPages) }
        var isComplete: Bool { count >= head.pageCount }
    }

    /// Why a head is not one this source could have stored, or nil.
    func problem(of head: CachedPages.Head) -> String? {
        if head.pageCount > paginator.maximumPages {
            return "it holds \(head.pageCount) pages, more than pagination.maxPages (\(paginator.maximumPages))"
        }
        return nil
    }

    /// Why `page`, the one after those `checks` has seen, could not follow them in a run this
    /// source stored, or nil (and `checks` takes it in). Its `hashes` must be worked out.
    func problem(
        of page: CachedPages.Page, _ checks: inout Checks, ownOrigin: String?, mappedRowsProblem: ([JSON], String) -> String?
    ) -> String? {
        let index = checks.count
        let field = "pages[\(index)]"
        if let last = checks.last {
            if page.request != last.next { return "\(field).request is not the next request of pages[\(index - 1)]" }
        } else if page.request != .first {
            return "pages[0].request must be {\"first\": true}"
        }
        switch duplicatePolicy {
        case .keep:
            if page.received != page.rows.count {
                return "\(field).received must be \(page.rows.count), the rows kept (duplicates are kept), got \(page.received)"
            }
        case .dropLater:
            // decode has checked received >= rows.count.
            if let repeated = page.rows.indices.first(where: { !checks.identities.insert(page.rows[$0], hash: page.hashes[$0]) }) {
                return "\(field).rows[\(repeated)] has an identity already loaded (duplicates are dropped)"
            }
            checks.droppedByPages = checks.droppedByPages.addingClamped(page.received - page.rows.count)
        }
        if let problem = mappedRowsProblem(page.rows, "\(field).rows") { return problem }
        if let next = page.next, let problem = problem(ofNext: next, after: page, ownOrigin: ownOrigin) {
            return "\(field).next \(problem)"
        }
        checks.count += 1
        checks.last = page
        return nil
    }

    /// Why what the head says of the whole run does not match its pages, once all are checked.
    func problem(atEndOf checks: Checks) -> String? {
        guard let last = checks.last else { return "it holds no page" }
        if checks.head.duplicatesDropped > checks.droppedByPages {
            return
                "duplicatesDropped must be at most \(checks.droppedByPages), the objects the pages received but did not keep, got \(checks.head.duplicatesDropped)"
        }
        let expectedPage = paginator.currentPage(after: last.request, pagesLoaded: checks.count)
        if checks.head.currentPage != expectedPage { return "currentPage must be \(expectedPage), got \(checks.head.currentPage)" }
        return nil
    }

    /// Why `next` is not the request this strategy makes after `page`, or nil.
    private func problem(ofNext next: PageRequest, after page: CachedPages.Page, ownOrigin: String?) -> String? {
        switch (paginator.strategy, next) {
        case (.pageNumber, .page(let number)):
            let current: Int
            switch page.request {
            case .page(let loaded): current = loaded
            default: current = paginator.firstPage
            }
            let (expected, overflow) = current.addingReportingOverflow(1)
            if overflow { return "follows page \(current), the last there can be" }
            return number == expected ? nil : "must be {\"page\": \(expected)}, got {\"page\": \(number)}"
        case (.offset(_, _, let nextOffsetPath), .offset(let offset)):
            // With a nextOffsetPath the server chose it; otherwise it is where this page ended.
            guard nextOffsetPath == nil else { return nil }
            let (expected, overflow) = page.request.offsetAsked.addingReportingOverflow(page.received)
            if overflow {
                return "follows offset \(page.request.offsetAsked) and \(page.received) objects, past the last offset there can be"
            }
            return offset == expected ? nil : "must be {\"offset\": \(expected)}, got {\"offset\": \(offset)}"
        case (.cursor, .cursor):
            return nil
        case (.cursor, .before):
            // Paging back asks for the page before the first held; a page's next is always forward.
            return "is a request for the page before a cursor, which no page names as its next"
        case (.nextURL, .url(let url)), (.linkHeader, .url(let url)):
            return RequestPlan(paginator: paginator).refusal(ofNextURL: url, ownOrigin: ownOrigin, errorURL: nil).map {
                "is refused as a server's would be: \($0.message)"
            }
        default:
            return "is a \(next.kindName) request, which the \(paginator.strategy.name) strategy never makes"
        }
    }
}
