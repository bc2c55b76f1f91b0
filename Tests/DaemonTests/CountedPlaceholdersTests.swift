@testable import Daemon
@testable import DataSources
import JSONKit
import Testing

/// Issue 31, steps 3 and 4: counted placeholders (`placeholders: "counted"`) and jumps.
@Suite struct CountedPlaceholdersTests {
    typealias Machine = PaginatedStateMachineTests

    /// A page of `ids` in `items`, with the list's total in `total_count`.
    static func page(_ ids: Range<Int>, total: Int) -> JSON {
        ["items": .array(ids.map { ["id": JSON($0)] }), "total_count": JSON(total)]
    }

    static func counted(_ extra: [(String, JSON)] = []) throws -> (PaginatedDataSource, FakeLoader, Recorder) {
        try Machine.source(extra: [("keyPath", "items"), ("placeholders", "counted"), ("pageSize", 10)] + extra)
    }

    static func paging(_ source: DataSource) -> SourceDescription.PagingState? {
        guard case .paginated(_, let paging) = source.describe().state else { return nil }
        return paging
    }

    @Test func theFirstPageGivesTheListItsFullSizeWithUnloadedRowsAfterIt() throws {
        let (source, loader, recorder) = try Self.counted()
        source.fetchData()
        recorder.reset()
        loader.respond(0, json: Self.page(0..<10, total: 1_000_000))
        #expect(source.numberOfObjects(inSection: 0) == 1_000_000)
        #expect(try source.object(at: IndexPath(section: 0, item: 9))["id"] == 9)
        #expect(try source.object(at: IndexPath(section: 0, item: 10)) == ["$placeholder": "unloaded", "index": 10])
        #expect(try source.object(at: IndexPath(section: 0, item: 999_999)) == Placeholder.unloadedRow(index: 999_999))
        let read = try source.objects(inSection: 0, start: 500_000, count: 3)
        #expect(read == (500_000..<500_003).map { Placeholder.unloadedRow(index: $0) })
        #expect(Self.paging(source)?.placeholders.inForce == .counted)
        #expect(Self.paging(source)?.capabilities.jump == nil)
    }

    @Test func aPageArrivingUpdatesItsRowsInPlace() throws {
        let (source, loader, recorder) = try Self.counted()
        source.fetchData()
        loader.respond(0, json: Self.page(0..<10, total: 35))
        recorder.reset()
        #expect(source.fetchNextPage())
        loader.respond(1, json: Self.page(10..<20, total: 35))
        let changes = recorder.changes(of: "p")
        #expect(changes.count == 1)
        #expect(changes.first?.inserted == [] && changes.first?.deleted == [])
        #expect(changes.first?.updated == IndexPathList((10..<20).map { IndexPath(section: 0, item: $0) }))
        #expect(source.numberOfObjects(inSection: 0) == 35)
    }

    @Test func displayingAFarRowJumpsToItsPageWithOneRequest() throws {
        let (source, loader, recorder) = try Self.counted()
        source.fetchData()
        loader.respond(0, json: Self.page(0..<10, total: 1_000_000))
        recorder.reset()
        source.willDisplayObject(at: IndexPath(section: 0, item: 999_999))
        #expect(loader.requestedURLs.count == 2)
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=100000&page_size=10")
        loader.respond(1, json: Self.page(999_990..<1_000_000, total: 1_000_000))
        #expect(try source.object(at: IndexPath(section: 0, item: 999_999))["id"] == 999_999)
        // The first page's rows are unloaded again: a jump is a new run, as in Paging 3.
        #expect(try source.object(at: IndexPath(section: 0, item: 0)) == Placeholder.unloadedRow(index: 0))
        let changes = recorder.changes(of: "p")
        #expect(changes.allSatisfy { $0.inserted.isEmpty && $0.deleted.isEmpty && $0.moved.isEmpty })
        #expect(Set(changes.flatMap(\.updated).map(\.item)) == Set(Array(0..<10) + Array(999_990..<1_000_000)))
        #expect(Self.paging(source)?.jumps == 1)
        #expect(source.loadStates.append == .endReached)
        // gg: the first row is far again: page 1 comes back by a jump of its own.
        source.willDisplayObject(at: IndexPath(section: 0, item: 0))
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=1&page_size=10")
    }

