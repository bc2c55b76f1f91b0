import Daemon
import DataSources
import Synchronization

/// HTTP that answers only when the session says so, with one of a few canned responses:
/// the fuzz input decides the order of completions, so a run is repeatable.
final class CannedFetcher: HTTPFetching {
    struct Pending {
        let serial: Int
        let request: RemoteRequest
        let completion: @Sendable (Result<RemoteResponse, FetchError>) -> Void
    }

    private struct State {
        var pending: [Pending] = []
        var nextSerial = 0
        var fetched = 0
    }

    private let state = Mutex(State())

    var pendingCount: Int { state.withLock { $0.pending.count } }
    var fetchCount: Int { state.withLock { $0.fetched } }

    func fetch(_ request: RemoteRequest, completion: @escaping @Sendable (Result<RemoteResponse, FetchError>) -> Void) -> FetchHandle {
        let serial = state.withLock { state in
            state.nextSerial += 1
            state.fetched += 1
            state.pending.append(Pending(serial: state.nextSerial, request: request, completion: completion))
            return state.nextSerial
        }
        return FetchHandle { [self] in state.withLock { $0.pending.removeAll { $0.serial == serial } } }
    }

    func shutdown() {
        state.withLock { $0.pending.removeAll() }
    }

    /// Completes the `index`th fetch in flight (modulo their number) with `response`.
    func complete(_ index: Int, with response: (RemoteRequest) -> Result<RemoteResponse, FetchError>) {
        let taken: Pending? = state.withLock { state in
            guard !state.pending.isEmpty else { return nil }
            return state.pending.remove(at: index % state.pending.count)
        }
        guard let taken else { return }
        taken.completion(response(taken.request))
    }

    /// The bodies a server might send: pages, empty and odd rows, broken and hostile JSON,
    /// errors; `raw` is a body taken from the fuzz input.
    static func response(_ choice: Int, raw: [UInt8], for request: RemoteRequest) -> Result<RemoteResponse, FetchError> {
        func ok(_ body: String, status: Int = 200, type: String? = "application/json") -> Result<RemoteResponse, FetchError> {
            .success(RemoteResponse(url: request.url, status: status, contentType: type, body: Array(body.utf8)))
        }
        switch choice % 14 {
        case 0: return ok(#"[{"id":1,"name":"a","group":"x"},{"id":2,"name":"b","group":"y"}]"#)
        case 1:
            return ok(
                #"{"items":[{"id":3,"group":"x"},{"id":4}],"meta":{"page":1,"page_size":2,"number_of_pages":3,"total_count":6},"page":1,"number_of_pages":3}"#
            )
        case 2: return ok(#"{"items":[{"id":5},{"id":5},null,7,"s"],"page":2,"number_of_pages":2,"total_count":-4}"#)
        case 3: return ok("[]")
        case 4: return ok(#"{"items": [{"id": 1}"#)
        case 5: return ok(#"{"error":{"message":"boom"},"detail":"server text"}"#, status: 500)
        case 6: return .failure(FetchError(kind: .transport, message: "connection refused (canned)", url: request.url))
        case 7: return .failure(FetchError(kind: .timeout, message: "timed out (canned)", url: request.url))
        case 8: return ok(String(repeating: "[", count: 3000) + String(repeating: "]", count: 3000))
        case 9: return ok("<html>not json</html>", type: "text/html")
        case 10: return ok(#"{"items":[{"id":18446744073709551616}],"x":1e400}"#)
        case 11: return ok(#"{"items":{"id":1},"page":"9223372036854775807","number_of_pages":9223372036854775807}"#)
        case 12: return ok("", status: 204, type: nil)
        default: return .success(RemoteResponse(url: request.url, status: 200, contentType: "application/json", body: raw))
        }
    }
}
