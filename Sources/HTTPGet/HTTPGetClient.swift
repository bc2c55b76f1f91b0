import AsyncHTTPClient
import DataSources
import Dispatch
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Basics

/// GET over HTTP(S), for callers that are not async: the daemon's `HTTPFetching`. A
/// `RemoteRequest` goes out as the model made it (its TLS files, compression and proxy), and
/// its completion is called exactly once, cancelled or not, with the `RemoteResponse` or the
/// `FetchError` the client will see, off the event loop (on a Dispatch worker thread), so a
/// completion may take its time (the daemon decodes the page there).
///
/// Responses are read with AsyncHTTPClient's delegate interface: the body is gathered on the
/// connection's event loop as it arrives, and the completion is one hop away from it. (The
/// async interface hands each chunk of the body to a task, a hop per chunk: for a page of
/// 236 KB that cost about 0.5 ms of CPU more; BENCHMARKS-HISTORY.md, ninth round.)
///
/// Redirects are followed here rather than by AsyncHTTPClient, so that credentials are
/// dropped when one leaves the origin, and the final URL is known. A connection that cannot
/// be made fails at once (no retries until the deadline): a closed port or an unknown host
/// is reported in milliseconds, not after the timeout.
package final class HTTPGetClient: HTTPFetching {
    /// Redirects followed before giving up.
    static let maximumRedirects = 5
    /// The longest exchange accepted; longer requests are clamped to it (callers validate theirs).
    static let maximumTimeoutSeconds = 86_400.0
    /// Whether a header goes to the request's own origin only, and so is not sent on after a
    /// redirect to another: every header the daemon treats as secret (by its name), and those
    /// the request names (values read from the environment or a file, Basic authorization).
    static func isOriginBound(_ name: String, in request: RemoteRequest) -> Bool {
        RemoteConfiguration.isSecretHeader(name) || request.originBoundHeaders.contains(name.lowercased())
    }

    private let client: HTTPClient
    /// The client each request goes out on: `client`, or one made for its proxy.
    private let router: ClientRouter
    /// One event loop for every exchange and connection. Every response is then read on the
    /// loop that runs its delegate, with no hop between loops for each part, and the
    /// connection pool still reuses kept-alive connections and keeps to its limit per host
    /// (both are lost when a request insists on a loop of several: AsyncHTTPClient then makes
    /// a connection for it and closes it once idle). One loop is plenty: it only moves bytes,
    /// as pages are decoded elsewhere.
    private let loop: MultiThreadedEventLoopGroup
    /// `SSL_CERT_FILE` and `SSL_CERT_DIR`, and the PEM files sources name.
    private let trust: TLSTrust

    /// `environment`: the daemon's (tests pass their own).
    package init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        // HTTP/2 is negotiated through ALPN wherever the server offers it (httpVersion
        // .automatic, the default): one connection then carries every page of a host.
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.connectionPool.retryConnectionEstablishment = false
        loop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        client = HTTPClient(eventLoopGroupProvider: .shared(loop), configuration: configuration)
        trust = TLSTrust(environment: environment)
        router = ClientRouter(direct: client, configuration: configuration, loop: loop, environment: environment)
    }

    /// Set by `shutdown`; under its lock, an exchange is either started before the loop shuts
    /// down or refused: a task given to a loop that has shut down is dropped, and its
    /// completion would never come.
    private let isShutDown = LockedValue(false)

    package func shutdown() {
        isShutDown.withLock { $0 = true }
        router.shutdown()
        try? client.syncShutdown()
        try? loop.syncShutdownGracefully()
    }

    package func fetch(
        _ request: RemoteRequest, completion: @escaping @Sendable (Result<RemoteResponse, FetchError>) -> Void
    ) -> FetchHandle {
        let exchange = Exchange(request, router: router, trust: trust, completion: completion)
        let started = isShutDown.withLock { isShutDown in
            if !isShutDown { exchange.start() }
            return !isShutDown
        }
        if !started { exchange.refuse(FetchError(kind: .transport, message: "the HTTP client has shut down")) }
        return FetchHandle { exchange.cancel() }
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
    /// AsyncHTTPClient's name for the method.
    static func method(_ method: DataSources.HTTPMethod) -> NIOHTTP1.HTTPMethod {
        switch method {
        case .get: .GET
        case .post: .POST
        case .put: .PUT
        case .patch: .PATCH
        case .delete: .DELETE
        }
    }

    static func origin(of text: String) -> String {
        guard let url = URL(string: text) else { return text }
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }

    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() && seconds < 1e15 ? String(Int(seconds)) : String(seconds)
    }

    fileprivate static func classify(_ error: Error, url: String, request: RemoteRequest) -> FetchError {
        FailureWording.classify(
            error, url: url, timeoutSeconds: request.timeoutSeconds, presentedCertificate: request.tls?.certificateFile != nil)
    }
}