    @Test func aRowWithinTheJumpThresholdPagesTowardsItInsteadOfJumping() throws {
        let (source, loader, _) = try Self.counted([("jumpThreshold", 25)])
        source.fetchData()
        loader.respond(0, json: Self.page(0..<10, total: 100))
        source.willDisplayObject(at: IndexPath(section: 0, item: 30))  // 21 rows past the last loaded
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=2&page_size=10")
        loader.respond(1, json: Self.page(10..<20, total: 100))
        // Still not there: the next page follows without another display.
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=3&page_size=10")
        loader.respond(2, json: Self.page(20..<30, total: 100))
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=4&page_size=10")
        loader.respond(3, json: Self.page(30..<40, total: 100))
        #expect(loader.requestedURLs.count == 4, "row 30 is loaded: nothing more")
        #expect(Self.paging(source)?.jumps == 0)
    }

    @Test func aJumpSupersedesALoadInFlight() throws {
        let (source, loader, recorder) = try Self.counted()
        source.fetchData()
        loader.respond(0, json: Self.page(0..<10, total: 1000))
        #expect(source.fetchNextPage())
        source.willDisplayObject(at: IndexPath(section: 0, item: 500))
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=51&page_size=10")
        #expect(recorder.events.contains("p.failed"), "the next page's cycle ends as cancelled")
        loader.respond(1, json: Self.page(10..<20, total: 1000))  // too late: dropped unseen
        loader.respond(2, json: Self.page(500..<510, total: 1000))
        #expect(source.allObjects.compactMap { $0["id"]?.integerValue } == Array(500..<510))
    }

    @Test func aWindowDropLeavesUnloadedRowsAndScrollingBackLoadsThemAgain() throws {
        let (source, loader, _) = try Self.counted([("window", ["maxPages": 2])])
        source.fetchData()
        loader.respond(0, json: Self.page(0..<10, total: 100))
        source.willDisplayObject(at: IndexPath(section: 0, item: 9))
        loader.respond(1, json: Self.page(10..<20, total: 100))
        source.willDisplayObject(at: IndexPath(section: 0, item: 19))
        loader.respond(2, json: Self.page(20..<30, total: 100))
        #expect(source.numberOfObjects(inSection: 0) == 100)
        #expect(try source.object(at: IndexPath(section: 0, item: 0)) == Placeholder.unloadedRow(index: 0))
        #expect(source.allObjects.compactMap { $0["id"]?.integerValue } == Array(10..<30))
        source.willDisplayObject(at: IndexPath(section: 0, item: 5))
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=1&page_size=10")
        loader.respond(3, json: Self.page(0..<10, total: 100))
        #expect(source.allObjects.compactMap { $0["id"]?.integerValue } == Array(0..<20))
    }

    @Test func withoutATotalTheListIsAsTodayAndSaysWhy() throws {
        let (source, loader, _) = try Self.counted()
        source.fetchData()
        loader.respond(0, json: ["items": .array((0..<10).map { ["id": JSON($0)] })])
        #expect(source.numberOfObjects(inSection: 0) == 11, "ten rows and the loading row")
        let paging = try #require(Self.paging(source))
        #expect(paging.placeholders.inForce == .trailing)
        #expect(paging.placeholders.refusal?.hasPrefix("no total") == true)
    }

    @Test func anAbsurdTotalIsNotShownAsRows() throws {
        let (source, loader, _) = try Self.counted()
        source.fetchData()
        loader.respond(0, json: Self.page(0..<10, total: Int.max))
        #expect(source.numberOfObjects(inSection: 0) == 11)
        #expect(Self.paging(source)?.placeholders.refusal?.contains("more than counted placeholders show") == true)
    }

