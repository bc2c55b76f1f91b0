@testable import Daemon
@testable import DataSources
import Basics
import JSONKit
import WireSchema
import Testing

/// A list reopened from the persisted cache shows its first pages at once and reads the rest
/// in turns; its first load cycle never ends with stored pages left unread.
@Suite struct ReopenInTurnsTests {
    static let key = CacheAndRefreshTests.key
    static let pageSize = 500
    static let pageCount = 10

    /// A paginated source of pages of 500 over `store`, with the cache on; its loader defers
    /// work as the daemon's does.
    static func source(store: MemoryPageStore, actions: JSON? = nil) throws -> (PaginatedDataSource, FakeLoader, Recorder) {
        let loader = FakeLoader()
        loader.defersWork = true
        var params: JSON = [
            "name": "p", "kind": "paginated", "identityKey": "id", "remoteConfiguration": ["baseURL": "http://api.invalid"],
            "apiPath": "/items", "pageSize": JSON(pageSize), "cache": ["enabled": true],
        ]
        if let actions { params = params.setting("actions", to: actions) }
        guard case .paginated(let configuration, let paginator) = try SourceSpec.decoding(createSourceParams: params).kind else {
            throw FieldError(field: "kind", expected: "paginated", got: nil, message: "not paginated")
        }
        let source = PaginatedDataSource(
            name: "p", identity: Identity(key: JSONKeyPath("id")), configuration: configuration, paginator: paginator, loader: loader)
        source.attachCache(store, key: key)
        return (source, loader, Recorder().observing(source))
    }

    /// The stored pages: 10 pages of 500 rows, ids 1...5,000, each with an ETag; the last names no next page.
    static func storedPages() -> [CachedPages.Page] {
        (1...pageCount).map { number in
            CachedPages.Page(
                request: number == 1 ? .first : .page(number), validators: Validators(etag: "\"p\(number)\""),
                rows: ((number - 1) * pageSize + 1...number * pageSize).map { ["id": JSON($0)] }, received: pageSize,
                next: number == pageCount ? nil : .page(number + 1), metadata: PageMetadata())
        }
    }

    static func seeded() -> MemoryPageStore {
        let store = MemoryPageStore()
        CacheEntryValidationTests.store(storedPages(), in: store)
        return store
    }

    static func ids(_ source: DataSource) -> [Int?] { source.allObjects.map { $0["id"]?.integerValue } }
    static func rows(through last: Int) -> [Int?] { (1...last).map { $0 } }

    @Test func theFirstPagesShowAtOnceAndTheRestComeInTurnsEachAChange() throws {
        let store = Self.seeded()
        let (source, loader, recorder) = try Self.source(store: store)
        source.fetchData()
        // rowsReadAtOnce (1,000): two pages, and the loading row while pages remain.
        #expect(Self.ids(source) == Self.rows(through: 1000) + [nil])
        #expect(source.isStale)
        #expect(recorder.events == ["p.will", "p.change", "p.stale"])
        #expect(loader.requestedURLs == ["http://api.invalid/items?page=1&page_size=500"], "the first page is revalidated at once")
        #expect(loader.header("If-None-Match", of: 0) == "\"p1\"")
        // Each turn reads rowsReadPerTurn (1,000): two pages, one change.
        for shown in [2000, 3000, 4000] {
            #expect(loader.runDeferred())
            #expect(Self.ids(source) == Self.rows(through: shown) + [nil])
        }
        #expect(loader.runDeferred())
        #expect(Self.ids(source) == Self.rows(through: 5000), "the last page names no next page: no loading row")
        #expect(recorder.events == ["p.will", "p.change", "p.stale"] + Array(repeating: "p.change", count: 4))
        #expect(!loader.runDeferred(), "no turn is left once every page is read")
        #expect(source.run.plan.pagesLoaded == 10 && source.currentPage == 10)
        loader.respondNotModified(0)
        #expect(recorder.events.suffix(2) == ["p.fresh", "p.finished"])
        #expect(Self.ids(source) == Self.rows(through: 5000))
        #expect(store.writes == 0, "nothing read is written back")
    }