/// One request (a GET, a POST with its body, or an action's PUT, PATCH or DELETE) and the redirects it follows, against one deadline for the whole of it (bodies
/// included), reporting once.
private final class Exchange: Sendable {
    private struct State {
        var inFlight: HTTPClient.Task<HandedOver>?
        var cancelled = false
        var finished = false
    }

    private let request: RemoteRequest
    /// The request's URL as responses and failures name it: without credentials.
    private let shownURL: String
    private let router: ClientRouter
    private let trust: TLSTrust
    private let completion: @Sendable (Result<RemoteResponse, FetchError>) -> Void
    /// For the whole exchange: every redirect and body counts against it.
    private let deadline: NIODeadline
    /// The client's one loop: where the exchange runs, its connections included.
    private let eventLoop: any EventLoop
    private let state = LockedValue(State())

    init(
        _ request: RemoteRequest, router: ClientRouter, trust: TLSTrust,
        completion: @escaping @Sendable (Result<RemoteResponse, FetchError>) -> Void
    ) {
        self.request = request
        shownURL = URLResolution.redacted(request.url)
        self.router = router
        self.trust = trust
        self.completion = completion
        // Clamped before converting: a huge or non-finite number of seconds must not trap.
        let seconds =
            request.timeoutSeconds.isFinite
            ? min(max(request.timeoutSeconds, 0.001), HTTPGetClient.maximumTimeoutSeconds) : HTTPGetClient.maximumTimeoutSeconds
        deadline = .now() + .nanoseconds(Int64(seconds * 1_000_000_000))
        eventLoop = router.direct.eventLoopGroup.next()
    }

    /// Returns at once: the request is made on the exchange's event loop, not the caller's
    /// thread (the daemon's main loop), which has better things to do.
    func start() {
        eventLoop.execute {
            if let problem = HTTPGetClient.urlProblem(self.request.url) {
                return self.finish(.failure(FetchError(kind: .transport, message: "invalid URL: \(problem)")))
            }
            self.send(to: self.request.url, headers: self.request.headers, redirects: 0)
        }
    }

    /// Reports `error` without making a request.
    func refuse(_ error: FetchError) {
        finish(.failure(error))
    }

    func cancel() {
        let inFlight = state.withLock { state -> HTTPClient.Task<HandedOver>? in
            state.cancelled = true
            return state.inFlight
        }
        // Its failure (`HTTPClientError.cancelled`) finishes the exchange.
        inFlight?.cancel()
    }