    @Test func aCursorSourceRefusesAJumpNamingItsStrategy() throws {
        let (source, loader, _) = try Self.counted([
            ("pagination", ["strategy": "cursor", "cursorPath": "next"])
        ])
        source.fetchData()
        loader.respond(0, json: ["items": .array((0..<10).map { ["id": JSON($0)] }), "total_count": 1000, "next": "c2"])
        #expect(source.numberOfObjects(inSection: 0) == 1000)
        let refusal = try #require(source.displayRefusal(at: IndexPath(section: 0, item: 900)))
        #expect(refusal.contains("the cursor strategy cannot load the page of a far row"))
        #expect(source.displayRefusal(at: IndexPath(section: 0, item: 12)) == nil, "near rows page as usual")
        source.willDisplayObject(at: IndexPath(section: 0, item: 900))
        #expect(loader.requestedURLs.count == 1)
        #expect(Self.paging(source)?.capabilities.jump != nil)
    }

    @Test func aPageCountGivesAnEstimatedSizeThatSettlesWhenTheLastPageArrives() throws {
        let (source, loader, recorder) = try Self.counted([("jumpThreshold", 5)])
        source.fetchData()
        loader.respond(0, json: ["items": .array((0..<10).map { ["id": JSON($0)] }), "number_of_pages": 3])
        #expect(source.numberOfObjects(inSection: 0) == 30)
        source.willDisplayObject(at: IndexPath(section: 0, item: 29))
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=3&page_size=10")
        recorder.reset()
        loader.respond(1, json: ["items": .array((20..<25).map { ["id": JSON($0)] }), "number_of_pages": 3])
        #expect(source.numberOfObjects(inSection: 0) == 25)
        #expect(recorder.changes(of: "p").flatMap(\.deleted) == (25..<30).map { IndexPath(section: 0, item: $0) })
    }
}

/// The window keeps the pages around the rows a client reads, as around those it displays.
@Suite struct WindowSteeredByReadsTests {
    typealias Machine = PaginatedStateMachineTests

    @Test func aReadNearTheTopKeepsTheTopPagesWhenTheNextPageArrives() throws {
        let (source, loader, _) = try Machine.source(extra: [("window", ["maxPages": 2])])
        source.fetchData()
        loader.respond(0, json: Machine.page([1, 2]))
        source.fetchNextPage()
        loader.respond(1, json: Machine.page([3, 4]))
        source.willDisplayObject(at: IndexPath(section: 0, item: 4))  // the loading row: page 3
        // The user scrolls back up before page 3 arrives: the client reads the top rows.
        source.didRead(IndexPath(section: 0, item: 0))
        loader.respond(2, json: Machine.page([5, 6]))
        #expect(PagingBackwardsTests.ids(source) == [1, 2, 3, 4], "the page far from the rows read goes")
    }

    @Test func withoutTheReadTheTopPageGoes() throws {
        let (source, loader, _) = try Machine.source(extra: [("window", ["maxPages": 2])])
        source.fetchData()
        loader.respond(0, json: Machine.page([1, 2]))
        source.fetchNextPage()
        loader.respond(1, json: Machine.page([3, 4]))
        source.willDisplayObject(at: IndexPath(section: 0, item: 4))
        loader.respond(2, json: Machine.page([5, 6]))
        #expect(PagingBackwardsTests.ids(source) == [3, 4, 5, 6])
    }
}

/// A page the window dropped comes back from the persisted cache when the server says it is
/// unchanged (a conditional request answered 304), or from the server when it changed.
@Suite struct WindowReloadFromCacheTests {
    typealias Cached = CacheEntryValidationTests

    static func etag(_ value: String) -> [(name: String, value: String)] { [("ETag", value)] }

    /// Pages 1 to 3 of [1, 2], [3, 4], [5, 6] through a window of two pages: page 1 dropped.
    static func scrolledDown() throws -> (PaginatedDataSource, FakeLoader, MemoryPageStore) {
        let store = MemoryPageStore()
        let (source, loader, _) = try Cached.source(extra: [("window", ["maxPages": 2])], store: store)
        source.fetchData()
        loader.respond(0, json: PaginatedStateMachineTests.page([1, 2]), headers: etag("\"p1\""))
        source.fetchNextPage()
        loader.respond(1, json: PaginatedStateMachineTests.page([3, 4]), headers: etag("\"p2\""))
        source.fetchNextPage()
        loader.respond(2, json: PaginatedStateMachineTests.page([5, 6]), headers: etag("\"p3\""))
        #expect(Cached.ids(source).compactMap { $0 } == [3, 4, 5, 6])
        return (source, loader, store)
    }

