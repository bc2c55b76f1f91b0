#if canImport(Glibc)
import Glibc
#endif
import AsyncHTTPClient
import DataSources
@testable import HTTPGet
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Replay
import Synchronization
import Testing

/// Every failure HTTPGet reports is worded for people: host and port named, and no Swift
/// type name, source path or library error number, whatever the error underneath.
@Suite(.serialized) final class FailureWordingTests {
    let client = HTTPGetClient(environment: [:])

    deinit { client.shutdown() }

    func get(_ url: String, headers: [(name: String, value: String)] = []) async -> FetchError? {
        let result = await withCheckedContinuation { continuation in
            _ = client.fetch(RemoteRequest(url: url, headers: headers, timeoutSeconds: 20, maximumBodySize: 1 << 20)) {
                continuation.resume(returning: $0)
            }
        }
        guard case .failure(let error) = result else {
            Issue.record("\(url) succeeded")
            return nil
        }
        return error
    }

    @Test func aConnectionClosedMidBodyNamesTheHostAndPort() async throws {
        let server = try CutShortServer()
        defer { server.stop() }
        guard let error = await get("http://127.0.0.1:\(server.port)/items") else { return }
        #expect(error.kind == .transport)
        // Before: "stream ended at an unexpected time".
        #expect(error.message == "127.0.0.1:\(server.port) closed the connection before the response was complete")
    }

    @Test func aResetAndARefusalNameTheHostAndPort() async throws {
        let server = try FixtureServer(fixtures: [["path": "/reset", "body": ["x": 1], "padToBytes": 4000, "reset": true]])
        defer { server.stop() }
        let port = server.baseURL.split(separator: ":").last.map(String.init) ?? ""
        guard let reset = await get(server.baseURL + "/reset") else { return }
        #expect(reset.kind == .transport)
        #expect(
            [
                "127.0.0.1:\(port) reset the connection",
                // When the reset comes in before the response is read, NIO reports the end of the stream.
                "127.0.0.1:\(port) closed the connection before the response was complete",
            ].contains(reset.message), "\(reset.message)")

        let closed = HTTPGetTests.closedPort()
        guard let refused = await get("http://127.0.0.1:\(closed)/x") else { return }
        #expect(refused.message == "could not connect to 127.0.0.1:\(closed): connection refused")
    }

    @Test func aHostNameThatDoesNotResolveIsNamedWithItsPort() async {
        guard let error = await get("http://nonexistent.invalid/items") else { return }
        #expect(error.kind == .transport)
        #expect(error.message == "could not connect to nonexistent.invalid:80: the host name is not known")
    }

    @Test func aHeaderValueHTTPDoesNotAllowIsRefusedWithoutShowingIt() async throws {
        let server = try FixtureServer(fixtures: [["path": "/x", "body": ["ok": true]]])
        defer { server.stop() }
        let port = server.baseURL.split(separator: ":").last.map(String.init) ?? ""
        guard let error = await get(server.baseURL + "/x", headers: [("Authorization", "Bearer s3cr3t\r\nX-Injected: 1")]) else { return }
        #expect(error.kind == .transport)
        #expect(
            error.message
                == "a request header for 127.0.0.1:\(port) has a name or value HTTP does not allow (a control character or a line break)")
        #expect(!error.message.contains("s3cr3t"))
    }

    /// Errors from every layer under HTTPGet, including one nobody foresaw whose description
    /// holds a type name, a path and an error number.
    @Test func noMessageCarriesATypeNameAPathOrAnErrorNumber() {
        struct Unforeseen: Error, CustomStringConvertible {
            var description: String { "Unforeseen.failure(code: 268435581) at /work/main/.build/checkouts/swift-nio/Sources/X.swift:12" }
        }
        let errors: [any Error] = [
            Unforeseen(),
            HTTPParserError.invalidEOFState, HTTPParserError.invalidStatus, HTTPParserError.headerOverflow,
            IOError(errnoCode: ECONNRESET, reason: "read"), IOError(errnoCode: EHOSTUNREACH, reason: "connect"),
            IOError(errnoCode: EIO, reason: "read"),
            SocketAddressError.unsupported,
            ChannelError.eof, ChannelError.ioOnClosedChannel, ChannelError.badMulticastGroupAddressFamily,
            NIOSSLError.handshakeFailed(.sslError([])), NIOSSLError.uncleanShutdown, NIOSSLError.failedToLoadCertificate,
            NIOSSLExtraError.failedToValidateHostname, NIOSSLExtraError.invalidSNIHostname, BoringSSLError.syscallError,
            HTTPClientError.remoteConnectionClosed, HTTPClientError.uncleanShutdown, HTTPClientError.bodyLengthMismatch,
            HTTPClientError.invalidHeaderFieldValues(["secret"]), HTTPClientError.serverOfferedUnsupportedApplicationProtocol("spdy/3"),
            HTTPClientError.writeAfterRequestSent, HTTPClientError.invalidProxyResponse, HTTPClientError.traceRequestWithBody,
        ]
        for error in errors {
            let wording = FailureWording.classify(error, url: "https://example.com/items", timeoutSeconds: 5, presentedCertificate: false)
            let message = wording.message
            #expect(
                message.contains("example.com:443") || wording.kind == .timeout || message == "the HTTP client has shut down",
                "\(error): \(message)")
            for leak in ["Error", "NIO", "HTTPClient", "Unforeseen", ".swift", "/work", ".build", "268435581"] {
                #expect(!message.contains(leak), "\(error): \(message)")
            }
            // A call or an enum case with its payload (`handshakeFailed(...)`), not words in parentheses.
            #expect(!zip(message, message.dropFirst()).contains { $0.isLetter && $1 == "(" }, "\(error): \(message)")
            #expect(!message.contains("secret"))
        }
        #expect(FailureWording.target(of: "http://example.com/x") == "example.com:80")
        #expect(FailureWording.target(of: "https://[::1]:8443/x") == "[::1]:8443")
    }

    @Test func boringSSLReasonsAreWordedWithoutTheirNumbers() {
        #expect(FailureWording.words("SSLV3_ALERT_BAD_CERTIFICATE") == "bad certificate")
        #expect(FailureWording.words("TLSV1_ALERT_UNKNOWN_CA") == "unknown ca")
        #expect(FailureWording.words("DECODE_ERROR") == "decode error")
    }

    @Test func certificateDatesAndNamesReadAsPeopleWriteThem() {
        #expect(CertificateProbe.date(1_609_459_200) == "2021-01-01 00:00:00 UTC")
        #expect(CertificateProbe.date(1_700_000_000) == "2023-11-14 22:13:20 UTC")
        #expect(CertificateProbe.listed((1...12).map { "h\($0)" }) == "h1, h2, h3, h4, h5, h6, h7, h8, h9, h10 and 2 more")
        #expect(CertificateProbe.isAddress("127.0.0.1") && CertificateProbe.isAddress("::1") && !CertificateProbe.isAddress("localhost"))
    }
}

/// Answers any request with a head announcing 1,000 bytes, sends ten, and closes.
private final class CutShortServer: Sendable {
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let listener: any Channel
    var port: Int { listener.localAddress?.port ?? 0 }

    init() throws {
        listener = try ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Responder()) }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
    }

    func stop() {
        try? listener.close().wait()
        try? group.syncShutdownGracefully()
    }

    private final class Responder: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        private var answered = false

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !answered else { return }
            answered = true
            let text = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n[1,2,3,4,"
            let channel = context.channel
            context.writeAndFlush(NIOAny(context.channel.allocator.buffer(string: text))).whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
