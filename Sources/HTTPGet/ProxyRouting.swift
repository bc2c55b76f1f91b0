import AsyncHTTPClient
import DataSources
import Dispatch
import NIOCore
import Basics

/// The AsyncHTTPClient each request goes out on: the direct one, or the one of its proxy.
/// A proxy is a setting of a whole AsyncHTTPClient, so there is one client per proxy in use,
/// made when first needed with the direct one's configuration, on the same event loop.
///
/// A client may name a proxy per source, so clients made for proxies are bounded: beyond
/// `idleProxyClientsKept`, the least recently used one with no request in flight is shut down.
final class ClientRouter: Sendable {
    /// A client to send one request on; `release` once its response or failure is in.
    struct Route: Sendable {
        let client: HTTPClient
        let proxy: ProxyServer?
        fileprivate let router: ClientRouter?

        func release() {
            if let proxy { router?.release(proxy) }
        }
    }

    static let idleProxyClientsKept = 8

    let direct: HTTPClient
    private let configuration: HTTPClient.Configuration
    private let loop: any EventLoopGroup
    /// Read once: the daemon's environment does not change while it runs.
    private let environment: [String: String]

    private struct Proxied {
        let client: HTTPClient
        var inFlight = 0
        var lastUsed: UInt64 = 0
    }

    private struct State {
        var clients: [ProxyServer: Proxied] = [:]
        var uses: UInt64 = 0
        var isShutDown = false
    }

    private let state = LockedValue(State())

    init(direct: HTTPClient, configuration: HTTPClient.Configuration, loop: any EventLoopGroup, environment: [String: String]) {
        self.direct = direct
        self.configuration = configuration
        self.loop = loop
        self.environment = environment
    }

    /// Where a request to `url` goes, with `choice` as its source configured it.
    func route(for url: String, choice: ProxySetting) -> Result<Route, FetchError> {
        let proxy: ProxyServer?
        switch choice {
        case .direct:
            proxy = nil
        case .url(let text):
            switch ProxySelection.parse(text, from: "the proxy") {
            case .success(let server): proxy = server
            case .failure(let error): return .failure(error)
            }
        case .environment:
            switch ProxySelection.proxy(for: url, environment: environment) {
            case .success(let server): proxy = server
            case .failure(let error): return .failure(error)
            }
        }
        guard let proxy else { return .success(Route(client: direct, proxy: nil, router: nil)) }
        return acquire(proxy).map { Route(client: $0, proxy: proxy, router: self) }
    }

    private func acquire(_ proxy: ProxyServer) -> Result<HTTPClient, FetchError> {
        var evicted: [HTTPClient] = []
        defer {
            for client in evicted { client.shutdown(queue: .global()) { _ in } }
        }
        return state.withLock { state in
            guard !state.isShutDown else { return .failure(FetchError(kind: .transport, message: "the HTTP client has shut down")) }
            state.uses += 1
            if var entry = state.clients[proxy] {
                entry.inFlight += 1
                entry.lastUsed = state.uses
                state.clients[proxy] = entry
                return .success(entry.client)
            }
            var configuration = self.configuration
            configuration.proxy = .server(
                host: proxy.host, port: proxy.port,
                authorization: proxy.username.map { .basic(username: $0, password: proxy.password ?? "") })
            let client = HTTPClient(eventLoopGroupProvider: .shared(loop), configuration: configuration)
            state.clients[proxy] = Proxied(client: client, inFlight: 1, lastUsed: state.uses)
            let idle = state.clients.filter { $0.value.inFlight == 0 }.sorted { $0.value.lastUsed < $1.value.lastUsed }
            for (server, entry) in idle.prefix(max(0, state.clients.count - Self.idleProxyClientsKept)) {
                state.clients[server] = nil
                evicted.append(entry.client)
            }
            return .success(client)
        }
    }

    fileprivate func release(_ proxy: ProxyServer) {
        state.withLock { state in
            guard var entry = state.clients[proxy] else { return }
            entry.inFlight = max(0, entry.inFlight - 1)
            state.clients[proxy] = entry
        }
    }

    /// Clients made for proxies, kept now.
    var proxyClientCount: Int { state.withLock { $0.clients.count } }

    /// Shuts every proxy's client down (the direct one is its owner's to shut down).
    func shutdown() {
        let clients = state.withLock { state -> [HTTPClient] in
            state.isShutDown = true
            defer { state.clients.removeAll() }
            return state.clients.values.map(\.client)
        }
        for client in clients { try? client.syncShutdown() }
    }
}
