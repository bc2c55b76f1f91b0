import CZlib
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Basics

// Servers on loopback for the network tests: one whose answers the test scripts (gzip,
// deflate, a gzip bomb streamed), and a CONNECT proxy that counts what it is asked.

/// gzip, zlib and raw deflate, made with the system's zlib.
enum Deflate {
    enum Format {
        case gzip, zlib, raw
        var windowBits: Int32 {
            switch self {
            case .gzip: return 15 + 16
            case .zlib: return 15
            case .raw: return -15
            }
        }
    }

    static func compress(_ bytes: [UInt8], _ format: Format) -> [UInt8] {
        let stream = Stream(format)
        return stream.deflate(bytes, flush: Z_FINISH)
    }

    /// A deflate stream fed by parts.
    final class Stream {
        private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)

        init(_ format: Format, level: Int32 = 6) {
            stream.initialize(to: z_stream())
            precondition(czlib_deflate_init(stream, level, format.windowBits) == Z_OK)
        }

        deinit {
            deflateEnd(stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
        }

        func deflate(_ input: [UInt8], flush: Int32) -> [UInt8] {
            var output: [UInt8] = []
            var window = [UInt8](repeating: 0, count: 1 << 16)
            var input = input
            input.withUnsafeMutableBufferPointer { input in
                stream.pointee.next_in = input.baseAddress
                stream.pointee.avail_in = UInt32(input.count)
                while true {
                    let produced = window.withUnsafeMutableBufferPointer { window -> Int in
                        stream.pointee.next_out = window.baseAddress
                        stream.pointee.avail_out = UInt32(window.count)
                        let status = CZlib.deflate(stream, flush)
                        precondition(status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR)
                        return window.count - Int(stream.pointee.avail_out)
                    }
                    output += window[..<produced]
                    if stream.pointee.avail_in == 0 && produced < window.count { break }
                }
            }
            return output
        }
    }

    /// The start of a gzip stream of zeros, and a piece that each further `megabytes` MB of
    /// zeros adds, the same bytes every time (each piece ends in a full flush, which resets
    /// the dictionary and aligns to a byte): a bomb of any size costs nothing to send.
    static func zeroBomb(megabytesPerPiece megabytes: Int = 1) -> (head: [UInt8], piece: [UInt8]) {
        let stream = Stream(.gzip, level: 9)
        let zeros = [UInt8](repeating: 0, count: megabytes << 20)
        let head = stream.deflate(zeros, flush: Z_FULL_FLUSH)
        let piece = stream.deflate(zeros, flush: Z_FULL_FLUSH)
        precondition(stream.deflate(zeros, flush: Z_FULL_FLUSH) == piece, "zlib's full flush pieces differ")
        return (head, piece)
    }
}

/// An HTTP/1.1 server on loopback answering each GET as `respond` says, recording the
/// request heads and how many body bytes each response got onto the wire.
final class ScriptedHTTPServer: Sendable {
    struct Reply: Sendable {
        var status: HTTPResponseStatus = .ok
        var headers: [(String, String)] = []
        /// The body, written part by part.
        var parts: [[UInt8]] = []
        /// After `parts`: one part sent this many times (a body too large to hold).
        var repeated: (count: Int, part: [UInt8])?
    }

    final class Log: Sendable {
        let heads = LockedValue<[HTTPRequestHead]>([])
        let bodyBytesSent = LockedValue(0)
        let finishedResponses = LockedValue(0)
    }

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let listener: any Channel
    let log = Log()
    var port: Int { listener.localAddress?.port ?? 0 }
    var baseURL: String { "http://127.0.0.1:\(port)" }
    var requests: [HTTPRequestHead] { log.heads.withLock { $0 } }
    var bodyBytesSent: Int { log.bodyBytesSent.withLock { $0 } }
    var finishedResponses: Int { log.finishedResponses.withLock { $0 } }

    init(_ respond: @escaping @Sendable (HTTPRequestHead) -> Reply) throws {
        let log = self.log
        listener = try ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Responder(respond, log: log))
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
    }

    func stop() {
        try? listener.close().wait()
        try? group.syncShutdownGracefully()
    }

    private final class Responder: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        private let respond: @Sendable (HTTPRequestHead) -> Reply
        private let log: Log
        private var head: HTTPRequestHead?

        init(_ respond: @escaping @Sendable (HTTPRequestHead) -> Reply, log: Log) {
            self.respond = respond
            self.log = log
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                log.heads.withLock { $0.append(head) }
            case .body:
                break
            case .end:
                guard let head else { return }
                let reply = respond(head)
                var responseHead = HTTPResponseHead(version: .http1_1, status: reply.status)
                for (name, value) in reply.headers { responseHead.headers.add(name: name, value: value) }
                context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
                write(parts: reply.parts, repeated: reply.repeated, context: context)
            }
        }

        /// One part at a time, the next once the last is on the wire: a client that stops
        /// reading stops the server, and `bodyBytesSent` says how far it got.
        private func write(parts: [[UInt8]], repeated: (count: Int, part: [UInt8])?, context: ChannelHandlerContext) {
            var parts = parts[...]
            var repeated = repeated
            var next: [UInt8]
            if let first = parts.popFirst() {
                next = first
            } else if let more = repeated, more.count > 0 {
                next = more.part
                repeated = (more.count - 1, more.part)
            } else {
                log.finishedResponses.withLock { $0 += 1 }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                return
            }
            let buffer = context.channel.allocator.buffer(bytes: next)
            let log = self.log
            let rest = Array(parts)
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer)))).assumeIsolated().whenComplete { result in
                guard case .success = result else { return }
                log.bodyBytesSent.withLock { $0 += next.count }
                // A later turn of the loop: a write that completes at once would otherwise
                // recurse a frame a part, thousands deep.
                context.eventLoop.assumeIsolated().execute { self.write(parts: rest, repeated: repeated, context: context) }
            }
        }
    }
}