    private func send(to url: String, headers: [(name: String, value: String)], redirects: Int) {
        guard !state.withLock({ $0.cancelled }) else { return finish(.failure(FetchError(kind: .cancelled, message: "cancelled"))) }
        let outgoing: HTTPClient.Request
        do {
            var fields = HTTPHeaders()
            for (name, value) in headers { fields.replaceOrAdd(name: name, value: value) }
            if request.compression && !fields.contains(name: "accept-encoding") {
                fields.add(name: "Accept-Encoding", value: acceptedContentCodings)
            }
            let tls = try trust.configuration(for: request.tls, url: url, target: FailureWording.target(of: url))
            var body: HTTPClient.Body?
            if let bytes = request.body {
                if !fields.contains(name: "content-type") { fields.add(name: "Content-Type", value: "application/json") }
                body = .bytes(bytes)
            }
            outgoing = try HTTPClient.Request(
                url: url, method: HTTPGetClient.method(request.method), headers: fields, body: body, tlsConfiguration: tls)
        } catch {
            return finish(.failure(HTTPGetClient.classify(error, url: url, request: request)))
        }
        // Chosen for each URL: a redirect may lead to a host that NO_PROXY exempts.
        let route: ClientRouter.Route
        switch router.route(for: url, choice: request.proxy) {
        case .success(let chosen): route = chosen
        case .failure(let error): return finish(.failure(error))
        }
        let task = route.client.execute(
            request: outgoing,
            delegate: BodyCollector(url: url, requestURL: request.url, shownURL: shownURL, limit: request.maximumBodySize),
            deadline: deadline)
        let cancelledAlready = state.withLock { state -> Bool in
            state.inFlight = task
            return state.cancelled
        }
        if cancelledAlready { task.cancel() }
        task.futureResult.whenComplete { result in
            route.release()
            switch result {
            case .success(let handedOver):
                guard let response = handedOver.take() else { return self.failed(HTTPClientError.cancelled, url: url) }
                self.received(response, from: url, headers: headers, redirects: redirects)
            case .failure(let error):
                guard let proxy = route.proxy, NIODeadline.now() < self.deadline else {
                    return self.failed(error, url: url, direct: route.proxy == nil)
                }
                ProxyFailure.explain(error, proxy: proxy, url: url, on: self.eventLoop, deadline: self.deadline) { explained in
                    if let explained { self.finish(.failure(explained)) } else { self.failed(error, url: url, direct: false) }
                }
            }
        }
    }

    private func received(_ response: RemoteResponse, from url: String, headers: [(name: String, value: String)], redirects: Int) {
        guard [301, 302, 303, 307, 308].contains(response.status), let location = response.headerValues("location").first else {
            return finish(.success(response))
        }
        guard redirects < HTTPGetClient.maximumRedirects else {
            return finish(
                .failure(
                    FetchError(
                        kind: .transport,
                        message:
                            "more than \(HTTPGetClient.maximumRedirects) redirects (last to \(URLRedaction.withoutCredentials(location)))"))
            )
        }
        guard let next = URL(string: location, relativeTo: URL(string: url))?.absoluteString, HTTPGetClient.urlProblem(next) == nil else {
            return finish(
                .failure(
                    FetchError(kind: .transport, message: "a redirect to an unusable URL: \(URLRedaction.withoutCredentials(location))")))
        }
        // A POST's body is its query, and any other method but GET changes something: only 307
        // and 308 keep the method and the body, and only on the same origin
        // (it may hold what is meant for this server alone). Asked again as a GET, it would
        // answer another question.
        if request.method != .get,
            ![307, 308].contains(response.status) || HTTPGetClient.origin(of: next) != HTTPGetClient.origin(of: url)
        {
            return finish(
                .failure(
                    FetchError(
                        kind: .transport,
                        message:
                            "a \(request.method.rawValue) redirected (\(response.status)) to \(URLRedaction.withoutCredentials(next)) is not followed: only a 307 or 308 to the same origin keeps its body"
                    )))
        }
        var headers = headers
        if HTTPGetClient.origin(of: next) != HTTPGetClient.origin(of: url) {
            headers.removeAll { HTTPGetClient.isOriginBound($0.name, in: request) }
        }
        send(to: next, headers: headers, redirects: redirects + 1)
    }

    private func problem(_ error: Error, url: String) -> FetchError {
        if let error = error as? FetchError { return error }
        // Whatever AsyncHTTPClient calls it (a request still waiting for a connection fails
        // with the connection's error), a failure at or past the deadline is a timeout.
        if NIODeadline.now() >= deadline {
            return FetchError(kind: .timeout, message: "no complete response within \(HTTPGetClient.format(request.timeoutSeconds)) s")
        }
        return HTTPGetClient.classify(error, url: url, request: request)
    }

