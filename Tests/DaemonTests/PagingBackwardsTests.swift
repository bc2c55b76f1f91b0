@testable import Daemon
@testable import DataSources
import JSONKit
import JSONRPC
import Testing

/// Issue 31, item 2: paging backwards, for every strategy that can, and starting in the middle.
@Suite struct PagingBackwardsTests {
    typealias Machine = PaginatedStateMachineTests

    static func ids(_ source: DataSource) -> [Int] { source.allObjects.compactMap { $0["id"]?.integerValue } }

    @Test func pageNumbersStartAtInitialPageAndPageBackToTheFirstByArithmetic() throws {
        let (source, loader, recorder) = try Machine.source(extra: [("initialPage", 3)])
        source.fetchData()
        #expect(loader.requestedURLs == ["http://api.invalid/items?page=3&page_size=2"])
        loader.respond(0, json: Machine.page([5, 6]))
        #expect(source.loadStates.prepend == .idle)
        recorder.reset()
        #expect(source.fetchPreviousPage())
        loader.respond(1, json: Machine.page([3, 4]))
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=2&page_size=2")
        #expect(Self.ids(source) == [3, 4, 5, 6])
        // The rows arrive at the top: inserted there, nothing else moves.
        #expect(recorder.changes(of: "p").last?.inserted == [IndexPath(section: 0, item: 0), IndexPath(section: 0, item: 1)])
        #expect(recorder.changes(of: "p").last?.deleted == [])
        source.willDisplayObject(at: IndexPath(section: 0, item: 0))  // the first row: the page before it
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=1&page_size=2")
        loader.respond(2, json: Machine.page([1, 2]))
        #expect(Self.ids(source) == [1, 2, 3, 4, 5, 6])
        #expect(source.loadStates.prepend == .endReached)
        #expect(source.previousPageRefusal == "the first page is loaded: there is no page before it")
        #expect(!source.fetchPreviousPage())
        #expect(loader.requestedURLs.count == 3)
    }

    @Test func offsetsPageBackByThePageSizeAndKeepOnlyWhatLiesBeforeTheFirstLoadedRow() throws {
        let (source, loader, _) = try Machine.source(["strategy": "offset"], extra: [("initialOffset", 3)])
        source.fetchData()
        #expect(loader.requestedURLs == ["http://api.invalid/items?offset=3&limit=2"])
        loader.respond(0, json: Machine.page([3, 4]))
        source.fetchPreviousPage()
        #expect(loader.requestedURLs.last == "http://api.invalid/items?offset=1&limit=2")
        loader.respond(1, json: Machine.page([1, 2]))
        source.fetchPreviousPage()
        // Offset 1 minus a page of 2: the first page, of which only row 0 lies before offset 1.
        #expect(loader.requestedURLs.last == "http://api.invalid/items?offset=0&limit=2")
        loader.respond(2, json: Machine.page([0, 1]))
        #expect(Self.ids(source) == [0, 1, 2, 3, 4])
        #expect(source.duplicatesDropped == 0, "the overlap is cut by position, not dropped as a duplicate")
        #expect(source.loadStates.prepend == .endReached)
    }

    @Test func cursorsPageBackWithPrevCursorPathAndWithoutItCannot() throws {
        let (source, loader, _) = try Machine.source(
            ["strategy": "cursor", "cursorPath": "next", "prevCursorPath": "prev"], extra: [("keyPath", "items"), ("initialCursor", "c2")])
        source.fetchData()
        #expect(loader.requestedURLs == ["http://api.invalid/items?cursor=c2&page_size=2"])
        loader.respond(0, json: ["items": Machine.page([3, 4]), "next": "c3", "prev": "c1"])
        source.fetchPreviousPage()
        #expect(loader.requestedURLs.last == "http://api.invalid/items?cursor=c1&page_size=2")
        loader.respond(1, json: ["items": Machine.page([1, 2]), "next": "c2", "prev": JSON.null])
        #expect(Self.ids(source) == [1, 2, 3, 4])
        #expect(source.loadStates.prepend == .endReached)

        let (plain, plainLoader, _) = try Machine.source(["strategy": "cursor", "cursorPath": "next"], extra: [("keyPath", "items")])
        plain.fetchData()
        plainLoader.respond(0, json: ["items": Machine.page([1, 2]), "next": "c2"])
        #expect(plain.previousPageRefusal == "the cursor strategy pages backwards only with pagination.prevCursorPath")
    }

    @Test func nextURLsPageBackWithPreviousURLPath() throws {
        let (source, loader, _) = try Machine.source(
            ["strategy": "nextURL", "previousURLPath": "previous"], extra: [("keyPath", "results")])
        source.fetchData()
        loader.respond(0, json: ["results": Machine.page([3, 4]), "next": JSON.null, "previous": "/items?page=1"])
        source.fetchPreviousPage()
        // A URL the server gave is followed as is.
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=1")
        loader.respond(1, json: ["results": Machine.page([1, 2]), "next": "/items?page=2", "previous": JSON.null])
        #expect(Self.ids(source) == [1, 2, 3, 4])
    }

    @Test func linkHeadersPageBackWithRelPrev() throws {
        let (source, loader, _) = try Machine.source(["strategy": "linkHeader"])
        source.fetchData()
        loader.respond(0, json: Machine.page([3, 4]), headers: [("Link", "</items?page=1>; rel=\"prev\"")])
        #expect(source.fetchPreviousPage())
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=1")
        loader.respond(1, json: Machine.page([1, 2]), headers: [("Link", "</items?page=2>; rel=\"next\"")])
        #expect(Self.ids(source) == [1, 2, 3, 4])
        #expect(source.previousPageRefusal == "the server named no page before the first one loaded")
    }

