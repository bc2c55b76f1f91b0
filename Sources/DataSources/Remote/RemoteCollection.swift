import JSONKit

/// What remote and paginated sources share: Instant Cocoa's collection fetcher. One
/// request at a time; each carries a generation number, and a completion whose
/// generation is no longer current (cancelled or superseded) is dropped unseen.
public class RemoteCollection: DataSource {
    public let configuration: RemoteConfiguration
    private let loader: RemoteLoading
    private var inFlight: RemoteLoadCancellation?
    private var generation = 0
    /// The data rows loaded so far, placeholders excluded.
    var objects: [JSON] = []
    var lastError: FetchError?
    var lastURL: String?
    /// The error placeholder row for a failure: `{"$placeholder": "error", "error": ...}`,
    /// with the error as the wire shows it (the daemon supplies the encoding).
    private let errorRow: (FetchError) -> JSON

    init(name: String, identity: Identity, configuration: RemoteConfiguration, loader: RemoteLoading,
         errorRow: @escaping (FetchError) -> JSON) {
        self.configuration = configuration
        self.loader = loader
        self.errorRow = errorRow
        super.init(name: name, identity: identity)
        setRows([])
    }

    var placeholders: PlaceholderStorageOptions { configuration.placeholders }

    func setRows(_ rows: [JSON]) {
        replaceLayout(Layout(sections: [rows], titles: [""]))
    }

    /// Keeps the first `head` rows (the caller knows they are unchanged) and replaces the
    /// rest with `tail`, without copying or comparing the rows kept.
    func setRows(keeping head: Int, tail: [JSON]) {
        replaceTail(from: head, with: tail)
    }

    /// What to GET: the configured collection with `query` merged over the configured
    /// parameters, or a URL the server gave (a next link), which keeps its own parameters and
    /// gains the configured ones it lacks.
    enum RequestTarget {
        case collection(query: [(name: String, value: String)])
        case url(String)
    }

    /// The URL a target stands for.
    func url(of target: RequestTarget) -> String {
        switch target {
        case .collection(let extraQuery):
            var query = configuration.queryParameters.filter { given in !extraQuery.contains { $0.name == given.name } }
            query += extraQuery
            return URLResolution.requestURL(baseURL: configuration.baseURL, apiPath: configuration.apiPath, query: query)
        case .url(let url):
            return URLResolution.addingMissingQuery(configuration.queryParameters, to: url)
        }
    }

    /// GETs `target` (after `delaySeconds`), and hands the decoded response to `completion`.
    func request(_ target: RequestTarget = .collection(query: []), delaySeconds: Double = 0,
                 completion: @escaping (Result<DecodedResponse, FetchError>) -> Void) {
        generation += 1
        let current = generation
        let url = url(of: target)
        lastURL = URLResolution.redacted(url)
        let request = RemoteRequest(url: url, headers: configuration.headers, timeoutSeconds: configuration.timeoutSeconds,
                                    maximumBodySize: configuration.maximumBodySize, delaySeconds: delaySeconds)
        let configuration = self.configuration
        let redactedURL = URLResolution.redacted(url)
        inFlight = loader.load(request, decode: { response in
            ResponseDecoding.decode(response, configuration: configuration, url: redactedURL)
        }, completion: { [weak self] result in
            guard let self, self.generation == current else { return }
            self.inFlight = nil
            completion(result)
        })
    }

    /// Drops the request in flight: its completion, if it ever comes, changes nothing.
    func abandonRequest() {
        generation += 1
        inFlight?.cancel()
        inFlight = nil
    }

    /// Ends a cycle in flight as cancelled (the seed's contract: one final event per fetch).
    func endCycleAsCancelled(_ message: String) {
        abandonRequest()
        emit(.failedWithError(.cancelled(message, url: lastURL)))
    }

    func errorRow(for error: FetchError) -> JSON { errorRow(error) }

    var remoteState: SourceDescription.RemoteState {
        SourceDescription.RemoteState(configuration: configuration, lastURL: lastURL, lastError: lastError)
    }
}

/// Instant Cocoa's `ICRemoteDataSource`: one GET of a collection.
///
/// While a fetch is in flight the rows are the loading placeholder (if stored). On
/// success they are the mapped objects, or the no-results placeholder (if stored) when
/// there are none. On failure or cancellation the objects loaded before come back; with
/// none, the error placeholder (if stored, and not for a cancellation).
public final class RemoteDataSource: RemoteCollection {
    public override var kind: String { "remote" }

    public override init(name: String, identity: Identity, configuration: RemoteConfiguration, loader: RemoteLoading,
                         errorRow: @escaping (FetchError) -> JSON) {
        super.init(name: name, identity: identity, configuration: configuration, loader: loader, errorRow: errorRow)
    }

    public override var kindState: SourceDescription.KindState { .remote(remoteState) }

    public override func fetchData() {
        if isFetching { endCycleAsCancelled("superseded by a new fetchData") }
        emit(.willLoadData)
        if placeholders.contains(.loading) { setRows([Placeholder.loadingRow]) }
        request { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let loaded):
                self.objects = loaded.objects
                self.lastError = nil
                self.setRows(loaded.objects.isEmpty && self.placeholders.contains(.noResults) ? [Placeholder.noResultsRow] : loaded.objects)
                self.emit(.finishedLoading)
            case .failure(let error):
                self.lastError = error
                self.setRows(self.objects.isEmpty && self.placeholders.contains(.errors) ? [self.errorRow(for: error)] : self.objects)
                self.emit(.failedWithError(.fetch(error)))
            }
        }
    }

    public override func cancelFetch(reason: CancelReason = .cancelFetch) {
        guard isFetching else { return }
        abandonRequest()
        setRows(objects)
        endCycleAsCancelled(reason.message)
    }
}