    @Test func theFirstCycleEndsOnceEveryStoredPageIsShown() throws {
        let store = Self.seeded()
        let (source, loader, recorder) = try Self.source(store: store)
        source.fetchData()
        // The 304 comes before any turn: it confirms the entry (its time stored changes), and
        // the cycle's end waits for the turns, which still read the pages left from it.
        loader.respondNotModified(0)
        #expect(store.touches == 1)
        #expect(recorder.events == ["p.will", "p.change", "p.stale", "p.fresh"])
        #expect(source.isFetching, "the cycle goes on while stored pages are left")
        #expect(Self.ids(source).count == 1001)
        #expect(loader.runDeferred())
        #expect(Self.ids(source).count == 2001)
        while loader.runDeferred() {}
        #expect(Self.ids(source) == Self.rows(through: 5000))
        #expect(recorder.events == ["p.will", "p.change", "p.stale", "p.fresh"] + Array(repeating: "p.change", count: 4) + ["p.finished"])
        #expect(!source.isFetching)
        #expect(source.fetchNextPage() == false, "the last stored page names no next page")
    }

    @Test func aFailedRevalidationEndsItsCycleOnceEveryStoredPageIsShown() throws {
        let store = Self.seeded()
        let (source, loader, recorder) = try Self.source(store: store)
        source.fetchData()
        loader.fail(0, FetchError(kind: .transport, message: "connection refused"))
        #expect(recorder.events.last == "p.stale")
        while loader.runDeferred() {}
        #expect(Self.ids(source) == Self.rows(through: 5000))
        #expect(source.isStale)
        #expect(recorder.events.suffix(2) == ["p.change", "p.failed"])
    }

    @Test func aCancelStopsTheReadingAndANewFetchReadsTheRestAtOnce() throws {
        do {
            let (source, loader, recorder) = try Self.source(store: Self.seeded())
            source.fetchData()
            source.cancelFetch()
            #expect(recorder.events == ["p.will", "p.change", "p.stale", "p.failed"])
            loader.runDeferred()
            #expect(Self.ids(source).count == 1001, "no page is read after the cancel")
        }
        do {
            // The 304 came, the cycle waits for the turns: a cancel then ends it as the 304 said.
            let (source, loader, recorder) = try Self.source(store: Self.seeded())
            source.fetchData()
            loader.respondNotModified(0)
            source.cancelFetch()
            #expect(recorder.events == ["p.will", "p.change", "p.stale", "p.fresh", "p.finished"])
        }
        do {
            let (source, loader, recorder) = try Self.source(store: Self.seeded())
            source.fetchData()
            loader.respondNotModified(0)
            source.fetchData()
            #expect(Self.ids(source) == Self.rows(through: 5000), "read whole before the new cycle")
            #expect(recorder.events == ["p.will", "p.change", "p.stale", "p.fresh", "p.change", "p.finished", "p.will"])
            #expect(loader.header("If-None-Match", of: 1) == "\"p1\"")
        }
    }

    @Test func aFirstPageThatChangedLeavesTheStoredPagesUnread() throws {
        let store = Self.seeded()
        let (source, loader, _) = try Self.source(store: store)
        source.fetchData()
        loader.respond(0, json: .array([["id": 1], ["id": 9001]]), headers: [(name: "ETag", value: "\"v2\"")])
        #expect(Self.ids(source) == [1, 9001, nil])
        #expect(loader.runDeferred())
        #expect(Self.ids(source) == [1, 9001, nil], "no stored page follows the server's first page")
        #expect(store.pages(Self.key)?.pages.count == 1, "the server's run replaced the entry")
    }

