import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// One GET: where, with which headers, and the limits it must stay within.
public struct HTTPGetRequest: Sendable {
    public var url: String
    public var headers: [(name: String, value: String)]
    /// For the whole exchange, redirects and body included.
    public var timeoutSeconds: Double
    public var maximumBodySize: Int
    /// Redirects followed before giving up (`tooManyRedirects`).
    public var maximumRedirects: Int

    public init(url: String, headers: [(name: String, value: String)], timeoutSeconds: Double, maximumBodySize: Int,
                maximumRedirects: Int = HTTPGetClient.defaultMaximumRedirects) {
        self.url = url
        self.headers = headers
        self.timeoutSeconds = timeoutSeconds
        self.maximumBodySize = maximumBodySize
        self.maximumRedirects = maximumRedirects
    }
}

public struct HTTPGetResponse: Sendable {
    public let status: Int
    /// In the order received; names as the server wrote them.
    public let headers: [(name: String, value: String)]
    public let body: [UInt8]
    /// The URL that answered: the request's, or the last redirect's target.
    public let finalURL: String

    /// The first value of a header (names compare case-insensitively).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// Why a GET produced no response. Messages never include header values.
public struct HTTPGetError: Error, Sendable {
    public enum Kind: String, Sendable { case timeout, transport, tooLarge, cancelled, invalidURL }
    public let kind: Kind
    public let message: String
}

/// Cancels a GET in flight; its completion then reports `cancelled`.
public struct HTTPGetHandle: Sendable {
    fileprivate let task: Task<Void, Never>
    public func cancel() { task.cancel() }
}

/// GET over HTTP(S), for callers that are not async: each request runs in a task and
/// reports through a completion called exactly once, on an arbitrary thread.
///
/// Redirects are followed here rather than by AsyncHTTPClient, so that credentials are
/// dropped when one leaves the origin, and the final URL is known. A connection that cannot
/// be made fails at once (no retries until the deadline): a closed port or an unknown host
/// is reported in milliseconds, not after the timeout.
public final class HTTPGetClient: Sendable {
    public static let defaultMaximumRedirects = 5
    /// The longest exchange accepted; longer requests are clamped to it (callers validate theirs).
    static let maximumTimeoutSeconds = 86_400.0
    /// Headers that carry credentials: never sent to another origin after a redirect.
    static let credentialHeaders: Set = ["authorization", "proxy-authorization", "cookie"]

    private let client: HTTPClient

