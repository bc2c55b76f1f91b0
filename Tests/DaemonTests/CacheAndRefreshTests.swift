@testable import Daemon
@testable import DataSources
import JSONKit
import WireSchema
import Testing

/// A persisted cache in memory: what the model reads and writes, with no SQLite.
final class MemoryPageStore: PageCacheStore {
    var entries: [PageCacheKey: StoredPages] = [:]
    var writes = 0
    /// Pages made by writes, in all (a page kept as stored is not made again).
    var pagesWritten = 0
    var touches = 0
    var isAvailable = true
    /// The keys last written as entries the bound never evicts.
    var notEvictable: Set<PageCacheKey> = []

    func read(_ key: PageCacheKey) -> StoredPages? { entries[key] }
    func write(_ key: PageCacheKey, storedAt: Double, entry: EntryPages) {
        writes += 1
        if entry.evictable { notEvictable.remove(key) } else { notEvictable.insert(key) }
        let (stored, made) = entry.stored(over: entries[key], at: storedAt)
        pagesWritten += made
        entries[key] = stored
    }
    func touch(_ key: PageCacheKey, storedAt: Double) {
        touches += 1
        if let entry = entries[key] { entries[key] = StoredPages(payload: entry.payload, pages: entry.pages, storedAt: storedAt) }
    }
    func remove(_ key: PageCacheKey) { entries[key] = nil }
    func flush() {}

    func pages(_ key: PageCacheKey) -> CachedPages? {
        entries[key].flatMap { try? CachedPages.decode($0, limits: Self.limits).get() }
    }

    /// The default limits (`limits.maxDepth`, `limits.maxBodyBytes`).
    static let limits = CachedPages.Limits(RemoteConfiguration(baseURL: "http://api.invalid", apiPath: "/items"))
}

@Suite struct CacheAndRefreshTests {
    static let key = PageCacheKey(material: "test", label: "http://api.invalid/items")

    static func paginated(
        _ pagination: JSON = [:], extra: [(String, JSON)] = [], store: MemoryPageStore
    ) throws -> (PaginatedDataSource, FakeLoader, Recorder) {
        let (source, loader, recorder) = try PaginatedStateMachineTests.source(pagination, extra: [("cache", ["enabled": true])] + extra)
        source.attachCache(store, key: key)
        return (source, loader, recorder)
    }

    static func ids(_ source: DataSource) -> [Int?] { source.allObjects.map { $0["id"]?.integerValue } }
    static let etag = [(name: "ETag", value: "\"v1\"")]

    /// Loads pages 1...3 of two objects each (ids 1...6) into `store`, as a first daemon would.
    static func seed(_ store: MemoryPageStore) throws {
        let (source, loader, _) = try paginated(store: store)
        source.fetchData()
        loader.respond(0, json: PaginatedStateMachineTests.page([1, 2]), headers: etag)
        source.fetchNextPage()
        loader.respond(1, json: PaginatedStateMachineTests.page([3, 4]))
        source.fetchNextPage()
        loader.respond(2, json: PaginatedStateMachineTests.page([5, 6]))
    }

    @Test func cachedPagesShowAtOnceAndA304KeepsThemAllAndPagingGoesOn() throws {
        let store = MemoryPageStore()
        try Self.seed(store)
        #expect(store.pages(Self.key)?.pages.count == 3)
        let (source, loader, recorder) = try Self.paginated(store: store)
        source.fetchData()
        // Before any answer: the three pages and the trailing loading row, marked stale.
        #expect(Self.ids(source) == [1, 2, 3, 4, 5, 6, nil])
        #expect(source.isStale && source.cachedAt != nil)
        #expect(recorder.events == ["p.will", "p.change", "p.stale"])
        #expect(loader.header("If-None-Match", of: 0) == "\"v1\"")
        loader.respondNotModified(0)
        #expect(recorder.events == ["p.will", "p.change", "p.stale", "p.fresh", "p.finished"])
        #expect(Self.ids(source) == [1, 2, 3, 4, 5, 6, nil])
        #expect(store.touches == 1)
        // Paging continues after the last cached page.
        #expect(source.fetchNextPage())
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=4&page_size=2")
    }

