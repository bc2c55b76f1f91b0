import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// One GET: where, with which headers, and the limits it must stay within.
public struct HTTPGetRequest: Sendable {
    public var url: String
    public var headers: [(name: String, value: String)]
    /// For the whole exchange, body included.
    public var timeoutSeconds: Double
    public var maximumBodySize: Int

    public init(url: String, headers: [(name: String, value: String)], timeoutSeconds: Double, maximumBodySize: Int) {
        self.url = url
        self.headers = headers
        self.timeoutSeconds = timeoutSeconds
        self.maximumBodySize = maximumBodySize
    }
}

public struct HTTPGetResponse: Sendable {
    public let status: Int
    public let contentType: String?
    public let body: [UInt8]
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
public final class HTTPGetClient: Sendable {
    private let client: HTTPClient

    public init() {
        client = HTTPClient(eventLoopGroupProvider: .singleton,
                            configuration: HTTPClient.Configuration(redirectConfiguration: .follow(max: 5, allowCycles: false)))
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

    /// The longest exchange accepted; longer requests are clamped to it (callers validate theirs).
    static let maximumTimeoutSeconds = 86_400.0

    private static func run(_ request: HTTPGetRequest, on client: HTTPClient) async -> Result<HTTPGetResponse, HTTPGetError> {
        if let problem = urlProblem(request.url) { return .failure(HTTPGetError(kind: .invalidURL, message: "invalid URL: \(problem)")) }
        // Clamped before converting: a huge or non-finite number of seconds must not trap.
        let seconds = request.timeoutSeconds.isFinite ? min(max(request.timeoutSeconds, 0.001), maximumTimeoutSeconds) : maximumTimeoutSeconds
        let timeout = TimeAmount.nanoseconds(Int64(seconds * 1_000_000_000))
        do {
            // Racing the exchange against the clock bounds the body too, not only the head.
            return .success(try await withThrowingTaskGroup(of: HTTPGetResponse?.self) { group in
                group.addTask { try await exchange(request, on: client, deadline: .now() + timeout) }
                group.addTask {
                    try await Task.sleep(nanoseconds: UInt64(timeout.nanoseconds))
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let response = first else {
                    throw HTTPGetError(kind: .timeout, message: "no complete response within \(request.timeoutSeconds) s")
                }
                return response
            })
        } catch let error as HTTPGetError {
            return .failure(error)
        } catch {
            if Task.isCancelled || error is CancellationError {
                return .failure(HTTPGetError(kind: .cancelled, message: "cancelled"))
            }
            return .failure(classify(error, timeoutSeconds: request.timeoutSeconds))
        }
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

    private static func exchange(_ request: HTTPGetRequest, on client: HTTPClient, deadline: NIODeadline) async throws -> HTTPGetResponse {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = .GET
        for (name, value) in request.headers { outgoing.headers.replaceOrAdd(name: name, value: value) }
        let response = try await client.execute(outgoing, deadline: deadline)
        let limit = request.maximumBodySize
        if let announced = response.headers.first(name: "content-length").flatMap(Int.init), announced > limit {
            throw HTTPGetError(kind: .tooLarge, message: "the response announces \(announced) bytes, over the limit of \(limit) bytes")
        }
        var body: [UInt8] = []
        for try await chunk in response.body {
            guard body.count + chunk.readableBytes <= limit else {
                throw HTTPGetError(kind: .tooLarge, message: "the response body exceeds the limit of \(limit) bytes")
            }
            body.append(contentsOf: chunk.readableBytesView)
        }
        return HTTPGetResponse(status: Int(response.status.code), contentType: response.headers.first(name: "content-type"), body: body)
    }

    private static func classify(_ error: Error, timeoutSeconds: Double) -> HTTPGetError {
        if let client = error as? HTTPClientError {
            switch client {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout:
                return HTTPGetError(kind: .timeout, message: "no complete response within \(timeoutSeconds) s")
            case .invalidURL, .emptyScheme, .emptyHost:
                return HTTPGetError(kind: .invalidURL, message: "invalid URL: \(client)")
            case .cancelled:
                return HTTPGetError(kind: .cancelled, message: "cancelled")
            default:
                return HTTPGetError(kind: .transport, message: "\(client)")
            }
        }
        return HTTPGetError(kind: .transport, message: "\(error)")
    }
}
