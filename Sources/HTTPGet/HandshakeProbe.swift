#if canImport(Glibc)
import Glibc
#endif
import DataSources
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// Finds the TLS alert behind a connection that closed before its response came.
///
/// In TLS 1.3 the client's side of the handshake is over before the server has checked the
/// client's certificate: a server that wants one, or refuses the one it got, says so with an
/// alert that arrives after the request went out. Over HTTP/1.1 that alert is the request's
/// error. Over HTTP/2 it ends the connection underneath the request's stream, and the stream
/// only learns that the connection closed (AsyncHTTPClient's `remoteConnectionClosed`).
///
/// So, after such a failure of an HTTPS request made directly (not through a proxy), the
/// probe connects once more with the request's own TLS configuration (its trust, its client
/// certificate) and, as soon as its side of the handshake is done, closes the connection
/// without sending anything. A server that refuses the certificate answers with its alert,
/// which is worded as over HTTP/1.1; a server that takes it just closes, and the failure
/// stays as it was.
enum HandshakeProbe {
    /// The longest a probe may take, within the exchange's own deadline.
    static let maximumWait = TimeAmount.seconds(5)

    /// Calls `completion` once, on `loop`, with the alert's wording, or nil when the server
    /// sent none (or could not be reached again).
    static func explain(
        host: String, port: Int, configuration: TLSConfiguration?, url: String, presentedCertificate: Bool, on loop: any EventLoop,
        deadline: NIODeadline, completion: @escaping @Sendable (FetchError?) -> Void
    ) {
        var configuration = configuration ?? TLSConfiguration.makeClientConfiguration()
        configuration.applicationProtocols = ["http/1.1"]
        guard let context = try? NIOSSLContext(configuration: configuration) else { return completion(nil) }
        let outcome = loop.makePromise(of: FetchError?.self)
        let wait = min(deadline, .now() + maximumWait)
        let timeout = loop.scheduleTask(deadline: wait) { outcome.succeed(nil) }
        let serverName = CertificateProbe.isAddress(host) ? nil : host
        let connection = ClientBootstrap(group: loop)
            .connectTimeout(.seconds(5))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = try NIOSSLClientHandler(context: context, serverHostname: serverName)
                    try channel.pipeline.syncOperations.addHandler(handler)
                    try channel.pipeline.syncOperations.addHandler(
                        AlertCatcher { error in
                            let worded = FailureWording.classify(
                                error, url: url, timeoutSeconds: 0, presentedCertificate: presentedCertificate)
                            outcome.succeed(worded.kind == .tls ? worded : nil)
                        })
                }
            }
            .connect(host: host, port: port)
        connection.whenFailure { _ in outcome.succeed(nil) }
        connection.whenSuccess { channel in
            channel.closeFuture.whenComplete { _ in outcome.succeed(nil) }
        }
        outcome.futureResult.whenComplete { result in
            timeout.cancel()
            connection.whenSuccess { $0.close(promise: nil) }
            completion((try? result.get()) ?? nil)
        }
    }

    /// Closes the connection once the handshake is done on the client's side, and reports the
    /// first error the TLS handler raises (the server's alert) before it closes.
    private final class AlertCatcher: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let caught: @Sendable (Error) -> Void

        init(_ caught: @escaping @Sendable (Error) -> Void) { self.caught = caught }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case TLSUserEvent.handshakeCompleted = event {
                context.close(promise: nil)
            }
            context.fireUserInboundEventTriggered(event)
        }

        func errorCaught(context: ChannelHandlerContext, error: Error) {
            caught(error)
            context.close(promise: nil)
        }
    }
}
