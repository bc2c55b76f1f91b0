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
    var lastError: JSON?
    var lastURL: String?

    init(name: String, identity: Identity, configuration: RemoteConfiguration, loader: RemoteLoading) {
        self.configuration = configuration
        self.loader = loader
        super.init(name: name, identity: identity)
        setRows([])
    }

    var placeholders: PlaceholderStorageOptions { configuration.placeholders }

    func setRows(_ rows: [JSON], keptHead: Int = 0) {
        replaceLayout(Layout(sections: [rows], titles: [""]), keptHead: keptHead)
    }

    /// GETs the collection with `query` merged over the configured parameters, and hands
    /// the objects (with the decoded document, for page metadata) to `completion`.
    func request(extraQuery: [(name: String, value: String)] = [], completion: @escaping (Result<(objects: [JSON], document: JSON?), FetchError>) -> Void) {
        generation += 1
        let current = generation
        var query = configuration.queryParameters.filter { given in !extraQuery.contains { $0.name == given.name } }
        query += extraQuery
        let url = URLResolution.requestURL(baseURL: configuration.baseURL, apiPath: configuration.apiPath, query: query)
        lastURL = URLResolution.redacted(url)
        let request = RemoteRequest(url: url, headers: configuration.headers, timeoutSeconds: configuration.timeoutSeconds,
                                    maximumBodySize: configuration.maximumBodySize)
        let configuration = self.configuration
        let redactedURL = URLResolution.redacted(url)
        inFlight = loader.load(request, decode: { response in
            ResponseDecoding.decode(response, configuration: configuration, url: redactedURL)
        }, completion: { [weak self] result in
            guard let self, self.generation == current else { return }
            self.inFlight = nil
            completion(result.map { (objects: $0.objects, document: $0.document) })
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
        emit(.failedWithError(FetchError(kind: .cancelled, message: message, url: lastURL).json))
    }

    func record(_ error: FetchError) -> JSON {
        let json = error.json
        lastError = json
        return json
    }

    public override var state: [(String, JSON)] {
        var members = configuration.json.objectMembers ?? []
        if let lastURL { members.append(("lastURL", JSON(lastURL))) }
        if let lastError { members.append(("lastError", lastError)) }
        return members
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

    public init(name: String, identity: Identity, params: JSON, loader: RemoteLoading) throws(DataSourceError) {
        let configuration: RemoteConfiguration
        do { configuration = try RemoteConfiguration(params: params) } catch { throw DataSourceError(error) }
        super.init(name: name, identity: identity, configuration: configuration, loader: loader)
    }

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
                let json = self.record(error)
                self.setRows(self.objects.isEmpty && self.placeholders.contains(.errors) ? [Placeholder.errorRow(json)] : self.objects)
                self.emit(.failedWithError(json))
            }
        }
    }

    public override func cancelFetch() {
        guard isFetching else { return }
        abandonRequest()
        setRows(objects)
        endCycleAsCancelled("cancelled by cancelFetch")
    }
}