    @Test func a200AfterTheCacheGivesOnlyTheDifferenceAndReplacesTheEntry() throws {
        let store = MemoryPageStore()
        try Self.seed(store)
        let (source, loader, recorder) = try Self.paginated(store: store)
        source.fetchData()
        recorder.reset()
        loader.respond(0, json: [["id": 1], ["id": 7]], headers: [(name: "ETag", value: "\"v2\"")])
        #expect(Self.ids(source) == [1, 7, nil])
        let change = try #require(recorder.changes(of: "p").first)
        #expect(change.deleted.map(\.item) == [1, 2, 3, 4, 5], "rows 2...6 left")
        #expect(change.inserted.map(\.item) == [1], "7 arrived; item 1 and the loading row stayed")
        #expect(change.updated.isEmpty && change.moved.isEmpty)
        #expect(recorder.events == ["p.change", "p.fresh", "p.finished"])
        let entry = try #require(store.pages(Self.key))
        #expect(entry.pages.count == 1 && entry.pages[0].validators.etag == "\"v2\"")
    }

    @Test func aFailedRevalidationKeepsTheStaleRows() throws {
        let store = MemoryPageStore()
        try Self.seed(store)
        let (source, loader, recorder) = try Self.paginated(store: store)
        source.fetchData()
        loader.fail(0, FetchError(kind: .transport, message: "connection refused", url: nil))
        #expect(Self.ids(source) == [1, 2, 3, 4, 5, 6, nil])
        #expect(source.isStale)
        #expect(recorder.events.last == "p.failed")
    }

    @Test func anEntryOlderThanMaxAgeIsNotShown() throws {
        let store = MemoryPageStore()
        try Self.seed(store)
        let old = try #require(store.entries[Self.key])
        store.entries[Self.key] = StoredPages(payload: old.payload, pages: old.pages, storedAt: old.storedAt - 100)
        let (source, loader, _) = try Self.paginated(extra: [("cache", ["enabled": true, "maxAgeSeconds": 10])], store: store)
        source.fetchData()
        #expect(!source.isStale)
        #expect(source.allObjects == [Placeholder.loadingRow])
        #expect(loader.header("If-None-Match", of: 0) == nil)
    }

    @Test func onlyMaxPagesPagesAreStored() throws {
        let store = MemoryPageStore()
        let (source, loader, _) = try Self.paginated(extra: [("cache", ["enabled": true, "maxPages": 2])], store: store)
        source.fetchData()
        loader.respond(0, json: PaginatedStateMachineTests.page([1, 2]))
        source.fetchNextPage()
        loader.respond(1, json: PaginatedStateMachineTests.page([3, 4]))
        source.fetchNextPage()
        loader.respond(2, json: PaginatedStateMachineTests.page([5, 6]))
        #expect(store.pages(Self.key)?.pages.map(\.rows.count) == [2, 2])
        #expect(store.writes == 2)
    }

    /// Saving the page after the last makes that page alone: loading N pages makes N pages in
    /// all, not 1 + 2 + ... + N. A first page loaded again starts the entry anew.
    @Test func eachPageLoadedIsMadeOnceForTheCache() throws {
        let store = MemoryPageStore()
        let (source, loader, _) = try Self.paginated(store: store)
        source.fetchData()
        loader.respond(0, json: PaginatedStateMachineTests.page([1, 2]))
        for page in 1..<10 {
            #expect(source.fetchNextPage())
            loader.respond(page, json: PaginatedStateMachineTests.page([2 * page + 1, 2 * page + 2]))
        }
        #expect(store.writes == 10)
        #expect(store.pagesWritten == 10)
        #expect(store.pages(Self.key)?.pages.flatMap(\.rows) == (1...20).map { ["id": JSON($0)] })
        source.fetchData()
        loader.respond(10, json: PaginatedStateMachineTests.page([1, 2]))
        #expect(store.pagesWritten == 11)
        #expect(store.pages(Self.key)?.pages.count == 1)
    }