    @Test func aFailedPreviousPageKeepsEveryRowAndRetryAsksForItAgain() throws {
        let (source, loader, recorder) = try Machine.source(extra: [("initialPage", 2)])
        source.fetchData()
        loader.respond(0, json: Machine.page([3, 4]))
        source.fetchPreviousPage()
        let error = FetchError(kind: .http, message: "HTTP status 502", url: "http://api.invalid/items?page=1&page_size=2", status: 502)
        loader.fail(1, error)
        #expect(Self.ids(source) == [3, 4])
        #expect(source.loadStates == LoadStates(refresh: .idle, prepend: .error(error), append: .idle))
        #expect(recorder.events.last == "p.failed")
        #expect(source.retry() == .prepend)
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=1&page_size=2")
        loader.respond(2, json: Machine.page([1, 2]))
        #expect(Self.ids(source) == [1, 2, 3, 4])
    }

    @Test func anInitialPagePastTheLastIsASpecificErrorAndLosesNothing() throws {
        let (source, loader, recorder) = try Machine.source(extra: [("initialPage", 9)])
        source.fetchData()
        loader.respond(0, json: ["number_of_pages": 4] as JSON)
        guard case .error(let error) = source.loadStates.refresh else {
            Issue.record("refresh is \(source.loadStates.refresh)")
            return
        }
        #expect(error.kind == .outOfRange)
        #expect(error.message == "initialPage 9 is past the last page: the list has 4 pages from page 1 (number_of_pages)")
        #expect(recorder.events.last == "p.failed")

        // With rows loaded, a run that now starts past the end leaves them.
        let (loaded, loadedLoader, _) = try Machine.source(["strategy": "offset"], extra: [("initialOffset", 2)])
        loaded.fetchData()
        loadedLoader.respond(0, json: Machine.page([2, 3]))
        loaded.fetchData()
        loadedLoader.respond(1, json: Machine.page([]))
        #expect(Self.ids(loaded) == [2, 3])
        #expect(loaded.lastError?.message == "initialOffset 2 is past the end of the list: its page is empty")
    }
}

/// Issue 31, item 1: a window of pages.
@Suite struct WindowTests {
    typealias Machine = PaginatedStateMachineTests

    static func ids(_ source: DataSource) -> [Int] { PagingBackwardsTests.ids(source) }

    @Test func scrollingDownDropsTheTopPageAndScrollingBackLoadsItAgain() throws {
        let (source, loader, recorder) = try Machine.source(extra: [("window", ["maxPages": 2])])
        source.fetchData()
        loader.respond(0, json: Machine.page([1, 2]))
        source.fetchNextPage()
        loader.respond(1, json: Machine.page([3, 4]))
        source.willDisplayObject(at: IndexPath(section: 0, item: 4))  // the loading row: page 3
        recorder.reset()
        loader.respond(2, json: Machine.page([5, 6]))
        #expect(Self.ids(source) == [3, 4, 5, 6])
        // Page 3's rows inserted, page 1's deleted: whole pages, with a change set.
        let changes = recorder.changes(of: "p")
        #expect(changes.flatMap(\.deleted) == [IndexPath(section: 0, item: 0), IndexPath(section: 0, item: 1)])
        #expect(source.loadStates.prepend == .idle, "the dropped page is the page before")
        #expect(source.describe().pagesDroppedCount == 1)
        // Back to the top: the first row displayed loads page 1 again, and the bottom page goes.
        source.willDisplayObject(at: IndexPath(section: 0, item: 0))
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=1&page_size=2")
        loader.respond(3, json: Machine.page([1, 2]))
        #expect(Self.ids(source) == [1, 2, 3, 4])
        #expect(source.loadStates.prepend == .endReached)
        #expect(recorder.events.filter { $0 == "p.failed" }.isEmpty, "a page loaded again is not a loop")
        // And down again: page 3, dropped from the bottom, is the next page once more.
        #expect(source.fetchNextPage())
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=3&page_size=2")
    }

    @Test func maxObjectsBoundsTheRowsHeldInWholePages() throws {
        let (source, loader, _) = try Machine.source(extra: [("window", ["maxObjects": 5])])
        source.fetchData()
        for index in 0..<5 {
            if index > 0 { source.fetchNextPage() }
            loader.respond(index, json: Machine.page([2 * index + 1, 2 * index + 2]))
            #expect(source.allObjects.filter { Placeholder.kind(of: $0) == nil }.count <= 5)
        }
        #expect(Self.ids(source) == [7, 8, 9, 10])
    }

    @Test func aWindowOfZeroIsRefusedNamingTheMember() throws {
        let zero = #expect(throws: ResponseError.self) { try Machine.source(extra: [("window", ["maxPages": 0])]) }
        #expect(zero?.message == "Invalid params: \"window.maxPages\" must be an integer in 1...1000000, got 0")
        let empty = #expect(throws: ResponseError.self) { try Machine.source(extra: [("window", [:])]) }
        #expect(
            empty?.message
                == "Invalid params: \"window\" must give maxPages or maxObjects (or be left out: every page loaded is held)")
    }
}

extension SourceDescription {
    fileprivate var pagesDroppedCount: Int? {
        guard case .paginated(_, let paging) = state else { return nil }
        return paging.pagesDropped
    }
}