    public init() {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.connectionPool.retryConnectionEstablishment = false
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    public func shutdown() {
        try? client.syncShutdown()
    }

    public func get(_ request: HTTPGetRequest, completion: @escaping @Sendable (Result<HTTPGetResponse, HTTPGetError>) -> Void) -> HTTPGetHandle {
        let client = self.client
        return HTTPGetHandle(task: Task {
            completion(await Self.run(request, on: client))
        })
    }

    private static func run(_ request: HTTPGetRequest, on client: HTTPClient) async -> Result<HTTPGetResponse, HTTPGetError> {
        if let problem = urlProblem(request.url) { return .failure(HTTPGetError(kind: .invalidURL, message: "invalid URL: \(problem)")) }
        // Clamped before converting: a huge or non-finite number of seconds must not trap.
        let seconds = request.timeoutSeconds.isFinite ? min(max(request.timeoutSeconds, 0.001), maximumTimeoutSeconds) : maximumTimeoutSeconds
        let timeout = TimeAmount.nanoseconds(Int64(seconds * 1_000_000_000))
        // The whole exchange, body included, runs against one timer on the event loop, which
        // is cancelled (and freed) as soon as the exchange ends. (A Task.sleep raced against
        // it held ~0.8 KB per request until its deadline passed, cancelled or not.)
        let exchange = Task { try await following(request, on: client, deadline: .now() + timeout) }
        let timedOut = Mutex(false)
        let timer = client.eventLoopGroup.any().scheduleTask(in: timeout) {
            timedOut.withLock { $0 = true }
            exchange.cancel()
        }
        defer { timer.cancel() }
        do {
            return .success(try await withTaskCancellationHandler(operation: { try await exchange.value },
                                                                  onCancel: { exchange.cancel() }))
        } catch let error as HTTPGetError {
            return .failure(error)
        } catch {
            if timedOut.withLock({ $0 }) {
                return .failure(HTTPGetError(kind: .timeout, message: "no complete response within \(format(request.timeoutSeconds)) s"))
            }
            if Task.isCancelled || error is CancellationError {
                return .failure(HTTPGetError(kind: .cancelled, message: "cancelled"))
            }
            return .failure(classify(error, url: request.url, timeoutSeconds: request.timeoutSeconds))
        }
    }

    /// The exchange, following redirects for GET.
    private static func following(_ request: HTTPGetRequest, on client: HTTPClient, deadline: NIODeadline) async throws -> HTTPGetResponse {
        var url = request.url
        var headers = request.headers
        var redirects = 0
        while true {
            let response = try await exchange(url: url, headers: headers, limit: request.maximumBodySize, on: client, deadline: deadline)
            guard [301, 302, 303, 307, 308].contains(response.status), let location = response.header("location") else { return response }
            guard redirects < request.maximumRedirects else {
                throw HTTPGetError(kind: .transport, message: "more than \(request.maximumRedirects) redirects (last to \(redacted(location)))")
            }
            guard let next = URL(string: location, relativeTo: URL(string: url))?.absoluteString, urlProblem(next) == nil else {
                throw HTTPGetError(kind: .transport, message: "a redirect to an unusable URL: \(redacted(location))")
            }
            if origin(of: next) != origin(of: url) {
                headers.removeAll { credentialHeaders.contains($0.name.lowercased()) }
            }
            url = next
            redirects += 1
        }
    }

    private static func exchange(url: String, headers: [(name: String, value: String)], limit: Int, on client: HTTPClient,
                                 deadline: NIODeadline) async throws -> HTTPGetResponse {
        var outgoing = HTTPClientRequest(url: url)
        outgoing.method = .GET
        for (name, value) in headers { outgoing.headers.replaceOrAdd(name: name, value: value) }
        let response = try await client.execute(outgoing, deadline: deadline)
        let announced = response.headers.first(name: "content-length").flatMap(Int.init)
        if let announced, announced > limit {
            throw HTTPGetError(kind: .tooLarge, message: "the response announces \(announced) bytes, over the limit of \(limit) bytes")
        }
        var body: [UInt8] = []
        // One allocation of the announced size: growing by doubling copies the body a few
        // times, and freeing each outgrown buffer of 64 KB or more makes malloc consolidate
        // its free lists (a few percent of a page's cost).
        if let announced, announced > 0 { body.reserveCapacity(announced) }
        for try await chunk in response.body {
            guard chunk.readableBytes <= limit - body.count else {
                throw HTTPGetError(kind: .tooLarge, message: "the response body exceeds the limit of \(limit) bytes")
            }
            body.append(contentsOf: chunk.readableBytesView)
        }
        return HTTPGetResponse(status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) }, body: body,
                               finalURL: url)
    }

    /// What AsyncHTTPClient would trap on or refuse late: no host, a port outside 1...65535.
    static func urlProblem(_ text: String) -> String? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return "not an http or https URL"
        }
        guard let host = url.host, !host.isEmpty else { return "no host" }
        if let port = url.port, !(1...65535).contains(port) { return "port \(port) is not in 1...65535" }
        return nil
    }

    /// Scheme, host and port: where credentials may go.
    static func origin(of text: String) -> String {
        guard let url = URL(string: text) else { return text }
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }

    /// A URL without `user:password@`, for messages.
    static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.user != nil || components.password != nil else { return text }
        components.user = nil
        components.password = nil
        return components.string ?? text
    }

    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() && seconds < 1e15 ? String(Int(seconds)) : String(seconds)
    }

    private static func classify(_ error: Error, url: String, timeoutSeconds: Double) -> HTTPGetError {
        let target = URL(string: url).map { "\($0.host ?? "?")\($0.port.map { ":\($0)" } ?? "")" } ?? "the server"
        if let client = error as? HTTPClientError {
            switch client {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout:
                return HTTPGetError(kind: .timeout, message: "no complete response within \(format(timeoutSeconds)) s")
            case .invalidURL, .emptyScheme, .emptyHost:
                return HTTPGetError(kind: .invalidURL, message: "invalid URL: \(client)")
            case .cancelled:
                return HTTPGetError(kind: .cancelled, message: "cancelled")
            case .remoteConnectionClosed:
                return HTTPGetError(kind: .transport, message: "\(target) closed the connection before the response was complete")
            default:
                break
            }
        }
        let text = "\(error)"
        if text.contains("Connection refused") || text.contains("connectionRefused") {
            return HTTPGetError(kind: .transport, message: "could not connect to \(target): connection refused")
        }
        if text.contains("connection reset") || text.contains("Connection reset") {
            return HTTPGetError(kind: .transport, message: "\(target) reset the connection")
        }
        if text.contains("dns") || text.contains("DNS") || text.contains("unknown host") || text.contains("SocketAddressError") {
            return HTTPGetError(kind: .transport, message: "could not resolve the host of \(redacted(url))")
        }
        return HTTPGetError(kind: .transport, message: "\(text.prefix(300))")
    }
}