    @Test func anEntryThisVersionCannotReadIsIgnoredAndDropped() throws {
        let store = MemoryPageStore()
        store.entries[Self.key] = StoredPages(payload: Array(#"{"format": 99, "pages": []}"#.utf8), storedAt: WallClock.secondsSince1970())
        let (source, _, _) = try Self.paginated(store: store)
        source.fetchData()
        #expect(!source.isStale)
        #expect(source.allObjects == [Placeholder.loadingRow])
        #expect(store.entries[Self.key] == nil)
    }

    @Test func cachedPagesRoundTripEveryRequestKind() throws {
        let requests: [PaginatedDataSource.PageRequest] = [.first, .page(2), .offset(40), .cursor("c=1&x"), .url("http://a.invalid/p?x=1")]
        let pages = requests.enumerated().map { index, request in
            CachedPages.Page(
                request: request,
                validators: Validators(etag: index % 2 == 0 ? "\"e\(index)\"" : nil, lastModified: "Wed, 21 Oct 2026 07:28:00 GMT"),
                rows: [["id": JSON(index)]], received: 1 + index, next: index == 4 ? nil : requests[index + 1],
                metadata: PageMetadata(pageSize: 1, numberOfTotalResults: 9))
        }
        let decoded = try CachedPages.decode(
            CachedPages(pages: pages, currentPage: 5, duplicatesDropped: 2).stored(at: 0), limits: MemoryPageStore.limits
        ).get()
        #expect(decoded.pages.map(\.request) == requests)
        #expect(decoded.pages.map(\.next) == pages.map(\.next))
        #expect(decoded.pages.map(\.validators) == pages.map(\.validators))
        #expect(decoded.pages.map(\.metadata) == pages.map(\.metadata))
        #expect(decoded.pages.map(\.received) == [1, 2, 3, 4, 5])
        #expect(decoded.currentPage == 5 && decoded.duplicatesDropped == 2)
        #expect(throws: CachedPages.Problem.self) {
            try CachedPages.decode(StoredPages(payload: Array("not json".utf8), storedAt: 0), limits: MemoryPageStore.limits).get()
        }
    }

    // MARK: Live lists

    /// A cursor-paged source with pages [1, 2] (ETag "v1", next cursor a) and [3, 4] (ETag "p2", next b) loaded.
    static func twoCursorPages() throws -> (PaginatedDataSource, FakeLoader, Recorder) {
        let (source, loader, recorder) = try PaginatedStateMachineTests.source(
            ["strategy": "cursor", "cursorPath": "next"], extra: [("keyPath", "items")])
        source.fetchData()
        loader.respond(0, json: ["items": PaginatedStateMachineTests.page([1, 2]), "next": "a"], headers: etag)
        source.fetchNextPage()
        loader.respond(
            1, json: ["items": PaginatedStateMachineTests.page([3, 4]), "next": "b"], headers: [(name: "ETag", value: "\"p2\"")])
        recorder.reset()
        return (source, loader, recorder)
    }

    @Test func aRefreshWalksTheLoadedPagesConditionallyAndChangesNothingOn304s() throws {
        let (source, loader, recorder) = try Self.twoCursorPages()
        var outcomes: [String] = []
        #expect(source.refresh { outcomes.append("\($0)") })
        #expect(!source.refresh { _ in }, "one refresh at a time")
        #expect(loader.header("If-None-Match", of: 2) == "\"v1\"")
        loader.respondNotModified(2)
        #expect(loader.requestedURLs[3] == "http://api.invalid/items?cursor=a&page_size=2")
        #expect(loader.header("If-None-Match", of: 3) == "\"p2\"")
        loader.respondNotModified(3)
        #expect(outcomes == ["unchanged"])
        #expect(recorder.events.isEmpty, "a refresh that changes nothing sends nothing")
        #expect(Self.ids(source) == [1, 2, 3, 4, nil])
        #expect(loader.requestedURLs.count == 4)
    }

    @Test func aRefreshFollowsANewCursorAndSendsOneChange() throws {
        let (source, loader, recorder) = try Self.twoCursorPages()
        var outcomes: [String] = []
        source.refresh { outcomes.append("\($0)") }
        loader.respond(2, json: ["items": PaginatedStateMachineTests.page([0, 1]), "next": "z"])
        // The first page moved on: the second page is asked for with the new cursor, unconditionally.
        #expect(loader.requestedURLs[3] == "http://api.invalid/items?cursor=z&page_size=2")
        #expect(loader.header("If-None-Match", of: 3) == nil)
        #expect(recorder.events.isEmpty, "nothing before the walk ends")
        loader.respond(3, json: ["items": PaginatedStateMachineTests.page([2, 3]), "next": "y"])
        #expect(outcomes == ["changed"])
        #expect(recorder.events == ["p.change"], "one change, no load cycle")
        #expect(Self.ids(source) == [0, 1, 2, 3, nil])
        let change = try #require(recorder.changes(of: "p").first)
        #expect(change.inserted.map(\.item) == [0] && change.deleted.map(\.item) == [3], "0 arrived, 4 (old row 3) left")
        // Paging goes on from the refreshed last page.
        source.fetchNextPage()
        #expect(loader.requestedURLs.last == "http://api.invalid/items?cursor=y&page_size=2")
    }

    @Test func aFailedRefreshChangesNothingAndAFetchSupersedesARefresh() throws {
        let (source, loader, recorder) = try PaginatedStateMachineTests.source()
        #expect(!source.refresh { _ in }, "nothing loaded yet")
        source.fetchData()
        loader.respond(0, json: PaginatedStateMachineTests.page([1, 2]))
        recorder.reset()
        var outcomes: [String] = []
        source.refresh { outcomes.append("\($0)") }
        loader.fail(1, FetchError(kind: .timeout, message: "timed out", url: nil))
        #expect(outcomes.count == 1 && outcomes[0].hasPrefix("failed"))
        #expect(recorder.events.isEmpty && Self.ids(source) == [1, 2, nil])

        source.refresh { outcomes.append("\($0)") }
        source.fetchData()
        #expect(outcomes.last == "superseded")
        loader.respond(2, json: PaginatedStateMachineTests.page([9]))  // the refresh's late answer: dropped
        loader.respond(3, json: PaginatedStateMachineTests.page([5, 6]))
        #expect(Self.ids(source) == [5, 6, nil])
        #expect(!source.isFetching)
    }

    @Test func aRemoteSourceRevalidatesAndRefreshes() throws {
        let loader = FakeLoader()
        let params: JSON = [
            "name": "r", "kind": "remote", "identityKey": "id", "remoteConfiguration": ["baseURL": "http://api.invalid"],
            "apiPath": "/r", "cache": ["enabled": true],
        ]
        guard case .remote(let configuration) = try SourceSpec.decoding(createSourceParams: params).kind else {
            throw FieldError(field: "kind", expected: "remote", got: nil, message: "")
        }
        let store = MemoryPageStore()
        func make() -> (RemoteDataSource, Recorder) {
            let source = RemoteDataSource(
                name: "r", identity: Identity(key: JSONKeyPath("id")), configuration: configuration, loader: loader)
            source.attachCache(store, key: Self.key)
            return (source, Recorder().observing(source))
        }
        let (first, _) = make()
        first.fetchData()
        loader.respond(0, json: PaginatedStateMachineTests.page([1, 2]), headers: Self.etag)
        #expect(store.writes == 1)

        let (second, recorder) = make()
        second.fetchData()
        #expect(Self.ids(second) == [1, 2] && second.isStale)
        loader.respondNotModified(1)
        #expect(recorder.events == ["r.will", "r.change", "r.stale", "r.fresh", "r.finished"])
        var outcomes: [String] = []
        second.refresh { outcomes.append("\($0)") }
        #expect(loader.header("If-None-Match", of: 2) == "\"v1\"")
        loader.respondNotModified(2)
        second.refresh { outcomes.append("\($0)") }
        loader.respond(3, json: PaginatedStateMachineTests.page([1, 2, 3]), headers: [(name: "ETag", value: "\"v2\"")])
        #expect(outcomes == ["unchanged", "changed"])
        #expect(recorder.events.suffix(1) == ["r.change"])
        #expect(store.pages(Self.key)?.pages.first?.validators.etag == "\"v2\"")
    }
}

@Suite struct LiveListDaemonPiecesTests {
    @Test func refreshDelaysBackOffWithJitterAndHonourRetryAfter() {
        var schedule = RefreshSchedule(intervalSeconds: 10)
        #expect(Daemon.refreshDelay(schedule, jitter: 0) == 10)
        #expect(Daemon.refreshDelay(schedule, jitter: 1) == 11)
        #expect(Daemon.refreshDelay(schedule, jitter: -1) == 9)
        schedule.consecutiveFailures = 3
        #expect(Daemon.refreshDelay(schedule, jitter: 0) == 80)
        schedule.consecutiveFailures = 60
        #expect(Daemon.refreshDelay(schedule, jitter: 0) == 3600, "at most an hour")
        var error = FetchError(kind: .http, message: "HTTP status 503", url: nil, status: 503)
        error.retryAfterSeconds = 7200
        schedule.lastError = error
        #expect(Daemon.refreshDelay(schedule, jitter: 0) == 7200, "at least Retry-After")
        schedule.lastError?.retryAfterSeconds = 1e12
        #expect(Daemon.refreshDelay(schedule, jitter: 1) == 7 * 86_400, "a week at most")
        var long = RefreshSchedule(intervalSeconds: 86_400)
        long.consecutiveFailures = 2
        #expect(Daemon.refreshDelay(long, jitter: 0) == 86_400, "never shorter than the interval")
    }