    @Test func aDamagedPageEndsTheReadingThereAndThePagesAfterComeFromTheServer() throws {
        let store = Self.seeded()
        let stored = try #require(store.entries[Self.key])
        var pages = stored.pages
        pages[5][pages[5].count - 3] ^= 1
        store.entries[Self.key] = StoredPages(payload: stored.payload, pages: pages, storedAt: stored.storedAt)
        let (source, loader, _) = try Self.source(store: store)
        var warnings: [String] = []
        source.attachCache(store, key: Self.key) { warnings.append($0) }
        source.fetchData()
        #expect(loader.runDeferred())
        #expect(Self.ids(source) == Self.rows(through: 2000) + [nil])
        #expect(loader.runDeferred())
        // Page 5 was read; page 6 is damaged: its rows are not shown, the entry is dropped.
        #expect(Self.ids(source) == Self.rows(through: 2500) + [nil])
        #expect(store.entries[Self.key] == nil)
        #expect(warnings.count == 1 && warnings[0].contains("pages[5]: its checksum does not match") == true, "\(warnings)")
        #expect(warnings.first?.contains("the 5 pages before it stay") == true, "\(warnings)")
        #expect(!loader.runDeferred() || Self.ids(source).count == 2501, "nothing more is read")
        loader.respondNotModified(0)
        #expect(Self.ids(source) == Self.rows(through: 2500) + [nil], "the cycle ends with what was read")
        #expect(source.fetchNextPage())
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=6&page_size=500")
    }

    @Test func anEntryReplacedWhileItIsReadIsReadNoFurther() throws {
        let store = Self.seeded()
        let (source, loader, _) = try Self.source(store: store)
        source.fetchData()
        // Another daemon sharing the file confirms the entry: its time stored is not the one read.
        let stored = try #require(store.entries[Self.key])
        store.entries[Self.key] = StoredPages(payload: stored.payload, pages: stored.pages, storedAt: stored.storedAt + 1)
        #expect(loader.runDeferred())
        #expect(Self.ids(source) == Self.rows(through: 1000) + [nil])
        #expect(store.entries[Self.key] != nil, "another daemon's entry is left as it is")
        loader.respondNotModified(0)
        #expect(source.fetchNextPage())
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=3&page_size=500")
    }

    @Test func anActionOnARowNotYetReadFindsIt() throws {
        let store = Self.seeded()
        let actions: JSON = ["delete": ["method": "DELETE", "path": "/items/{id}", "optimistic": "remove", "result": "none"]]
        let (source, loader, _) = try Self.source(store: store, actions: actions)
        source.fetchData()
        #expect(Self.ids(source).count == 1001)
        _ = try source.performAction("delete", identity: 4500, values: [:])
        #expect(Self.ids(source) == Self.rows(through: 5000).filter { $0 != 4500 }, "every stored page is read first")
        // The request is made after the change is written: work the loader runs later.
        #expect(loader.requestedURLs.last != "http://api.invalid/items/4500")
        while loader.runDeferred() {}
        #expect(loader.requestedURLs.last == "http://api.invalid/items/4500")
    }

    @Test func aTurnEndsAfterAPageWhenARequestWaits() throws {
        let (source, loader, _) = try Self.source(store: Self.seeded())
        source.fetchData()
        loader.eventsWaiting = true
        #expect(loader.runDeferred())
        #expect(Self.ids(source) == Self.rows(through: 1500) + [nil], "one page, not rowsReadPerTurn")
        loader.eventsWaiting = false
        #expect(loader.runDeferred())
        #expect(Self.ids(source) == Self.rows(through: 2500) + [nil])
    }

    @Test func aShortStoredRunIsShownWhole() throws {
        let store = MemoryPageStore()
        CacheEntryValidationTests.store(Array(Self.storedPages().prefix(2)), in: store)
        let (source, loader, _) = try Self.source(store: store)
        source.fetchData()
        #expect(Self.ids(source) == Self.rows(through: 1000) + [nil], "page 2 names a page 3: the loading row")
        #expect(!loader.runDeferred(), "nothing is left for a turn")
    }
}

/// The persisted cache in memory, for daemons on threads of their own.
private final class LockedPageStore: PageCacheStore, @unchecked Sendable {
    private let entries = LockedValue<[PageCacheKey: StoredPages]>([:])

