import DataSources
import Dispatch
import JSONKit
import JSONRPC
import Basics

/// Performs GETs for the daemon: the command line supplies real HTTP (HTTPGet), tests and
/// fuzzers a fake. A completion runs once, on any thread, unless the fetch is cancelled.
public protocol HTTPFetching: Sendable {
    func fetch(_ request: RemoteRequest, completion: @escaping @Sendable (Result<RemoteResponse, FetchError>) -> Void) -> FetchHandle
    /// Stops every fetch in flight; called once, when the daemon ends.
    func shutdown()
}

/// Cancels one fetch in flight.
public struct FetchHandle: Sendable {
    private let action: @Sendable () -> Void
    public init(cancel action: @escaping @Sendable () -> Void) { self.action = action }
    public func cancel() { action() }
}

/// Loads for remote sources: each GET runs off the main loop (the fetcher's threads), is
/// decoded there, and comes back as a mailbox event, so sources only ever change on the
/// main loop.
final class HTTPLoader: RemoteLoading {
    private let fetcher: HTTPFetching
    private let mailbox: Mailbox<DaemonEvent>
    private var completions: [Int: (Result<DecodedResponse, FetchError>) -> Void] = [:]
    private var nextID = 0
    /// Sent with every request whose source sets none; `initialize` adds the client's name.
    var userAgent = DaemonInfo.userAgent(clientName: nil, clientVersion: nil)

    init(fetcher: HTTPFetching, mailbox: Mailbox<DaemonEvent>) {
        self.fetcher = fetcher
        self.mailbox = mailbox
    }

    func load(_ request: RemoteRequest, decode: @escaping @Sendable (RemoteResponse) -> Result<DecodedResponse, FetchError>,
              completion: @escaping (Result<DecodedResponse, FetchError>) -> Void) -> RemoteLoadCancellation {
        nextID += 1
        let id = nextID
        completions[id] = completion
        let mailbox = self.mailbox
        let fetcher = self.fetcher
        let inFlight = InFlightFetch()
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
        return RemoteLoadCancellation { [weak self] in
            self?.completions[id] = nil
            inFlight.cancel()
        }
    }

    /// On the main loop: hands a result to its source, unless the load was cancelled.
    func complete(id: Int, _ result: Result<DecodedResponse, FetchError>) {
        completions.removeValue(forKey: id)?(result)
    }

    func shutdown() {
        completions.removeAll()
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
