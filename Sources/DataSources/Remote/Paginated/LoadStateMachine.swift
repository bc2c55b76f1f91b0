/// Paging 3's load states for the three directions a paginated source loads in, made from the
/// load in flight, the failures only a failure knows, and the ends the request plan knows.
///
/// Loads starting, arriving and failing are events; `publish(_:)` answers the load states to
/// send (`didChangeLoadState`) when they differ from the ones last sent, and `retry` which
/// direction asking again would load.
struct LoadStateMachine {
    /// What the request plan knows of the ends of the run.
    struct Ends {
        var loadedOnce: Bool
        var hasPrevious: Bool
        var hasNext: Bool
    }

    /// Where the load states go around an event the source sends (Protocol.md, "Ordering
    /// guarantees"), so that they say the load in flight at once and its end before its end.
    enum Publication: Equatable {
        /// Right after a `willLoadData`.
        case after
        /// Right before a final event.
        case before
        case none
    }

    /// What `retry` would do.
    enum Retry: Equatable {
        case load(LoadDirection)
        case refused(String)
    }

    /// The direction of the load in flight, from its start to its final event.
    private(set) var loading: LoadDirection?
    /// Why the last first page of a run failed, until one arrives.
    private(set) var refreshError: FetchError?
    /// Why the last page asked for before the first one failed, until one arrives.
    private(set) var prependError: FetchError?
    /// Why the last page asked for after the last one failed (or the loop guard that stopped
    /// the run), until one arrives: the trailing row shows it.
    private(set) var appendError: FetchError?
    /// What `describeSource.loadStates` and `didChangeLoadState` last said.
    private(set) var published = LoadStates()

    // MARK: Events

    /// A load in `direction` starts: asking again for a page before or after clears its failure.
    mutating func started(_ direction: LoadDirection) {
        loading = direction
        switch direction {
        case .refresh: break
        case .prepend: prependError = nil
        case .append: appendError = nil
        }
    }

    /// The source sends `event`: a final event ends the load in flight.
    mutating func goingOut(_ event: DataSourceEvent) -> Publication {
        switch event {
        case .willLoadData: return .after
        case .finishedLoading, .failedWithError:
            ended()
            return .before
        case .didPartiallyLoad, .didChange, .didChangeFreshness, .didChangeLoadState, .didSettleMutation: return .none
        }
    }

    /// The load in flight ended (its final event is next), whichever way.
    mutating func ended() { loading = nil }

    /// A page arrived in `direction`. A run's first page clears every failure; a page after
    /// the last clears the append failure.
    mutating func arrived(_ direction: LoadDirection) {
        switch direction {
        case .refresh:
            refreshError = nil
            prependError = nil
            appendError = nil
        case .prepend: break
        case .append: appendError = nil
        }
    }

    /// The server confirmed the first page (a `304`), and so the run: the refresh and append
    /// failures go, a failure before the first page stays.
    mutating func confirmed() {
        refreshError = nil
        appendError = nil
    }

    /// A load in `direction` failed, or the page that arrived ended paging in it.
    mutating func failed(_ direction: LoadDirection, _ error: FetchError) {
        switch direction {
        case .refresh: refreshError = error
        case .prepend: prependError = error
        case .append: appendError = error
        }
    }

    /// The end of the run in `direction` is no longer where the failure was: the window dropped
    /// the page at that end, or the server said there is no page after the last.
    mutating func endMoved(_ direction: LoadDirection) {
        switch direction {
        case .refresh: break
        case .prepend: prependError = nil
        case .append: appendError = nil
        }
    }

    /// A run taken up whole (restored from the cache, walked again by a refresh).
    mutating func adopted() {
        prependError = nil
        appendError = nil
    }

    /// A new query: no failure of the last one holds.
    mutating func forgetFailures() {
        refreshError = nil
        prependError = nil
        appendError = nil
    }

    /// The load states now, answered when they differ from the ones last published (they
    /// are then the ones published); nil when nothing changed.
    mutating func publish(_ ends: Ends) -> LoadStates? {
        func state(_ direction: LoadDirection, error: FetchError?, endReached: Bool) -> LoadState {
            if loading == direction { return .loading }
            if let error { return .error(error) }
            return endReached ? .endReached : .idle
        }
        let states = LoadStates(
            refresh: state(.refresh, error: refreshError, endReached: false),
            prepend: state(.prepend, error: prependError, endReached: ends.loadedOnce && !ends.hasPrevious),
            append: state(.append, error: appendError, endReached: ends.loadedOnce && !ends.hasNext))
        guard states != published else { return nil }
        published = states
        return states
    }

    // MARK: Retry

    /// Paging 3's `retry()`: the failed direction only: the first page when the run's first
    /// page failed, else the page before the first when that failed, else the page after the
    /// last. Refused while a load is in flight, when nothing failed, or when the direction
    /// that failed has nothing to ask again.
    func retry(isFetching: Bool, ends: Ends) -> Retry {
        if isFetching { return .refused("a fetch is in flight") }
        if refreshError != nil { return .load(.refresh) }
        if let prependError {
            if ends.hasPrevious { return .load(.prepend) }
            return .refused(
                "the prepend direction stopped with kind \(prependError.kind.rawValue), which asking again cannot change: fetchData starts a new run"
            )
        }
        if let appendError {
            if ends.hasNext { return .load(.append) }
            return .refused(
                "the append direction stopped with kind \(appendError.kind.rawValue), which asking again cannot change: fetchData starts a new run"
            )
        }
        return .refused("no direction has failed: loadStates has no error")
    }
}
