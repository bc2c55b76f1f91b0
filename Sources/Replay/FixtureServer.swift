#if canImport(Glibc)
import Glibc
#endif
import DataSources
import JSONKit
import JSONRPC
import NIOCore
import NIOHTTP1
import NIOPosix
import Basics
import TranscriptFormat

/// An HTTP server on loopback that answers from a fixture table, so a transcript carries the
/// API it talks to. The table is specified in Protocol.md ("Fixtures"). SwiftNIO parses the
/// requests and frames the responses; what is ours is the table and how a route answers.
package final class FixtureServer: Sendable {
    /// One request as received: its method, target (`/items?page=2`), headers (names in lower
    /// case) and body.
    package struct ReceivedRequest: Sendable {
        package var method = "GET"
        package let target: String
        package let headers: [(name: String, value: String)]
        package var body: [UInt8] = []

        package init(method: String = "GET", target: String, headers: [(name: String, value: String)], body: [UInt8] = []) {
            self.method = method
            self.target = target
            self.headers = headers
            self.body = body
        }

        /// The headers as a JSON object; a repeated header's values are joined with ", ".
        package var headersObject: JSON {
            var names: [String] = []
            var values: [String: String] = [:]
            for (name, value) in headers {
                if let earlier = values[name] {
                    values[name] = earlier + ", " + value
                } else {
                    names.append(name)
                    values[name] = value
                }
            }
            return .object(names.map { ($0, JSON(values[$0]!)) })
        }
    }

    package struct FormatError: Error, CustomStringConvertible { package let description: String }

    private let table: FixtureTable
    private let gates: ResponseGates
    private let group: MultiThreadedEventLoopGroup
    private let listener: any Channel
    package let port: Int

    package var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Parses `fixtures` (an array of routes) and starts serving on 127.0.0.1.
    package convenience init(fixtures: JSON, port requestedPort: Int = 0) throws {
        let routes: [FixtureRoute]
        do {
            routes = try FixtureRoute.routes(parsing: fixtures)
        } catch {
            throw FormatError(description: error.description)
        }
        try self.init(routes: routes, port: requestedPort)
    }

    /// Serves `routes` on 127.0.0.1:`requestedPort` (0: a free port).
    package init(routes: [FixtureRoute], port requestedPort: Int = 0) throws {
        // Out of range, a port would be taken modulo 65536 by the socket layer.
        guard (0...65535).contains(requestedPort) else {
            throw FormatError(description: "the port must be an integer in 0...65535, got \(requestedPort)")
        }
        let gates = ResponseGates()
        self.gates = gates
        let table = FixtureTable(routes: routes, gates: gates)
        self.table = table
        // One thread is enough: delays and drips are scheduled on it, never slept.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withPipeliningAssistance: false)
                    try channel.pipeline.syncOperations.addHandler(
                        RequestHandler(gates: gates) { head, body in
                            table.answer(
                                ReceivedRequest(
                                    method: head.method.rawValue, target: head.uri,
                                    headers: head.headers.map { ($0.name.lowercased(), $0.value) }, body: body))
                        })
                }
            }
        do {
            listener = try bootstrap.bind(host: "127.0.0.1", port: requestedPort).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw FormatError(description: "cannot listen on 127.0.0.1:\(requestedPort): \(error)")
        }
        self.group = group
        port = listener.localAddress?.port ?? requestedPort
    }

    package func stop() {
        try? listener.close().wait()
        try? group.syncShutdownGracefully()
    }

    /// Waits until a request claims the route held under `name`; false after `milliseconds`.
    package func waitUntilRequested(_ name: String, milliseconds: Int) -> Bool {
        gates.waitUntilRequested(name, milliseconds: milliseconds)
    }

    /// Lets the routes held under `name` answer.
    package func release(_ name: String) {
        gates.open(name)
    }

    /// Request targets received so far (`/items?page=2`), oldest first, taken once.
    package func takeRequests() -> [String] { table.received.takeAll(waitingAtMost: 0).map(\.target) }

    /// Requests received so far, with their headers, oldest first, taken once.
    package func takeReceivedRequests() -> [ReceivedRequest] { table.received.takeAll(waitingAtMost: 0) }

    /// The most of a request body the server keeps: a larger one is refused (413), never
    /// matched, and never held whole.
    package static let maximumRequestBodyBytes = TranscriptLimits.maximumRequestBodyBytes
    /// How much of a request body a "no fixture" answer quotes.
    static let quotedBodyCharacters = 200

    /// The request as a "no fixture" answer names it: the target alone for a GET without a
    /// body (what older transcripts expect), else the method, and the body shortened.
    static func requestWords(_ request: ReceivedRequest) -> String {
        guard request.method != "GET" || !request.body.isEmpty else { return request.target }
        guard !request.body.isEmpty else { return "\(request.method) \(request.target) with no body" }
        // Decoded only as far as it is quoted: a body may be up to maximumRequestBodyBytes.
        let quoted = String(String(decoding: request.body.prefix(quotedBodyCharacters * 4), as: UTF8.self).prefix(quotedBodyCharacters))
        let shown = quoted.utf8.count < request.body.count ? quoted + "... (\(request.body.count) bytes)" : quoted
        return "\(request.method) \(request.target) with body \(shown)"
    }

    static func split(_ target: String) -> (path: String, query: [(String, String)]) {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let path = String(parts.first ?? "/")
        let query =
            parts.count > 1
            ? parts[1].split(separator: "&").map { pair -> (String, String) in
                let halves = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                return (
                    URLResolution.percentDecoded(halves[0], formEncoded: true),
                    halves.count > 1 ? URLResolution.percentDecoded(halves[1], formEncoded: true) : ""
                )
            } : []
        return (path, query)
    }
}