/// A CONNECT proxy on loopback (the way AsyncHTTPClient uses a proxy, for http and https
/// URLs alike): it tunnels to the named host and port, counting the CONNECTs and keeping the
/// `Proxy-Authorization` each carried. It can demand credentials (407) or refuse (403).
final class ConnectProxy: Sendable {
    struct Behaviour: Sendable {
        /// The `Proxy-Authorization` value required; nil: none.
        var requiredAuthorization: String?
        /// Refuse every CONNECT with `403 Forbidden`.
        var refuses = false
    }

    final class Log: Sendable {
        /// `CONNECT` targets, in order.
        let targets = LockedValue<[String]>([])
        /// The `Proxy-Authorization` of each, nil when it had none.
        let authorizations = LockedValue<[String?]>([])
    }

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let listener: any Channel
    let log = Log()
    var port: Int { listener.localAddress?.port ?? 0 }
    var connects: [String] { log.targets.withLock { $0 } }
    var authorizations: [String?] { log.authorizations.withLock { $0 } }

    init(_ behaviour: Behaviour = Behaviour()) throws {
        let log = self.log
        listener = try ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Front(behaviour, log: log))
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
    }

    func stop() {
        try? listener.close().wait()
        try? group.syncShutdownGracefully()
    }

    /// The client's side: reads the CONNECT head, then relays bytes both ways.
    private final class Front: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        private let behaviour: Behaviour
        private let log: Log
        private var head: [UInt8] = []
        private var upstream: (any Channel)?
        private var connecting = false
        private var pending: [ByteBuffer] = []

        init(_ behaviour: Behaviour, log: Log) {
            self.behaviour = behaviour
            self.log = log
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            if let upstream { return upstream.writeAndFlush(bytes, promise: nil) }
            if connecting { return pending.append(bytes) }
            head += bytes.readBytes(length: bytes.readableBytes) ?? []
            guard let end = head.firstRange(of: Array("\r\n\r\n".utf8)) else { return }
            let lines = String(decoding: head[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
            let leftover = Array(head[end.upperBound...])
            let requestLine = lines.first?.split(separator: " ") ?? []
            let authorization = lines.dropFirst().first { $0.lowercased().hasPrefix("proxy-authorization:") }
                .map { String($0.dropFirst("proxy-authorization:".count)).trimmingCharacters(in: .whitespaces) }
            guard requestLine.count == 3, requestLine[0] == "CONNECT" else {
                return answer("405 Method Not Allowed", context: context)
            }
            let target = String(requestLine[1])
            log.targets.withLock { $0.append(target) }
            log.authorizations.withLock { $0.append(authorization) }
            if behaviour.refuses { return answer("403 Forbidden", context: context) }
            if let required = behaviour.requiredAuthorization, authorization != required {
                return answer("407 Proxy Authentication Required", extra: "Proxy-Authenticate: Basic realm=\"test\"\r\n", context: context)
            }
            guard let colon = target.lastIndex(of: ":"), let port = Int(target[target.index(after: colon)...]) else {
                return answer("400 Bad Request", context: context)
            }
            connecting = true
            if !leftover.isEmpty { pending.append(context.channel.allocator.buffer(bytes: leftover)) }
            let front = context.channel
            ClientBootstrap(group: context.eventLoop)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Relay(to: front)) }
                }
                .connect(host: String(target[..<colon]), port: port)
                .assumeIsolated().whenComplete { result in
                    switch result {
                    case .success(let channel):
                        context.writeAndFlush(
                            self.wrapOutboundOut(context.channel.allocator.buffer(string: "HTTP/1.1 200 Connection established\r\n\r\n")),
                            promise: nil)
                        self.upstream = channel
                        for part in self.pending { channel.write(part, promise: nil) }
                        channel.flush()
                        self.pending = []
                    case .failure:
                        self.answer("502 Bad Gateway", context: context)
                    }
                }
        }

        private func answer(_ status: String, extra: String = "", context: ChannelHandlerContext) {
            let text = "HTTP/1.1 \(status)\r\n\(extra)Content-Length: 0\r\nConnection: close\r\n\r\n"
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: text))).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            upstream?.close(promise: nil)
        }
    }

    /// The server's side: what it says goes back to the client.
    private final class Relay: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        private let peer: any Channel

        init(to peer: any Channel) { self.peer = peer }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            peer.writeAndFlush(unwrapInboundIn(data), promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            peer.close(promise: nil)
        }
    }
}