    /// A refused certificate is worded once the probe has seen it (CertificateProbe); a
    /// connection to the server itself that closed under the request, once the handshake
    /// probe has looked for the alert behind it (HandshakeProbe).
    private func failed(_ error: Error, url: String, direct: Bool = true) {
        let problem = self.problem(error, url: url)
        if direct, case HTTPClientError.remoteConnectionClosed? = error as? HTTPClientError, url.lowercased().hasPrefix("https:"),
            let target = URL(string: url), let host = target.host, !state.withLock({ $0.cancelled }),
            // nil: AsyncHTTPClient's default (the system store, no client certificate).
            case .success(let configuration) = Result(catching: { () throws(FetchError) in
                try trust.configuration(for: request.tls, url: url, target: FailureWording.target(of: url))
            })
        {
            HandshakeProbe.explain(
                host: host, port: target.port ?? 443, configuration: configuration, url: url,
                presentedCertificate: request.tls?.certificateFile != nil, on: eventLoop, deadline: deadline
            ) { alert in
                self.finish(.failure(alert ?? problem))
            }
            return
        }
        guard problem.kind == .tls, let refusal = CertificateProbe.refusal(error), let target = URL(string: url), let host = target.host,
            !state.withLock({ $0.cancelled })
        else {
            return finish(.failure(problem))
        }
        let port = target.port ?? 443
        CertificateProbe.explain(refusal, host: host, port: port, target: FailureWording.target(of: url), on: eventLoop, deadline: deadline)
        {
            self.finish(.failure($0))
        }
    }

    /// Reports once, off the event loop: the completion may take its time. Once cancelled,
    /// an exchange reports `cancelled`, even if its response won the race with the cancel.
    private func finish(_ result: Result<RemoteResponse, FetchError>) {
        let (first, cancelled) = state.withLock { state -> (Bool, Bool) in
            defer {
                state.finished = true
                state.inFlight = nil
            }
            return (!state.finished, state.cancelled)
        }
        guard first else { return }
        let completion = self.completion
        let result = (cancelled ? .failure(FetchError(kind: .cancelled, message: "cancelled")) : result).mapError(located)
        DispatchQueue.global().async { completion(result) }
    }

    /// A failure names the request's URL, and a body over the limit the limit.
    private func located(_ failure: FetchError) -> FetchError {
        var failure = failure
        failure.url = shownURL
        if failure.kind == .tooLarge { failure.maxBodyBytes = request.maximumBodySize }
        return failure
    }
}

/// Gathers one response on its connection's event loop, refusing a body over the limit as
/// soon as it is announced or passed.
private final class BodyCollector: HTTPClientResponseDelegate, Sendable {
    private let url: String
    /// The URL first asked for, and as a response names it (`RemoteResponse.url`).
    private let requestURL: String
    private let shownURL: String
    private let limit: Int
    /// What has come so far. AsyncHTTPClient calls a delegate only on its task's event loop,
    /// one call at a time, so the lock is never contended; it is what lets the compiler see it.
    private let received = LockedValue(Received())

    private struct Received {
        var head: HTTPResponseHead?
        var body: [UInt8] = []
        /// For a gzip or deflate body: `body` is what it decodes to.
        var inflater: Inflater?
    }

    init(url: String, requestURL: String, shownURL: String, limit: Int) {
        self.url = url
        self.requestURL = requestURL
        self.shownURL = shownURL
        self.limit = limit
    }

    func didReceiveHead(task: HTTPClient.Task<HandedOver>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        received.withLock { received in receivedHead(head, into: &received, on: task.eventLoop) }
    }

