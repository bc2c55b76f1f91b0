import Basics
import JSONKit

/// One GET as a remote source asks for it.
public struct RemoteRequest: Sendable {
    public let url: String
    /// The daemon adds `User-Agent` unless the source sets one.
    public var headers: [(name: String, value: String)]
    public let timeoutSeconds: Double
    public let maximumBodySize: Int
    /// Wait this long before sending (a retry after `Retry-After`).
    public var delaySeconds: Double = 0
    /// The source's `remoteConfiguration.tls`, for HTTPS.
    public var tls: TLSFiles?
    /// `remoteConfiguration.compression`: ask for gzip and deflate.
    public var compression = true
    /// `remoteConfiguration.proxy`.
    public var proxy: ProxySetting = .environment

    public init(url: String, headers: [(name: String, value: String)], timeoutSeconds: Double, maximumBodySize: Int, delaySeconds: Double = 0) {
        self.url = url
        self.headers = headers
        self.timeoutSeconds = timeoutSeconds
        self.maximumBodySize = maximumBodySize
        self.delaySeconds = delaySeconds
    }
}

/// Stops a load; after it, the load's completion is never called.
public struct RemoteLoadCancellation {
    private let action: () -> Void
    public init(_ action: @escaping () -> Void) { self.action = action }
    public func cancel() { action() }
}

/// The rows a response holds, and the document they came from (for page metadata).
public struct DecodedResponse: Sendable {
    public let objects: [JSON]
    /// Without the list the objects came from (page metadata, next cursors and links stay).
    public let document: JSON?
    public let status: Int
    public let headers: [(name: String, value: String)]
    public let finalURL: String?

    public init(objects: [JSON], document: JSON?, status: Int = 200, headers: [(name: String, value: String)] = [], finalURL: String? = nil) {
        self.objects = objects
        self.document = document
        self.status = status
        self.headers = headers
        self.finalURL = finalURL
    }

    public func headerValues(_ name: String) -> [String] {
        headers.values(ofHeader: name)
    }

    /// A `304 Not Modified` to a conditional request: the rows held are current.
    public var isNotModified: Bool { status == 304 }
}

/// Performs GETs for remote sources: the daemon's is real HTTP whose completions come
/// back through its mailbox.
public protocol RemoteLoading: AnyObject {
    /// Starts `request`. `decode` runs off the sources' thread as soon as a response is in
    /// (parsing and mapping are the costly part); `completion` is called once, later, on the
    /// thread that owns the sources, unless the load is cancelled first. Transport failures
    /// carry a kind among `timeout`, `transport`, `tooLarge` and `cancelled`.
    func load(_ request: RemoteRequest, decode: @escaping @Sendable (RemoteResponse) -> Result<DecodedResponse, FetchError>,
              completion: @escaping (Result<DecodedResponse, FetchError>) -> Void) -> RemoteLoadCancellation
}
