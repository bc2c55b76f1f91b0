/// One GET as a remote source asks for it.
public struct RemoteRequest: Sendable {
    public let url: String
    public let headers: [(name: String, value: String)]
    public let timeoutSeconds: Double
    public let maximumBodySize: Int
}

/// Stops a load; after it, the load's completion is never called.
public struct RemoteLoadCancellation {
    private let action: () -> Void
    public init(_ action: @escaping () -> Void) { self.action = action }
    public func cancel() { action() }
}

/// Performs GETs for remote sources: the daemon's is real HTTP whose completions come
/// back through its mailbox.
public protocol RemoteLoading: AnyObject {
    /// Starts `request`. `completion` is called once, later, on the thread that owns the
    /// sources, unless the load is cancelled first. Failures carry a kind among `timeout`,
    /// `transport`, `tooLarge` and `cancelled`; the source judges status and body itself.
    func load(_ request: RemoteRequest, completion: @escaping (Result<RemoteResponse, FetchError>) -> Void) -> RemoteLoadCancellation
}