    @Test func anUnchangedDroppedPageComesBackFromTheCache() throws {
        let (source, loader, _) = try Self.scrolledDown()
        #expect(source.fetchPreviousPage())
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=1&page_size=2")
        #expect(loader.header("If-None-Match", of: 3) == "\"p1\"")
        loader.respondNotModified(3)
        #expect(Cached.ids(source).compactMap { $0 } == [1, 2, 3, 4])
        #expect(source.loadStates.prepend == .endReached)
    }

    @Test func aChangedDroppedPageComesFromTheServer() throws {
        let (source, loader, _) = try Self.scrolledDown()
        #expect(source.fetchPreviousPage())
        loader.respond(3, json: PaginatedStateMachineTests.page([0, 1]), headers: Self.etag("\"p1b\""))
        #expect(Cached.ids(source).compactMap { $0 } == [0, 1, 3, 4])
    }

    @Test func aCursorSourceAsksAgainWithoutValidators() throws {
        let store = MemoryPageStore()
        let (source, loader, _) = try Cached.source(
            ["strategy": "cursor", "cursorPath": "next", "prevCursorPath": "prev"],
            extra: [("keyPath", "items"), ("window", ["maxPages": 1])],
            store: store)
        source.fetchData()
        loader.respond(0, json: ["items": [["id": 1]], "next": "c2"], headers: Self.etag("\"c1\""))
        source.fetchNextPage()
        loader.respond(1, json: ["items": [["id": 2]], "next": "c3", "prev": "c1"], headers: Self.etag("\"c2\""))
        #expect(source.fetchPreviousPage())
        #expect(loader.header("If-None-Match", of: 2) == nil, "a cursor may not name the same rows again")
    }
}

extension WindowSteeredByReadsTests {
    @Test func aReadOfAFarRowOfACountedListLoadsNothing() throws {
        let (source, loader, _) = try CountedPlaceholdersTests.counted([("window", ["maxPages": 2])])
        source.fetchData()
        loader.respond(0, json: CountedPlaceholdersTests.page(0..<10, total: 1000))
        #expect(source.fetchNextPage())
        source.didRead(IndexPath(section: 0, item: 900))  // a viewport read far below
        loader.respond(1, json: CountedPlaceholdersTests.page(10..<20, total: 1000))
        #expect(loader.requestedURLs.count == 2, "a read steers the window, it asks for no page")
    }
}

extension CountedPlaceholdersTests {
    /// A page size of 0 in the metadata is no page size: a far row's page cannot be worked out.
    @Test func aMetadataPageSizeOfZeroRefusesJumps() throws {
        // No pageSize in the configuration: only the metadata could give one.
        let loader = FakeLoader()
        let params: JSON = [
            "name": "p", "kind": "paginated", "identityKey": "id", "remoteConfiguration": ["baseURL": "http://api.invalid"],
            "apiPath": "/items", "keyPath": "items", "placeholders": "counted",
        ]
        guard case .paginated(let configuration, let paginator) = try SourceSpec.decoding(createSourceParams: params).kind else {
            Issue.record("not paginated")
            return
        }
        let source = PaginatedDataSource(
            name: "p", identity: Identity(key: JSONKeyPath("id")), configuration: configuration, paginator: paginator,
            loader: loader)
        source.fetchData()
        loader.respond(0, json: ["items": .array((0..<2).map { ["id": JSON($0)] }), "total_count": 1000, "page_size": 0])
        #expect(source.numberOfObjects(inSection: 0) == 1000)
        let refusal = try #require(source.displayRefusal(at: IndexPath(section: 0, item: 900)))
        #expect(refusal.contains("the page size is unknown"))
    }
}
