@testable import Daemon
import DataSources
import JSONRPC
import Basics
import Testing

/// The loader's side of the one cancel handle: a load cancelled on the main loop never
/// reaches its source, whatever its fetch reports afterwards.
@Suite struct HTTPLoaderTests {
    /// Fetches that complete only when the test says, and count their cancels.
    final class HeldFetcher: HTTPFetching {
        let held = LockedValue<[@Sendable (Result<RemoteResponse, FetchError>) -> Void]>([])
        let cancels = LockedValue(0)

        func fetch(_ request: RemoteRequest, completion: @escaping @Sendable (Result<RemoteResponse, FetchError>) -> Void) -> FetchHandle {
            held.withLock { $0.append(completion) }
            return FetchHandle { [self] in cancels.withLock { $0 += 1 } }
        }

        func shutdown() {}

        func complete(_ index: Int, status: Int) {
            let completion = held.withLock { $0[index] }
            completion(.success(RemoteResponse(url: "http://api.invalid/", status: status, contentType: nil, body: [])))
        }
    }

    /// The `.loaded` events posted so far, handed to the loader as the main loop would.
    func deliver(_ mailbox: Mailbox<DaemonEvent>, to loader: HTTPLoader) -> Int {
        var delivered = 0
        for case .loaded(let id, let result) in mailbox.takeAll(waitingAtMost: 10_000) {
            loader.complete(id: id, result)
            delivered += 1
        }
        return delivered
    }

    @Test func aCancelledLoadsLateResultIsDroppedAndTheOtherStillArrives() {
        let fetcher = HeldFetcher(), mailbox = Mailbox<DaemonEvent>()
        let loader = HTTPLoader(fetcher: fetcher, mailbox: mailbox)
        let request = RemoteRequest(url: "http://api.invalid/", headers: [], timeoutSeconds: 5, maximumBodySize: 1 << 20)
        let statuses = LockedValue<[Int]>([])
        let decode: @Sendable (RemoteResponse) -> Result<DecodedResponse, FetchError> = {
            .success(DecodedResponse(objects: [], document: nil, status: $0.status))
        }
        let cancelled = loader.load(request, decode: decode) { result in statuses.withLock { $0.append((try? result.get().status) ?? -1) } }
        let kept = loader.load(request, decode: decode) { result in statuses.withLock { $0.append((try? result.get().status) ?? -1) } }
        cancelled.cancel()
        #expect(cancelled.isCancelled && !kept.isCancelled)
        #expect(fetcher.cancels.withLock { $0 } == 1, "the cancel reaches the fetch")
        // The cancelled fetch's response won the race with the cancel.
        fetcher.complete(0, status: 200)
        #expect(deliver(mailbox, to: loader) == 1)
        fetcher.complete(1, status: 204)
        #expect(deliver(mailbox, to: loader) == 1)
        #expect(statuses.withLock { $0 } == [204])
    }
}
