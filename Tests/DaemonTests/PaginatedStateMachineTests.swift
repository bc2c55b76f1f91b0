@testable import Daemon
@testable import DataSources
import JSONKit
import WireSchema
import Testing

/// Loads answered by the test, in the order it says: the remote and paginated state machines
/// run deterministically, with no network and no sleeps.
final class FakeLoader: RemoteLoading {
    struct Pending {
        let request: RemoteRequest
        let decode: @Sendable (RemoteResponse) -> Result<DecodedResponse, FetchError>
        let completion: (Result<DecodedResponse, FetchError>) -> Void
        let handle = FetchHandle()
        var cancelled: Bool { handle.isCancelled }
    }

    private(set) var pending: [Pending] = []
    var requestedURLs: [String] { pending.map(\.request.url) }

    /// Whether `later` queues work (`runDeferred` runs it), as the daemon's loader does;
    /// otherwise the caller does the work at once.
    var defersWork = false
    private(set) var deferred: [() -> Void] = []
    /// What the loader says of events waiting (a request read while work is done in turns).
    var eventsWaiting = false

    func later(_ work: @escaping () -> Void) -> Bool {
        guard defersWork else { return false }
        deferred.append(work)
        return true
    }

    /// Runs the work deferred first, if any; false when none was.
    @discardableResult
    func runDeferred() -> Bool {
        guard !deferred.isEmpty else { return false }
        deferred.removeFirst()()
        return true
    }

    func load(
        _ request: RemoteRequest, decode: @escaping @Sendable (RemoteResponse) -> Result<DecodedResponse, FetchError>,
        completion: @escaping (Result<DecodedResponse, FetchError>) -> Void
    ) -> FetchHandle {
        pending.append(Pending(request: request, decode: decode, completion: completion))
        return pending[pending.count - 1].handle
    }

    /// Answers request `index` with a JSON body (decoded as the daemon decodes it); a
    /// cancelled request's answer is dropped, as the daemon's loader drops it.
    func respond(_ index: Int, status: Int = 200, json: JSON, headers: [(name: String, value: String)] = []) {
        let request = pending[index]
        guard !request.cancelled else { return }
        let response = RemoteResponse(
            url: request.request.url, status: status,
            headers: [("Content-Type", "application/json")] + headers, body: json.encoded())
        request.completion(request.decode(response))
    }

    /// Answers request `index` with `304 Not Modified` (no body).
    func respondNotModified(_ index: Int, headers: [(name: String, value: String)] = []) {
        let request = pending[index]
        guard !request.cancelled else { return }
        request.completion(request.decode(RemoteResponse(url: request.request.url, status: 304, headers: headers, body: [])))
    }

    /// Fails request `index` as the network would.
    func fail(_ index: Int, _ error: FetchError) {
        let request = pending[index]
        guard !request.cancelled else { return }
        request.completion(.failure(error))
    }

