import DataSources
import Dispatch
import JSONKit
import JSONRPC
import Basics

/// Loads for remote sources: each GET runs off the main loop (the fetcher's threads), is
/// decoded there, and comes back as a mailbox event, so sources only ever change on the
/// main loop.
final class HTTPLoader: RemoteLoading {
    private let fetcher: HTTPFetching
    private let mailbox: Mailbox<DaemonEvent>
    /// Loads whose result has not come back. A cancelled one stays until its fetch reports
    /// (HTTPGet always does) or the next load, and its completion is never called.
    private var loads: [Int: (handle: FetchHandle, completion: (Result<DecodedResponse, FetchError>) -> Void)] = [:]
    private var nextID = 0
    /// Sent with every request whose source sets none; `initialize` adds the client's name.
    var userAgent = DaemonInfo.userAgent(clientName: nil, clientVersion: nil)

    init(fetcher: HTTPFetching, mailbox: Mailbox<DaemonEvent>) {
        self.fetcher = fetcher
        self.mailbox = mailbox
    }

    func load(
        _ request: RemoteRequest, decode: @escaping @Sendable (RemoteResponse) -> Result<DecodedResponse, FetchError>,
        completion: @escaping (Result<DecodedResponse, FetchError>) -> Void
    ) -> FetchHandle {
        // The handle is cancelled from the sources' thread, where the loader cannot be
        // reached from a Sendable action: cancelled loads are forgotten here instead.
        loads = loads.filter { !$0.value.handle.isCancelled }
        nextID += 1
        let id = nextID
        let mailbox = self.mailbox
        let fetcher = self.fetcher
        let inFlight = InFlightFetch()
        let handle = FetchHandle { inFlight.cancel() }
        loads[id] = (handle, completion)
        var withAgent = request
        if !request.headers.contains(header: "user-agent") {
            withAgent.headers.append((name: "User-Agent", value: userAgent))
        }
        let request = withAgent
        let start: @Sendable () -> Void = {
            let handle = fetcher.fetch(request) { result in
                // Decoded here, off the main loop: the main loop only applies the rows.
                mailbox.post(.loaded(id: id, result.flatMap(decode)))
            }
            inFlight.started(handle)
        }
        if request.delaySeconds > 0 {
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(min(request.delaySeconds, 86_400) * 1000))) {
                if !inFlight.isCancelled { start() }
            }
        } else {
            start()
        }
        return handle
    }

    /// On the main loop: hands a result to its source, unless the load was cancelled.
    func complete(id: Int, _ result: Result<DecodedResponse, FetchError>) {
        guard let load = loads.removeValue(forKey: id), !load.handle.isCancelled else { return }
        load.completion(result)
    }

    /// Work to run after the events waiting, by ID (`later`).
    private var deferred: [Int: () -> Void] = [:]
    private var nextDeferredID = 0

    func later(_ work: @escaping () -> Void) -> Bool {
        nextDeferredID &+= 1
        deferred[nextDeferredID] = work
        mailbox.post(.deferred(id: nextDeferredID))
        return true
    }

    var eventsWaiting: Bool { mailbox.queuedCount > 0 }

    /// On the main loop: runs the work `later` deferred.
    func runDeferred(id: Int) {
        deferred.removeValue(forKey: id)?()
    }

    func shutdown() {
        deferred.removeAll()
        loads.removeAll()
        fetcher.shutdown()
    }
}

/// A fetch that may not have started yet (a delayed retry): cancelling it before it starts
/// keeps it from starting.
private final class InFlightFetch: Sendable {
    private let state = LockedValue<(handle: FetchHandle?, cancelled: Bool)>((nil, false))

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    func started(_ handle: FetchHandle) {
        let cancelNow = state.withLock { state -> Bool in
            state.handle = handle
            return state.cancelled
        }
        if cancelNow { handle.cancel() }
    }

    func cancel() {
        let handle = state.withLock { state -> FetchHandle? in
            state.cancelled = true
            return state.handle
        }
        handle?.cancel()
    }
}
