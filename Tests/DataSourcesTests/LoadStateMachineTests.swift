@testable import DataSources
import Testing

/// The load states alone: loads starting, arriving and failing in; what to publish and what
/// `retry` would load out.
@Suite struct LoadStateMachineTests {
    static let loaded = LoadStateMachine.Ends(loadedOnce: true, hasPrevious: true, hasNext: true)
    static let error = FetchError(kind: .http, message: "HTTP status 500", status: 500)

    @Test func aLoadIsPublishedOnceWhenItStartsAndOnceWhenItEnds() {
        var machine = LoadStateMachine()
        machine.started(.refresh)
        let ends = LoadStateMachine.Ends(loadedOnce: false, hasPrevious: false, hasNext: false)
        #expect(machine.publish(ends) == LoadStates(refresh: .loading))
        #expect(machine.publish(ends) == nil, "nothing changed since")
        machine.arrived(.refresh)
        machine.ended()
        let first = LoadStateMachine.Ends(loadedOnce: true, hasPrevious: false, hasNext: true)
        #expect(machine.publish(first) == LoadStates(refresh: .idle, prepend: .endReached, append: .idle))
        #expect(machine.published == LoadStates(refresh: .idle, prepend: .endReached, append: .idle))
    }

    @Test func theStatesFollowAStartAndPrecedeAnEnd() {
        var machine = LoadStateMachine()
        machine.started(.append)
        #expect(machine.goingOut(.willLoadData) == .after)
        #expect(machine.goingOut(.didPartiallyLoad) == LoadStateMachine.Publication.none)
        #expect(machine.publish(Self.loaded)?.append == .loading, "still in flight")
        #expect(machine.goingOut(.finishedLoading) == .before)
        #expect(machine.publish(Self.loaded)?.append == .idle, "ended before the final event goes")
        machine.started(.prepend)
        #expect(machine.goingOut(.failedWithError(.fetch(Self.error))) == .before)
        #expect(machine.loading == nil)
    }

    @Test func aFailureShowsInItsDirectionUntilItIsAskedForAgain() {
        var machine = LoadStateMachine()
        machine.started(.append)
        machine.failed(.append, Self.error)
        machine.ended()
        #expect(machine.publish(Self.loaded)?.append == .error(Self.error))
        #expect(machine.retry(isFetching: false, ends: Self.loaded) == .load(.append))
        machine.started(.append)
        #expect(machine.appendError == nil, "asking again clears it")
        #expect(machine.publish(Self.loaded)?.append == .loading)
    }

    @Test func retryPrefersTheFirstPageThenThePageBefore() {
        var machine = LoadStateMachine()
        machine.failed(.append, Self.error)
        machine.failed(.prepend, Self.error)
        #expect(machine.retry(isFetching: false, ends: Self.loaded) == .load(.prepend))
        machine.failed(.refresh, Self.error)
        #expect(machine.retry(isFetching: false, ends: Self.loaded) == .load(.refresh))
        #expect(machine.retry(isFetching: true, ends: Self.loaded) == .refused("a fetch is in flight"))
    }

    @Test func aDirectionWithNothingLeftToAskIsNotRetried() {
        var machine = LoadStateMachine()
        let noNext = LoadStateMachine.Ends(loadedOnce: true, hasPrevious: false, hasNext: false)
        #expect(machine.retry(isFetching: false, ends: noNext) == .refused("no direction has failed: loadStates has no error"))
        machine.failed(.append, FetchError(kind: .loop, message: "pagination stopped"))
        guard case .refused(let message) = machine.retry(isFetching: false, ends: noNext) else { return #expect(Bool(false)) }
        #expect(message.hasPrefix("the append direction stopped with kind loop"))
    }

    @Test func aConfirmedFirstPageKeepsTheFailureBeforeIt() {
        var machine = LoadStateMachine()
        machine.failed(.prepend, Self.error)
        machine.failed(.append, Self.error)
        machine.failed(.refresh, Self.error)
        machine.confirmed()
        #expect(machine.refreshError == nil)
        #expect(machine.appendError == nil)
        #expect(machine.prependError != nil)
        machine.arrived(.refresh)
        #expect(machine.prependError == nil, "a new run's first page clears every failure")
    }

    @Test func droppingAnEndClearsItsFailure() {
        var machine = LoadStateMachine()
        machine.failed(.prepend, Self.error)
        machine.failed(.append, Self.error)
        machine.endMoved(.prepend)
        #expect(machine.prependError == nil)
        #expect(machine.appendError != nil)
        machine.forgetFailures()
        #expect(machine.appendError == nil)
    }
}
