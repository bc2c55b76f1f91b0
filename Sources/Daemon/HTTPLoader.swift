import DataSources
import HTTPGet
import JSONKit
import JSONRPC

/// Real HTTP for remote sources. Requests run on AsyncHTTPClient's threads; each result
/// comes back as a mailbox event, so sources only ever change on the main loop.
final class HTTPLoader: RemoteLoading {
    private let client = HTTPGetClient()
    private let mailbox: Mailbox<DaemonEvent>
    private var completions: [Int: (Result<DecodedResponse, FetchError>) -> Void] = [:]
    private var nextID = 0

    init(mailbox: Mailbox<DaemonEvent>) {
        self.mailbox = mailbox
    }

    func load(_ request: RemoteRequest, decode: @escaping @Sendable (RemoteResponse) -> Result<DecodedResponse, FetchError>,
              completion: @escaping (Result<DecodedResponse, FetchError>) -> Void) -> RemoteLoadCancellation {
        nextID += 1
        let id = nextID
        completions[id] = completion
        let mailbox = self.mailbox
        let url = URLResolution.redacted(request.url)
        let handle = client.get(HTTPGetRequest(url: request.url, headers: request.headers, timeoutSeconds: request.timeoutSeconds,
                                               maximumBodySize: request.maximumBodySize)) { result in
            // Decoded here, on AsyncHTTPClient's thread: the main loop only applies the rows.
            mailbox.post(.loaded(id: id, HTTPLoader.translate(result, url: url, limit: request.maximumBodySize).flatMap(decode)))
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
        client.shutdown()
    }

    private static func translate(_ result: Result<HTTPGetResponse, HTTPGetError>, url: String, limit: Int) -> Result<RemoteResponse, FetchError> {
        switch result {
        case .success(let response):
            return .success(RemoteResponse(url: url, status: response.status, contentType: response.contentType, body: response.body))
        case .failure(let error):
            let kind: FetchError.Kind
            switch error.kind {
            case .timeout: kind = .timeout
            case .tooLarge: kind = .tooLarge
            case .cancelled: kind = .cancelled
            case .transport, .invalidURL: kind = .transport
            }
            var failure = FetchError(kind: kind, message: error.message, url: url)
            if kind == .tooLarge { failure.maxBodyBytes = limit }
            return .failure(failure)
        }
    }
}
