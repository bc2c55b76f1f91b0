import Daemon
import DataSources
import Foundation
import Basics

/// GETs answered from a table, on another thread, as real HTTP completes: for in-process
/// daemons in tests. An unknown URL fails as a refused connection would.
final class ScriptedFetcher: HTTPFetching {
    private let responses: LockedValue<[String: Result<RemoteResponse, FetchError>]>
    private let requests = LockedValue<[String]>([])

    init(_ responses: [String: Result<RemoteResponse, FetchError>] = [:]) {
        self.responses = LockedValue(responses)
    }

    /// The URLs asked for, in order.
    var requested: [String] { requests.withLock { $0 } }

    func fetch(_ request: RemoteRequest, completion: @escaping @Sendable (Result<RemoteResponse, FetchError>) -> Void) -> FetchHandle {
        requests.withLock { $0.append(request.url) }
        let result =
            responses.withLock { $0[request.url] }
            ?? .failure(FetchError(kind: .transport, message: "connection refused (scripted)", url: request.url))
        Thread.detachNewThread { completion(result) }
        return FetchHandle {}
    }

    func shutdown() {}
}
