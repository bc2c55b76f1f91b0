import DataSources

/// An `HTTPFetching` that hands every request to the one it wraps and tells the recorder
/// what was asked, what came back, and what the daemon cancelled.
final class RecordingFetcher: HTTPFetching {
    private let wrapped: HTTPFetching
    private let recorder: SessionRecorder

    init(wrapping wrapped: HTTPFetching, recorder: SessionRecorder) {
        self.wrapped = wrapped
        self.recorder = recorder
    }

    func fetch(_ request: RemoteRequest, completion: @escaping @Sendable (Result<RemoteResponse, FetchError>) -> Void) -> FetchHandle {
        let number = recorder.exchangeStarted(request)
        let recorder = self.recorder
        let handle = wrapped.fetch(request) { result in
            recorder.exchangeCompleted(number, result) { completion(result) }
        }
        return FetchHandle {
            recorder.exchangeCancelled(number)
            handle.cancel()
        }
    }

    func shutdown() {
        wrapped.shutdown()
    }
}