    func header(_ name: String, of index: Int) -> String? {
        pending[index].request.headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

@Suite struct PaginatedStateMachineTests {
    static func source(_ pagination: JSON = [:], extra: [(String, JSON)] = []) throws -> (PaginatedDataSource, FakeLoader, Recorder) {
        let loader = FakeLoader()
        let params = JSON.object(
            [
                ("name", "p"), ("kind", "paginated"), ("identityKey", "id"),
                ("remoteConfiguration", ["baseURL": "http://api.invalid"]), ("apiPath", "/items"),
                ("pageSize", 2), ("pagination", pagination),
            ] + extra)
        guard case .paginated(let configuration, let paginator) = try SourceSpec.decoding(createSourceParams: params).kind else {
            throw FieldError(field: "kind", expected: "paginated", got: nil, message: "not paginated")
        }
        let source = PaginatedDataSource(
            name: "p", identity: Identity(key: JSONKeyPath("id")), configuration: configuration,
            paginator: paginator, loader: loader)
        return (source, loader, Recorder().observing(source))
    }

    static func page(_ ids: [Int]) -> JSON { .array(ids.map { ["id": JSON($0)] }) }

    @Test func prefetchDistanceStartsTheNextPageBeforeTheLastRow() throws {
        let (source, loader, _) = try Self.source(extra: [("prefetchDistance", 2)])
        source.fetchData()
        loader.respond(0, json: Self.page([1, 2]))
        // Rows: 1, 2, loading. Row 0 is 2 rows from the end: within the distance.
        source.willDisplayObject(at: IndexPath(section: 0, item: 0))
        #expect(loader.requestedURLs.count == 2)
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=2&page_size=2")
    }

    @Test func withoutPrefetchOnlyTheLastRowLoads() throws {
        let (source, loader, _) = try Self.source()
        source.fetchData()
        loader.respond(0, json: Self.page([1, 2]))
        source.willDisplayObject(at: IndexPath(section: 0, item: 1))
        #expect(loader.requestedURLs.count == 1)
        source.willDisplayObject(at: IndexPath(section: 0, item: 2))
        #expect(loader.requestedURLs.count == 2)
    }

    @Test func aRefreshDropsTheLateAnswerOfTheNextPageItSuperseded() throws {
        let (source, loader, recorder) = try Self.source()
        source.fetchData()
        loader.respond(0, json: Self.page([1, 2]))
        #expect(source.fetchNextPage())
        source.fetchData()  // supersedes page 2
        loader.respond(1, json: Self.page([3, 4]))  // late: dropped
        loader.respond(2, json: Self.page([5]))
        #expect(source.allObjects.compactMap { $0["id"]?.integerValue } == [5])
        #expect(recorder.errors.last?["message"] == "superseded by a new fetchData")
    }

    @Test func aRepeatedCursorEndsTheRunWithLoopKeepingTheRows() throws {
        let (source, loader, recorder) = try Self.source(["strategy": "cursor", "cursorPath": "next"], extra: [("keyPath", "items")])
        source.fetchData()
        loader.respond(0, json: ["items": Self.page([1, 2]), "next": "a"])
        #expect(source.fetchNextPage())
        loader.respond(1, json: ["items": Self.page([3, 4]), "next": "a"])
        #expect(recorder.errors.last?["kind"] == "loop")
        #expect(recorder.errors.last?["reason"] == "cursor")
        #expect(source.allObjects.compactMap { $0["id"]?.integerValue } == [1, 2, 3, 4])
        #expect(!source.fetchNextPage())
        #expect(loader.requestedURLs == ["http://api.invalid/items?page_size=2", "http://api.invalid/items?cursor=a&page_size=2"])
    }

    @Test func duplicatesAcrossPagesAreDroppedAndCountedOrKept() throws {
        let (source, loader, _) = try Self.source()
        source.fetchData()
        loader.respond(0, json: Self.page([1, 2]))
        source.fetchNextPage()
        loader.respond(1, json: Self.page([2, 3]))
        #expect(source.allObjects.compactMap { $0["id"]?.integerValue } == [1, 2, 3])
        #expect(source.duplicatesDropped == 1)

        let (keeping, keepingLoader, _) = try Self.source(["duplicates": "keep"])
        keeping.fetchData()
        keepingLoader.respond(0, json: Self.page([1, 2]))
        keeping.fetchNextPage()
        keepingLoader.respond(1, json: Self.page([2, 3]))
        #expect(keeping.allObjects.compactMap { $0["id"]?.integerValue } == [1, 2, 2, 3])
        #expect(keeping.indexPath(for: ["id": 2]) == IndexPath(section: 0, item: 1), "the first of two equal identities")
    }

    @Test func aNotFoundPastTheFirstPageEndsCleanly() throws {
        let (source, loader, recorder) = try Self.source(extra: [("placeholderStorageOptions", ["loading", "noResults", "errors"])])
        source.fetchData()
        loader.respond(0, json: Self.page([1, 2]))
        source.fetchNextPage()
        loader.respond(1, status: 404, json: ["detail": "Invalid page."])
        #expect(recorder.events.suffix(2) == ["p.change", "p.finished"])
        #expect(source.allObjects.compactMap { $0["id"]?.integerValue } == [1, 2])
        #expect(source.allObjects.count == 2, "no error row, no loading row")
        #expect(source.nextPageRefusal == "there are no more pages")
    }

    @Test func anOffsetNearIntMaxDoesNotOverflow() throws {
        let (source, loader, recorder) = try Self.source(["strategy": "offset", "nextOffsetPath": "next"], extra: [("keyPath", "items")])
        source.fetchData()
        loader.respond(0, json: ["items": Self.page([1]), "next": JSON(Int.max)])
        source.fetchNextPage()
        loader.respond(1, json: ["items": Self.page([2])])
        #expect(recorder.events.last == "p.finished", "the offset after Int.max is the end, not a trap")
        #expect(source.nextPageRefusal == "there are no more pages")
    }
}

/// The row after the objects of a list that is not counted.
@Suite struct TrailingPlaceholderTests {
    typealias Machine = PaginatedStateMachineTests

    // A refactor once returned JSON's null for "no row" (JSON takes the `nil` literal as null):
    // the failed page left a null row behind where it should leave none.
    @Test func aFailedPageWithoutAStoredErrorRowLeavesNoTrailingRow() throws {
        let (source, loader, _) = try Machine.source()
        source.fetchData()
        loader.respond(0, json: Machine.page([1, 2]))
        #expect(source.allObjects.last == Placeholder.loadingRow)
        source.fetchNextPage()
        loader.fail(1, FetchError(kind: .http, message: "HTTP status 503", url: "http://api.invalid/items", status: 503))
        #expect(source.allObjects == [["id": 1], ["id": 2]])
    }

    @Test func withAStoredErrorRowTheFailedPageShowsIt() throws {
        let (source, loader, _) = try Machine.source(extra: [("placeholderStorageOptions", 14)])
        source.fetchData()
        loader.respond(0, json: Machine.page([1, 2]))
        source.fetchNextPage()
        loader.fail(1, FetchError(kind: .http, message: "HTTP status 503", url: "http://api.invalid/items", status: 503))
        #expect(source.allObjects.count == 3)
        #expect(Placeholder.kind(of: source.allObjects[2]) == .error)
    }
}
