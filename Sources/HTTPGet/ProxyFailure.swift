import AsyncHTTPClient
import DataSources
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Basics

/// Failures of a request sent through a proxy that are the proxy's: it cannot be reached, it
/// wants credentials, or it refused the tunnel. Messages name the proxy as `host:port`, never
/// with its credentials.
enum ProxyFailure {
    /// The proxy's failure behind `error`, or nil when `error` is not the proxy's (a TLS
    /// failure with the server, a reset inside the tunnel...).
    static func explain(
        _ error: Error, proxy: ProxyServer, url: String, on loop: any EventLoop, deadline: NIODeadline,
        _ done: @escaping @Sendable (FetchError?) -> Void
    ) {
        if error is FetchError { return done(nil) }
        let target = Self.target(of: url)
        if let client = error as? HTTPClientError {
            if client == .proxyAuthenticationRequired {
                return done(FetchError(kind: .proxy, message: authenticationRequired(proxy)))
            }
            if client == .invalidProxyResponse {
                // AsyncHTTPClient keeps only that the answer to CONNECT was not a 2xx; asking
                // once more, the same way, gets the status to show.
                return ConnectProbe.status(of: proxy, target: target, on: loop, deadline: deadline).whenComplete { result in
                    let answered = (try? result.get()).flatMap { $0 }
                    let said = answered.map { "it answered \($0)" } ?? "it did not answer CONNECT with a 2xx status"
                    done(FetchError(kind: .proxy, message: "the proxy \(proxy) refused to connect to \(target): \(said)"))
                }
            }
        }
        let text = "\(error)"
        if text.contains("Connection refused") || text.contains("connectionRefused") {
            return done(FetchError(kind: .proxy, message: "could not connect to the proxy \(proxy): connection refused"))
        }
        // Only the proxy's name is resolved here: the proxy resolves the server's.
        if text.contains("dns") || text.contains("DNS") || text.contains("unknown host") || text.contains("SocketAddressError") {
            return done(FetchError(kind: .proxy, message: "could not resolve the proxy's host \(proxy.host)"))
        }
        if text.contains("connectTimeout") {
            return done(FetchError(kind: .proxy, message: "could not connect to the proxy \(proxy): it did not answer in time"))
        }
        done(nil)
    }

    static func authenticationRequired(_ proxy: ProxyServer) -> String {
        let what =
            proxy.hasCredentials
            ? "it refused the credentials in the proxy URL"
            : "it wants credentials, and the proxy URL has none (http://user:password@host:port)"
        return "the proxy \(proxy) answered 407 Proxy Authentication Required: \(what)"
    }

    /// `host:port` of a URL, as CONNECT names it.
    static func target(of url: String) -> String {
        guard let parsed = URL(string: url), let host = parsed.host else { return "the server" }
        let port = parsed.port ?? (parsed.scheme?.lowercased() == "https" ? 443 : 80)
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

/// One `CONNECT` to a proxy, to learn its status line: nil when it cannot be had before the
/// deadline (or within 5 s).
private enum ConnectProbe {
    static func status(of proxy: ProxyServer, target: String, on loop: any EventLoop, deadline: NIODeadline) -> EventLoopFuture<String?> {
        let promise = loop.makePromise(of: String?.self)
        let answer = Answer(promise)
        let timer = loop.scheduleTask(deadline: min(deadline, .now() + .seconds(5))) { answer.give(nil) }
        promise.futureResult.whenComplete { _ in timer.cancel() }
        ClientBootstrap(group: loop)
            .connectTimeout(.seconds(5))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(StatusReader(answer))
                }
            }
            .connect(host: proxy.host, port: proxy.port)
            .whenComplete { result in
                guard case .success(let channel) = result else { return answer.give(nil) }
                promise.futureResult.whenComplete { _ in channel.close(promise: nil) }
                var head = HTTPRequestHead(version: .http1_1, method: .CONNECT, uri: target)
                head.headers.add(name: "Host", value: target)
                if let username = proxy.username {
                    head.headers.add(
                        name: "Proxy-Authorization",
                        value: HTTPClient.Authorization.basic(username: username, password: proxy.password ?? "").headerValue)
                }
                channel.write(HTTPClientRequestPart.head(head), promise: nil)
                channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
            }
        return promise.futureResult
    }

    /// Completes the probe once, whichever comes first: the status, a failure, the timer.
    final class Answer: Sendable {
        private let promise: EventLoopPromise<String?>
        private let given = LockedValue(false)

        init(_ promise: EventLoopPromise<String?>) { self.promise = promise }

        func give(_ status: String?) {
            guard
                given.withLock({ given in
                    defer { given = true }
                    return !given
                })
            else { return }
            promise.succeed(status)
        }
    }

    final class StatusReader: ChannelInboundHandler, Sendable {
        typealias InboundIn = HTTPClientResponsePart
        private let answer: Answer

        init(_ answer: Answer) { self.answer = answer }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .head(let head) = unwrapInboundIn(data) {
                // The proxy's own words, made safe to show: printable ASCII, bounded.
                let reason = String(
                    head.status.reasonPhrase.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7f }.prefix(80).map(
                        Character.init))
                answer.give("\(head.status.code) \(reason)")
            }
        }

        func channelInactive(context: ChannelHandlerContext) { answer.give(nil) }

        func errorCaught(context: ChannelHandlerContext, error: Error) {
            answer.give(nil)
            context.close(promise: nil)
        }
    }
}
