import Basics
import JSONKit
import Synchronization

/// One request as a remote source asks for it: a GET, or a POST with a JSON body.
package struct RemoteRequest: Sendable {
    package let url: String
    /// `GET` or `POST` (`request.method`, or a GraphQL source's `POST`).
    package var method: HTTPMethod = .get
    /// The JSON body of a POST, encoded, page values in place; sent as `application/json`.
    package var body: [UInt8]?
    /// The daemon adds `User-Agent` unless the source sets one.
    package var headers: [(name: String, value: String)]
    package let timeoutSeconds: Double
    package let maximumBodySize: Int
    /// Wait this long before sending (a retry after `Retry-After`).
    package var delaySeconds: Double = 0
    /// The source's `remoteConfiguration.tls`, for HTTPS.
    package var tls: TLSFiles?
    /// `remoteConfiguration.compression`: ask for gzip and deflate.
    package var compression = true
    /// `remoteConfiguration.proxy`.
    package var proxy: ProxySetting = .environment
    /// Header values that are secret whatever their header's name (read from the environment
    /// or a file, Basic credentials): a recording scrubs them everywhere.
    package var secretValues: [String] = []
    /// Lower-cased names of headers sent to this URL's origin only: a redirect to another
    /// origin drops them (and every header `RemoteConfiguration.isSecretHeader` names).
    package var originBoundHeaders: Set<String> = []

    package init(
        url: String, headers: [(name: String, value: String)], timeoutSeconds: Double, maximumBodySize: Int, delaySeconds: Double = 0
    ) {
        self.url = url
        self.headers = headers
        self.timeoutSeconds = timeoutSeconds
        self.maximumBodySize = maximumBodySize
        self.delaySeconds = delaySeconds
    }
}

/// Cancels one fetch or load in flight: the one handle of an HTTP exchange, whether the
/// model holds it (`RemoteLoading`), the daemon's loader (`HTTPFetching`) or HTTPGet's
/// exchange. Cancelling may come from any thread; `isCancelled` lets a completion that
/// raced the cancel be dropped by whoever delivers it.
package final class FetchHandle: Sendable {
    private let action: @Sendable () -> Void
    private let cancelled = Atomic(false)

    package init(cancel action: @escaping @Sendable () -> Void = {}) { self.action = action }

    package func cancel() {
        cancelled.store(true, ordering: .releasing)
        action()
    }

    package var isCancelled: Bool { cancelled.load(ordering: .acquiring) }
}

/// The decoded page: the model's type after decoding, not a copy of the response. It holds
/// the rows and the document's metadata, and keeps of the response only its head (status,
/// headers, final URL) for validators, links and rate limits: the body is dropped once
/// decoded, so a page waiting in the mailbox holds its rows and not its bytes twice.
package struct DecodedResponse: Sendable {
    package let objects: [JSON]
    /// Without the list the objects came from (page metadata, next cursors and links stay).
    package let document: JSON?
    package let status: Int
    package let headers: [(name: String, value: String)]
    package let finalURL: String?
    /// What the headers said of the rate limit, read when the response arrived.
    package let rateLimit: RateLimitStatus?
    /// The objects' identity hashes, worked out where the response was decoded (off the main
    /// loop) when the source's identity was known there; nil otherwise.
    package private(set) var objectHashes: [Int]?
    /// What went wrong beside the rows: a GraphQL response's `errors` next to its data
    /// (kind `graphql`); `describeSource.lastWarning` shows it.
    package var warning: FetchError?

    package init(
        objects: [JSON], document: JSON?, status: Int = 200, headers: [(name: String, value: String)] = [], finalURL: String? = nil
    ) {
        self.objects = objects
        self.document = document
        self.status = status
        self.headers = headers
        self.finalURL = finalURL
        rateLimit = headers.isEmpty ? nil : RateLimitStatus.read(from: headers, now: WallClock.secondsSince1970())
    }

    private init(_ response: DecodedResponse, document: JSON?) {
        objects = response.objects
        self.document = document
        status = response.status
        headers = response.headers
        finalURL = response.finalURL
        rateLimit = response.rateLimit
        objectHashes = response.objectHashes
        warning = response.warning
    }

    /// The same response with `document` as the page metadata's source.
    func replacingDocument(_ document: JSON?) -> DecodedResponse { DecodedResponse(self, document: document) }

    /// The same response with its objects' identity hashes.
    func hashed(by identity: Identity) -> DecodedResponse {
        var hashed = self
        hashed.objectHashes = identity.hashes(of: objects)
        return hashed
    }

    /// `objectHashes` when they were worked out, else the objects hashed now.
    func hashes(by identity: Identity) -> [Int] { objectHashes ?? identity.hashes(of: objects) }

    package func headerValues(_ name: String) -> [String] {
        headers.values(ofHeader: name)
    }

    /// A `304 Not Modified` to a conditional request: the rows held are current.
    package var isNotModified: Bool { status == 304 }
}

/// Performs GETs for remote sources: the daemon's is real HTTP whose completions come
/// back through its mailbox.
package protocol RemoteLoading: AnyObject {
    /// Starts `request`. `decode` runs off the sources' thread as soon as a response is in
    /// (parsing and mapping are the costly part); `completion` is called once, later, on the
    /// thread that owns the sources, unless the load is cancelled first. Transport failures
    /// carry a kind among `timeout`, `transport`, `tooLarge` and `cancelled`.
    func load(
        _ request: RemoteRequest, decode: @escaping @Sendable (RemoteResponse) -> Result<DecodedResponse, FetchError>,
        completion: @escaping (Result<DecodedResponse, FetchError>) -> Void
    ) -> FetchHandle
    /// Runs `work` later on the sources' thread, after the events already waiting (the
    /// requests read so far): long work done in turns lets requests in between. False when
    /// this loader cannot (the caller then does the work at once).
    func later(_ work: @escaping () -> Void) -> Bool
    /// Whether events wait to be handled on the sources' thread (a request read meanwhile):
    /// work done in turns ends its turn early then.
    var eventsWaiting: Bool { get }
}

extension RemoteLoading {
    /// A loader without a queue of its own does the work at once.
    package func later(_ work: @escaping () -> Void) -> Bool { false }
    package var eventsWaiting: Bool { false }
}

/// Performs GETs for the daemon: the command line supplies real HTTP (HTTPGet's client),
/// a recording wraps it, tests and fuzzers a fake. A completion runs once, on any thread;
/// after a cancel it may still come (HTTPGet's says `cancelled`), or not at all.
package protocol HTTPFetching: Sendable {
    func fetch(_ request: RemoteRequest, completion: @escaping @Sendable (Result<RemoteResponse, FetchError>) -> Void) -> FetchHandle
    /// Stops every fetch in flight; called once, when the daemon ends.
    func shutdown()
}