    @Test func timestampsAreRFC3339InUTC() {
        #expect(Timestamp.iso8601(0) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp.iso8601(1_795_451_297.5) == "2026-11-23T16:28:17.500Z")
        #expect(Timestamp.iso8601(951_782_400.25) == "2000-02-29T00:00:00.250Z")
        #expect(Timestamp.iso8601(.nan) == "1970-01-01T00:00:00.000Z")
    }

    static func cacheKey(_ params: JSON) throws -> PageCacheKey? {
        var reader = try ObjectReader(params, field: "")
        return try CreateSourceParams(&reader).cacheKey
    }

    @Test func theCacheKeyCoversWhatTheServerSeesButNotNamesAndNeverLabelsSecrets() throws {
        func params(name: String = "a", token: String = "secret-token-1", query: JSON = [:], placeholders: JSON = 6) -> JSON {
            [
                "name": JSON(name), "kind": "paginated",
                "remoteConfiguration": ["baseURL": "https://user:pw@api.invalid", "headers": ["Authorization": JSON("Bearer " + token)]],
                "apiPath": "/items", "queryParameters": query, "placeholderStorageOptions": placeholders, "cache": ["enabled": true],
            ]
        }
        let key = try #require(try Self.cacheKey(params()))
        #expect(
            try Self.cacheKey(params(name: "b", placeholders: 0)) == key, "names and placeholders do not change what the server returns")
        #expect(try Self.cacheKey(params(token: "secret-token-2")) != key, "two users' tokens never share an entry")
        #expect(try Self.cacheKey(params(query: ["state": "open"])) != key)
        #expect(!key.label.contains("secret-token") && !key.label.contains("pw"))
        #expect(try Self.cacheKey(["name": "s", "kind": "simple"]) == nil)
    }
}
