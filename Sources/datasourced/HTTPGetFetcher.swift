import Daemon
import DataSources
import HTTPGet

/// The daemon's GETs over real HTTP (AsyncHTTPClient, through HTTPGet), with HTTPGet's
/// failures translated into the fetch errors clients see.
final class HTTPGetFetcher: HTTPFetching {
    private let client = HTTPGetClient()

    func fetch(_ request: RemoteRequest, completion: @escaping @Sendable (Result<RemoteResponse, FetchError>) -> Void) -> FetchHandle {
        let url = URLResolution.redacted(request.url)
        let limit = request.maximumBodySize
        var get = HTTPGetRequest(url: request.url, headers: request.headers, timeoutSeconds: request.timeoutSeconds,
                                 maximumBodySize: request.maximumBodySize)
        get.tls = request.tls.map { HTTPGetTLS(caFile: $0.caFile, certificateFile: $0.certificateFile, keyFile: $0.keyFile) }
        get.acceptsCompression = request.compression
        switch request.proxy {
        case .environment: get.proxy = .environment
        case .direct: get.proxy = .direct
        case .url(let url): get.proxy = .url(url)
        }
        let handle = client.get(get) { result in
            completion(Self.translate(result, request: request, url: url, limit: limit))
        }
        return FetchHandle { handle.cancel() }
    }

    func shutdown() {
        client.shutdown()
    }

    private static func translate(_ result: Result<HTTPGetResponse, HTTPGetError>, request: RemoteRequest, url: String,
                                  limit: Int) -> Result<RemoteResponse, FetchError> {
        switch result {
        case .success(let response):
            let finalURL = response.finalURL == request.url ? nil : URLResolution.redacted(response.finalURL)
            return .success(RemoteResponse(url: url, finalURL: finalURL, status: response.status, headers: response.headers, body: response.body))
        case .failure(let error):
            let kind: FetchError.Kind
            switch error.kind {
            case .timeout: kind = .timeout
            case .tooLarge: kind = .tooLarge
            case .cancelled: kind = .cancelled
            case .transport, .invalidURL: kind = .transport
            case .tls: kind = .tls
            case .proxy: kind = .proxy
            case .decode: kind = .decode
            }
            var failure = FetchError(kind: kind, message: error.message, url: url)
            if kind == .tooLarge { failure.maxBodyBytes = limit }
            return .failure(failure)
        }
    }
}
