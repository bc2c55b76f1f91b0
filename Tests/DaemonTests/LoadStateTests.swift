@testable import Daemon
@testable import DataSources
import JSONKit
import Testing

/// Issue 31, item 5: a load state per direction, sent when it changes, and `retry` of the
/// failed direction only.
@Suite struct LoadStateTests {
    typealias Machine = PaginatedStateMachineTests

    static func names(_ states: LoadStates) -> String {
        "\(states.refresh.name)/\(states.prepend.name)/\(states.append.name)"
    }

    static let serverError = FetchError(kind: .http, message: "HTTP status 500", url: "http://api.invalid/items", status: 500)

    @Test func eachDirectionMovesThroughItsStatesAndEachChangeIsSentOnce() throws {
        let (source, loader, recorder) = try Machine.source()
        #expect(Self.names(source.loadStates) == "idle/idle/idle")
        source.fetchData()
        loader.respond(0, json: Machine.page([1, 2]))
        #expect(source.fetchNextPage())
        loader.respond(1, json: Machine.page([]))
        #expect(
            recorder.loadStates.map { Self.names($0.states) } == [
                "loading/idle/idle",  // fetchData
                "idle/endReached/idle",  // the first page: nothing before it, more after
                "idle/endReached/loading",
                "idle/endReached/endReached",  // an empty page ends the list
            ])
        // Every change differs from the one before: no notification repeats a state.
        #expect(source.describe().stateLoadStates == source.loadStates)
    }

    @Test func theLoadStateComesAfterWillLoadDataAndBeforeTheFinalEvent() throws {
        let order = OrderRecorder()
        let (source, loader, _) = try Machine.source()
        source.addObserver(order)
        source.fetchData()
        loader.respond(0, json: Machine.page([1, 2]))
        #expect(order.events == ["will", "state loading/idle/idle", "change", "change", "state idle/endReached/idle", "finished"])
    }

    @Test func aFailedNextPageIsAnAppendErrorAndRetryAsksForThatPageOnly() throws {
        let (source, loader, recorder) = try Machine.source()
        source.fetchData()
        loader.respond(0, json: Machine.page([1, 2]))
        source.fetchNextPage()
        loader.fail(1, Self.serverError)
        #expect(source.loadStates.append == .error(Self.serverError))
        #expect(source.loadStates.refresh == .idle, "the loaded first page stays loaded")
        #expect(source.retryRefusal == nil)
        #expect(source.retry() == .append)
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=2&page_size=2")
        #expect(loader.requestedURLs.count == 3, "one request more: the failed page, not the first again")
        loader.respond(2, json: Machine.page([3, 4]))
        #expect(source.allObjects.prefix(4).compactMap { $0["id"]?.integerValue } == [1, 2, 3, 4])
        #expect(Self.names(recorder.loadStates.last!.states) == "idle/endReached/idle")
    }

    @Test func aFailedFirstPageIsARefreshErrorAndRetryFetchesItAgain() throws {
        let (source, loader, _) = try Machine.source()
        source.fetchData()
        loader.fail(0, Self.serverError)
        #expect(source.loadStates == LoadStates(refresh: .error(Self.serverError), prepend: .idle, append: .idle))
        #expect(source.retry() == .refresh)
        #expect(loader.requestedURLs == ["http://api.invalid/items?page=1&page_size=2", "http://api.invalid/items?page=1&page_size=2"])
        loader.respond(1, json: Machine.page([1, 2]))
        #expect(Self.names(source.loadStates) == "idle/endReached/idle")
    }

    @Test func aRefreshThatFailsOverLoadedPagesLeavesTheAppendStateAsItWas() throws {
        let (source, loader, _) = try Machine.source(extra: [("keyPath", "items")])
        source.fetchData()
        loader.respond(0, json: ["items": Machine.page([1]), "total_count": 1])  // the total: the end
        source.fetchData()
        loader.fail(1, Self.serverError)
        #expect(source.loadStates == LoadStates(refresh: .error(Self.serverError), prepend: .endReached, append: .endReached))
        #expect(source.retry() == .refresh)
    }

    @Test func retryIsRefusedWithAReasonWhenNothingFailedOrWhileLoading() throws {
        let (source, loader, _) = try Machine.source()
        #expect(source.retryRefusal == "no direction has failed: loadStates has no error")
        source.fetchData()
        #expect(source.retryRefusal == "a fetch is in flight")
        #expect(source.retry() == nil)
        loader.respond(0, json: Machine.page([1, 2]))
        #expect(source.retry() == nil)
        #expect(loader.requestedURLs.count == 1)
    }

    @Test func aLoopStopIsAnAppendErrorThatRetryCannotChange() throws {
        let (source, loader, _) = try Machine.source(["strategy": "cursor", "cursorPath": "next"], extra: [("keyPath", "items")])
        source.fetchData()
        loader.respond(0, json: ["items": Machine.page([1, 2]), "next": "a"])
        source.fetchNextPage()
        loader.respond(1, json: ["items": Machine.page([3, 4]), "next": "a"])
        guard case .error(let error) = source.loadStates.append else {
            Issue.record("append is \(source.loadStates.append)")
            return
        }
        #expect(error.kind == .loop)
        #expect(source.retryRefusal?.contains("kind loop") == true)
        #expect(source.retry() == nil)
    }

    @Test func cancellingALoadReturnsItsDirectionToIdle() throws {
        let (source, loader, _) = try Machine.source()
        source.fetchData()
        loader.respond(0, json: Machine.page([1, 2]))
        source.fetchNextPage()
        #expect(source.loadStates.append == .loading)
        source.cancelFetch()
        #expect(source.loadStates.append == .idle)
    }
}

/// The order of load events and load-state changes, as one list.
private final class OrderRecorder: DataSourceObserver {
    var events: [String] = []
    func dataSource(_ source: DataSource, emitted event: DataSourceEvent) {
        switch event {
        case .willLoadData: events.append("will")
        case .didPartiallyLoad: events.append("partial")
        case .finishedLoading: events.append("finished")
        case .failedWithError: events.append("failed")
        case .didChange: events.append("change")
        case .didChangeFreshness: events.append("freshness")
        case .didChangeLoadState(let states): events.append("state \(LoadStateTests.names(states))")
        case .didSettleMutation(let settlement): events.append("settled \(settlement.status)")
        }
    }
}

extension SourceDescription {
    fileprivate var stateLoadStates: LoadStates? {
        guard case .paginated(_, let paging) = state else { return nil }
        return paging.loadStates
    }
}
