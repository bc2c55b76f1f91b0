import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Basics

/// An HTTPS server on 127.0.0.1 that answers every GET with `[{"page":N}]` (N from `?page=N`)
/// and every POST with `{"method":"POST","body":BODY}` (the JSON body it received), optionally offering HTTP/2 through ALPN and requiring a client certificate, and keeps
/// the HTTP version of each request it answered.
final class TLSPageServer: Sendable {
    private final class Log: Sendable {
        let versions = LockedValue<[HTTPVersion]>([])
        let connections = LockedValue(0)
    }

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let log = Log()
    private let listener: any Channel
    var port: Int { listener.localAddress?.port ?? 0 }
    var baseURL: String { "https://127.0.0.1:\(port)" }
    /// The version of each request answered, in order.
    var versions: [HTTPVersion] { log.versions.withLock { $0 } }
    var connections: Int { log.connections.withLock { $0 } }

    /// `clientCA`: a client certificate issued by it is required.
    init(certificate: String, key: String, offerHTTP2: Bool = false, clientCA: String? = nil) throws {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
        configuration.applicationProtocols = offerHTTP2 ? ["h2", "http/1.1"] : ["http/1.1"]
        if let clientCA {
            configuration.certificateVerification = .noHostnameVerification
            configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(clientCA))
        }
        let context = try NIOSSLContext(configuration: configuration)
        let log = self.log
        listener = try ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                log.connections.withLock { $0 += 1 }
                do {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
                if offerHTTP2 {
                    return channel.configureCommonHTTPServerPipeline { stream in
                        stream.eventLoop.makeCompletedFuture { try stream.pipeline.syncOperations.addHandler(Responder(log: log)) }
                    }
                }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Responder(log: log))
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
        private let log: Log
        private var head: HTTPRequestHead?
        private var received: [UInt8] = []

        init(log: Log) { self.log = log }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                received = []
            case .body(let part): received += part.readableBytesView
            case .end:
                guard let head else { return }
                log.versions.withLock { $0.append(head.version) }
                let page = head.uri.split(separator: "=").last.map(String.init) ?? ""
                let text =
                    head.method == .POST
                    ? "{\"method\":\"POST\",\"body\":\(String(decoding: received, as: UTF8.self))}" : "[{\"page\":\(page)}]"
                let body = context.channel.allocator.buffer(string: text)
                var response = HTTPResponseHead(version: head.version, status: .ok)
                response.headers.add(name: "Content-Type", value: "application/json")
                response.headers.add(name: "Content-Length", value: "\(body.readableBytes)")
                context.write(wrapOutboundOut(.head(response)), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}