    private func receivedHead(_ head: HTTPResponseHead, into received: inout Received, on eventLoop: any EventLoop) -> EventLoopFuture<Void>
    {
        received.head = head
        let coding = ContentCoding(header: head.headers.first(name: "content-encoding"))
        switch coding {
        case .identity:
            break
        case .gzip, .deflate:
            // The announced length is the compressed one: the limit is checked as it decodes.
            received.inflater = Inflater(coding)
            return eventLoop.makeSucceededVoidFuture()
        case .unsupported(let coding):
            return eventLoop.makeFailedFuture(
                FetchError(
                    kind: .decode, message: "the response is encoded as \"\(coding)\", which is not gzip or deflate: it cannot be decoded"))
        }
        let announced = head.headers.first(name: "content-length").flatMap { Int($0) }
        if let announced, announced > limit {
            return eventLoop.makeFailedFuture(
                FetchError(
                    kind: .tooLarge, message: "the response announces \(announced) bytes, over the limit of \(limit) bytes"))
        }
        // One allocation of the announced size: growing by doubling copies the body a few
        // times, and freeing each outgrown buffer of 64 KB or more makes malloc consolidate
        // its free lists (a few percent of a page's cost).
        if let announced, announced > 0 { received.body.reserveCapacity(announced) }
        return eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<HandedOver>, _ part: ByteBuffer) -> EventLoopFuture<Void> {
        let eventLoop = task.eventLoop
        return received.withLock { received in
            if let inflater = received.inflater {
                do throws(InflateFailure) {
                    try part.withUnsafeReadableBytes { bytes throws(InflateFailure) in
                        try inflater.inflate(bytes, into: &received.body, limit: limit)
                    }
                    return eventLoop.makeSucceededVoidFuture()
                } catch {
                    return eventLoop.makeFailedFuture(
                        Self.problem(error, limit: limit, coding: received.head?.headers.first(name: "content-encoding")))
                }
            }
            guard part.readableBytes <= limit - received.body.count else {
                return eventLoop.makeFailedFuture(
                    FetchError(kind: .tooLarge, message: "the response body exceeds the limit of \(limit) bytes"))
            }
            received.body.append(contentsOf: part.readableBytesView)
            return eventLoop.makeSucceededVoidFuture()
        }
    }

    func didFinishRequest(task: HTTPClient.Task<HandedOver>) throws -> HandedOver {
        try received.withLock { received throws(FetchError) in try finished(&received) }
    }

    private func finished(_ received: inout Received) throws(FetchError) -> HandedOver {
        guard let head = received.head else {
            throw FetchError(kind: .transport, message: "\(FailureWording.target(of: url)) ended the response before its head")
        }
        var headers = head.headers.map { ($0.name, $0.value) }
        if let inflater = received.inflater {
            do { try inflater.finish() } catch {
                throw Self.problem(error, limit: limit, coding: head.headers.first(name: "content-encoding"))
            }
            // They describe the bytes on the wire; the body handed on is the decoded one (and
            // so is a recording's, replayed uncompressed).
            headers.removeAll { ["content-encoding", "content-length"].contains($0.0.lowercased()) }
        }
        let finalURL = url == requestURL ? nil : URLResolution.redacted(url)
        // Moved out of this delegate, which AsyncHTTPClient may keep until the connection's next
        // request (and the task's future with it, which holds what this returns).
        let taken = received.body
        received.body = []
        return HandedOver(RemoteResponse(url: shownURL, finalURL: finalURL, status: Int(head.status.code), headers: headers, body: taken))
    }

    private static func problem(_ failure: InflateFailure, limit: Int, coding: String?) -> FetchError {
        let coding = ContentCoding(header: coding) == .gzip ? "gzip" : "deflate"
        switch failure {
        case .tooLarge:
            return FetchError(kind: .tooLarge, message: "the response body exceeds the limit of \(limit) bytes once decoded (\(coding))")
        case .corrupt(let reason):
            return FetchError(kind: .decode, message: "the \(coding) response body does not decode: \(reason)")
        case .truncated:
            return FetchError(kind: .decode, message: "the \(coding) response body ends before its compressed data does")
        }
    }
}

/// A response as a task's future holds it: taken out once, so that neither the future nor
/// the connection that may keep the task until its next request holds the body after (a
/// page's whole body, 30 MB, stayed resident after its source was destroyed, in
/// Benchmarks/pagestall.py).
final class HandedOver: Sendable {
    private let response: LockedValue<RemoteResponse?>

    init(_ response: RemoteResponse) { self.response = LockedValue(response) }

    /// The response, the first time; nil after.
    func take() -> RemoteResponse? {
        response.withLock { response in
            defer { response = nil }
            return response
        }
    }
}
