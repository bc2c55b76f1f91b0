import DataSources
import JSONKit
import JSONRPC

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
    func cancel() { action() }
}

/// Loads for remote sources: each GET runs off the main loop (the fetcher's threads), is
/// decoded there, and comes back as a mailbox event, so sources only ever change on the
/// main loop.
final class HTTPLoader: RemoteLoading {
    private let fetcher: HTTPFetching
    private let mailbox: Mailbox<DaemonEvent>
    private var completions: [Int: (Result<DecodedResponse, FetchError>) -> Void] = [:]
    private var nextID = 0

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
        let handle = fetcher.fetch(request) { result in
            // Decoded here, off the main loop: the main loop only applies the rows.
            mailbox.post(.loaded(id: id, result.flatMap(decode)))
        }
        return RemoteLoadCancellation { [weak self] in
            self?.completions[id] = nil
            handle.cancel()
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
