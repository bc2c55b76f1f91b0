import Basics
import DataSources
import HTTPGet

/// The HTTP client, made at the first fetch: its event loop is a thread, and setting it up
/// costs about a millisecond and a half of a daemon's start that most sessions (local
/// sources only) never need back. A daemon that fetched nothing has nothing to shut down.
final class LazyHTTPClient: HTTPFetching {
    private enum State {
        case notMade
        case made(HTTPGetClient)
        /// Shut down before any fetch.
        case shutDown
    }

    private let state = LockedValue(State.notMade)

    func fetch(_ request: RemoteRequest, completion: @escaping @Sendable (Result<RemoteResponse, FetchError>) -> Void) -> FetchHandle {
        let (client, justShutDown) = state.withLock { state -> (HTTPGetClient, Bool) in
            switch state {
            case .made(let client): return (client, false)
            case .notMade:
                let client = HTTPGetClient()
                state = .made(client)
                return (client, false)
            case .shutDown:
                // As a client shut down with no fetch made: it refuses, in its own words.
                let client = HTTPGetClient()
                state = .made(client)
                return (client, true)
            }
        }
        if justShutDown { client.shutdown() }
        return client.fetch(request, completion: completion)
    }

    func shutdown() {
        let made = state.withLock { state -> HTTPGetClient? in
            defer { state = .shutDown }
            if case .made(let client) = state { return client }
            return nil
        }
        made?.shutdown()
    }
}