    var count: Int { entries.withLock { $0.count } }
    func read(_ key: PageCacheKey) -> StoredPages? { entries.withLock { $0[key] } }
    func write(_ key: PageCacheKey, storedAt: Double, entry: EntryPages) {
        entries.withLock { $0[key] = entry.stored(over: $0[key], at: storedAt).0 }
    }
    func touch(_ key: PageCacheKey, storedAt: Double) {
        entries.withLock { entries in
            if let entry = entries[key] { entries[key] = StoredPages(payload: entry.payload, pages: entry.pages, storedAt: storedAt) }
        }
    }
    func remove(_ key: PageCacheKey) { _ = entries.withLock { $0.removeValue(forKey: key) } }
    var isAvailable: Bool { true }
    func flush() {}
}

extension ReopenInTurnsTests {
    static func url(_ page: Int) -> String { "http://api.invalid/items?page=\(page)&page_size=\(pageSize)" }

    static func create(_ client: WireClient) {
        _ = client.request("initialize")
        _ = client.request(
            "createSource",
            [
                "name": "p", "kind": "paginated", "identityKey": "id", "remoteConfiguration": ["baseURL": "http://api.invalid"],
                "apiPath": "/items", "pageSize": JSON(pageSize), "cache": ["enabled": true],
            ])
    }

    /// Over the wire: the daemon's first change set holds the first 1,000 rows alone, later
    /// ones append the rest in order, and `fetchData` with `wait` answers once all are shown.
    @Test func overTheWireTheFirstChangeHoldsTheFirstPagesAndTheCycleEndsWithAll() throws {
        let store = LockedPageStore()
        let pages = Dictionary(
            uniqueKeysWithValues: Self.storedPages().enumerated().map { index, page in
                (
                    Self.url(index + 1),
                    Result<RemoteResponse, FetchError>.success(
                        RemoteResponse(
                            url: Self.url(index + 1), status: 200,
                            headers: [("Content-Type", "application/json"), ("ETag", "\"p\(index + 1)\"")],
                            body: JSON.array(index == Self.pageCount - 1 ? [] : page.rows).encoded()))
                )
            })
        do {
            // The first daemon loads ten pages (the eleventh is empty: the end) and stores them.
            let client = WireClient(fetcher: ScriptedFetcher(pages), cache: store)
            Self.create(client)
            _ = client.request("fetchData", ["source": "p", "wait": true])
            for page in 2...Self.pageCount {
                #expect(client.request("fetchNextPage", ["source": "p"])["result"]?["started"] == true)
                // Each page's finishedLoading comes before the answer to a later request.
                var finished = 0
                for _ in 0..<10_000 where finished < page {
                    _ = client.request("ping")
                    finished = client.notifications.filter { $0["method"] == "dataSource/finishedLoading" }.count
                }
                #expect(finished == page)
            }
            let count = client.request("numberOfObjectsInSection", ["source": "p", "section": 0])["result"]
            #expect(count == 4500, "\(String(describing: count))")
        }
        #expect(store.count == 1)
        // The second daemon on the same store: the server confirms the first page.
        let confirming = ScriptedFetcher([Self.url(1): .success(RemoteResponse(url: Self.url(1), status: 304, headers: [], body: []))])
        let client = WireClient(fetcher: confirming, cache: store)
        Self.create(client)
        let answer = client.request("fetchData", ["source": "p", "wait": true])
        #expect(answer["result"]?["outcome"] == "finished", "\(answer)")
        let changes = client.notifications.filter { $0["method"] == "dataSource/didChange" }
        let inserted = changes.map { $0["params"]?["changes"]?["inserted"]?.arrayValue?.count ?? 0 }
        #expect(inserted.first == 1001, "the first 1,000 rows and the loading row: \(inserted)")
        #expect(inserted.count >= 2, "the rest came after: \(inserted)")
        let ids = client.request("allObjects", ["source": "p"])["result"]?.arrayValue?.compactMap { $0["id"]?.integerValue }
        #expect(ids == Array(1...4500), "\(ids?.count ?? 0) rows")
        #expect(confirming.requested == [Self.url(1)])
    }
}