/// The routes, how often each has answered, and the requests received.
private final class FixtureTable: Sendable {
    let routes: [FixtureRoute]
    let useCounts = LockedValue<[Int: Int]>([:])
    let received = Mailbox<FixtureServer.ReceivedRequest>()
    let gates: ResponseGates

    init(routes: [FixtureRoute], gates: ResponseGates) {
        self.routes = routes
        self.gates = gates
    }

    func answer(_ request: FixtureServer.ReceivedRequest) -> FixtureResponse {
        received.post(request)
        let (path, query) = FixtureServer.split(request.target)
        if path == "/_echo/headers" {
            return FixtureResponse(status: 200, headers: [("Content-Type", "application/json")], body: request.headersObject.encoded())
        }
        guard request.body.count <= FixtureServer.maximumRequestBodyBytes else {
            return FixtureResponse(
                status: 413, headers: [("Content-Type", "application/json")],
                body: JSON.object(["error": JSON("request body over \(FixtureServer.maximumRequestBodyBytes) bytes")]).encoded())
        }
        // Parsed once: routes compare bodies as values. A body that is not JSON matches only
        // routes that name none.
        let body = request.body.isEmpty ? nil : try? JSON.parse(request.body)
        // The first route that matches and has uses left, counting this use.
        let claimed = useCounts.withLock { counts -> FixtureRoute? in
            for (index, route) in routes.enumerated()
            where route.matches(method: request.method, path: path, query: query, body: body) {
                if let times = route.times, counts[index, default: 0] >= times { continue }
                counts[index, default: 0] += 1
                return route
            }
            return nil
        }
        guard let route = claimed else {
            return FixtureResponse(
                status: 404, headers: [("Content-Type", "application/json")],
                body: JSON.object(["error": JSON("no fixture for \(FixtureServer.requestWords(request))")]).encoded())
        }
        if let hold = route.response.hold { gates.noteRequested(hold) }
        return route.response(toRequestHeaders: request.headers)
    }
}

/// Waits for a whole request, asks `answer` what to send, sends it, and closes the connection.
private final class RequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let answer: @Sendable (HTTPRequestHead, [UInt8]) -> FixtureResponse
    private let gates: ResponseGates
    private var head: HTTPRequestHead?
    /// The request's body so far, kept up to one byte over the server's limit (enough to
    /// refuse it) however much more arrives.
    private var body: [UInt8] = []

    init(gates: ResponseGates, answer: @escaping @Sendable (HTTPRequestHead, [UInt8]) -> FixtureResponse) {
        self.gates = gates
        self.answer = answer
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
        case .body(let part):
            let room = FixtureServer.maximumRequestBodyBytes + 1 - body.count
            if room > 0 { body += part.readableBytesView.prefix(room) }
        case .end:
            guard let head else { return }
            self.head = nil
            let response = answer(head, body)
            body = []
            let sender = ResponseSender(channel: context.channel, response: response)
            guard let hold = response.hold else { return sender.start() }
            // Held: sent from the event loop once a `release` step opens the gate.
            let eventLoop = context.eventLoop
            gates.whenOpen(hold) { eventLoop.execute { sender.start() } }
        }
    }
}
