#if canImport(Glibc)
import Glibc
#endif
import AsyncHTTPClient
import DataSources
@testable import HTTPGet
import JSONKit
import NIOHTTP1
import NIOPosix
import Replay
import Testing

/// GETs through a CONNECT proxy on loopback: chosen from the environment or the request,
/// credentials sent to the proxy alone, and refusals reported as the proxy's.
@Suite(.serialized) struct ProxyTests {
    static func get(
        _ client: HTTPGetClient, _ url: String, proxy: ProxySetting = .environment,
        headers: [(name: String, value: String)] = []
    ) async -> Result<RemoteResponse, FetchError> {
        var request = RemoteRequest(url: url, headers: headers, timeoutSeconds: 20, maximumBodySize: 1 << 20)
        request.proxy = proxy
        return await withCheckedContinuation { continuation in
            _ = client.fetch(request) { continuation.resume(returning: $0) }
        }
    }

    static func origin() throws -> ScriptedHTTPServer {
        try ScriptedHTTPServer { head in ScriptedHTTPServer.Reply(parts: [Array("{\"path\": \"\(head.uri)\"}".utf8)]) }
    }

    @Test func aGetGoesThroughTheProxyTheEnvironmentNames() async throws {
        let proxy = try ConnectProxy(), server = try Self.origin()
        defer {
            proxy.stop()
            server.stop()
        }
        let client = HTTPGetClient(environment: ["HTTP_PROXY": "http://127.0.0.1:\(proxy.port)"])
        defer { client.shutdown() }
        guard case .success(let response) = await Self.get(client, server.baseURL + "/items") else {
            Issue.record("failed")
            return
        }
        #expect(response.body == Array("{\"path\": \"/items\"}".utf8))
        #expect(proxy.connects == ["127.0.0.1:\(server.port)"])
        // An https URL goes through CONNECT the same way (the handshake then fails: the server
        // speaks plain HTTP; TLS is not what this shows).
        let secure = HTTPGetClient(environment: ["HTTPS_PROXY": "http://127.0.0.1:\(proxy.port)"])
        defer { secure.shutdown() }
        _ = await Self.get(secure, "https://127.0.0.1:\(server.port)/items")
        #expect(proxy.connects == ["127.0.0.1:\(server.port)", "127.0.0.1:\(server.port)"])
    }

    /// A POST's body and method arrive through the proxy as sent, and the proxy's credentials
    /// stay with the proxy.
    @Test func aPostGoesThroughTheProxyWithItsBody() async throws {
        let proxy = try ConnectProxy(.init(requiredAuthorization: "Basic " + Array("user:pass".utf8).base64))
        let query: JSON = ["query": "{ books(first: 2) { edges { node { id } } } }", "variables": ["after": "YXJyYXk6MQ=="]]
        let server = try FixtureServer(fixtures: [["path": "/graphql", "method": "POST", "requestBody": query, "body": ["data": 1]]])
        defer {
            proxy.stop()
            server.stop()
        }
        let client = HTTPGetClient(environment: ["HTTP_PROXY": "http://user:pass@127.0.0.1:\(proxy.port)"])
        defer { client.shutdown() }
        var request = RemoteRequest(url: server.baseURL + "/graphql", headers: [], timeoutSeconds: 20, maximumBodySize: 1 << 20)
        request.method = .post
        request.body = query.encoded()
        let result = await withCheckedContinuation { continuation in
            _ = client.fetch(request) { continuation.resume(returning: $0) }
        }
        guard case .success(let response) = result else {
            Issue.record("failed: \(result)")
            return
        }
        #expect(try JSON.parse(response.body) == ["data": 1], "the route that matches the body answered")
        #expect(proxy.connects == ["127.0.0.1:\(server.port)"])
        let received = server.takeReceivedRequests()
        #expect(received.map(\.method) == ["POST"])
        #expect(received.first.map { try? JSON.parse($0.body) } == query)
        #expect(received.first?.headers.contains { $0.name == "content-type" && $0.value == "application/json" } == true)
        #expect(received.first?.headers.contains { $0.name == "proxy-authorization" } == false)
    }

    @Test func noProxyAndTheRequestsOwnChoiceOverrideTheEnvironment() async throws {
        let proxy = try ConnectProxy(), server = try Self.origin()
        defer {
            proxy.stop()
            server.stop()
        }
        let proxied = ["HTTP_PROXY": "http://127.0.0.1:\(proxy.port)"]
        let exempt = HTTPGetClient(environment: proxied.merging(["NO_PROXY": "localhost, 127.0.0.0/8"]) { $1 })
        defer { exempt.shutdown() }
        guard case .success = await Self.get(exempt, server.baseURL + "/a") else {
            Issue.record("NO_PROXY: failed")
            return
        }
        #expect(proxy.connects.isEmpty, "NO_PROXY names the host")

        let client = HTTPGetClient(environment: proxied)
        defer { client.shutdown() }
        guard case .success = await Self.get(client, server.baseURL + "/b", proxy: .direct) else {
            Issue.record("direct: failed")
            return
        }
        #expect(proxy.connects.isEmpty, "a direct connection, whatever the environment says")

        let unproxied = HTTPGetClient(environment: [:])
        defer { unproxied.shutdown() }
        guard case .success = await Self.get(unproxied, server.baseURL + "/c", proxy: .url("http://127.0.0.1:\(proxy.port)")) else {
            Issue.record("explicit proxy: failed")
            return
        }
        #expect(proxy.connects.count == 1, "the request's proxy, with no variable set")
        #expect(server.requests.map(\.uri) == ["/a", "/b", "/c"])
    }

    @Test func credentialsInTheProxyURLGoToTheProxyAlone() async throws {
        // alice:p@ss, percent-encoded in the URL.
        let expected = "Basic " + Array("alice:p@ss".utf8).base64
        let proxy = try ConnectProxy(.init(requiredAuthorization: expected)), server = try Self.origin()
        defer {
            proxy.stop()
            server.stop()
        }
        let client = HTTPGetClient(environment: ["http_proxy": "http://alice:p%40ss@127.0.0.1:\(proxy.port)"])
        defer { client.shutdown() }
        guard case .success = await Self.get(client, server.baseURL + "/items") else {
            Issue.record("failed")
            return
        }
        #expect(proxy.authorizations == [expected])
        let seen = try #require(server.requests.first)
        #expect(seen.headers["proxy-authorization"].isEmpty, "the server never sees the proxy's credentials")
        #expect(seen.headers["authorization"].isEmpty)
    }

    @Test func aProxyThatWantsCredentialsFailsAsProxyWithoutShowingThem() async throws {
        let proxy = try ConnectProxy(.init(requiredAuthorization: "Basic " + Array("alice:right".utf8).base64)), server = try Self.origin()
        defer {
            proxy.stop()
            server.stop()
        }
        let client = HTTPGetClient(environment: [:])
        defer { client.shutdown() }
        guard case .failure(let none) = await Self.get(client, server.baseURL + "/items", proxy: .url("http://127.0.0.1:\(proxy.port)"))
        else {
            Issue.record("no credentials: succeeded")
            return
        }
        #expect(none.kind == .proxy)
        #expect(
            none.message
                == "the proxy 127.0.0.1:\(proxy.port) answered 407 Proxy Authentication Required: it wants credentials, and the proxy URL has none (http://user:password@host:port)"
        )
        guard
            case .failure(let wrong) = await Self.get(
                client, server.baseURL + "/items",
                proxy: .url("http://alice:wrong-secret@127.0.0.1:\(proxy.port)"))
        else {
            Issue.record("wrong credentials: succeeded")
            return
        }
        #expect(wrong.kind == .proxy)
        #expect(
            wrong.message
                == "the proxy 127.0.0.1:\(proxy.port) answered 407 Proxy Authentication Required: it refused the credentials in the proxy URL"
        )
        #expect(server.requests.isEmpty)
    }

    @Test func aProxyThatRefusesFailsAsProxyWithWhatItAnswered() async throws {
        let proxy = try ConnectProxy(.init(refuses: true)), server = try Self.origin()
        defer {
            proxy.stop()
            server.stop()
        }
        let client = HTTPGetClient(environment: ["HTTP_PROXY": "http://bob:hunter22@127.0.0.1:\(proxy.port)"])
        defer { client.shutdown() }
        guard case .failure(let error) = await Self.get(client, server.baseURL + "/items") else {
            Issue.record("succeeded")
            return
        }
        #expect(error.kind == .proxy)
        #expect(
            error.message == "the proxy 127.0.0.1:\(proxy.port) refused to connect to 127.0.0.1:\(server.port): it answered 403 Forbidden")
        #expect(!error.message.contains("bob") && !error.message.contains("hunter22"))
    }

    @Test func anUnreachableProxyFailsAsProxy() async throws {
        let port = HTTPGetTests.closedPort()
        let client = HTTPGetClient(environment: ["HTTP_PROXY": "http://carol:hunter22@127.0.0.1:\(port)"])
        defer { client.shutdown() }
        guard case .failure(let error) = await Self.get(client, "http://127.0.0.1:1/items") else {
            Issue.record("succeeded")
            return
        }
        #expect(error.kind == .proxy)
        #expect(error.message == "could not connect to the proxy 127.0.0.1:\(port): connection refused")
        guard case .failure(let unknown) = await Self.get(client, "http://127.0.0.1:1/items", proxy: .url("http://proxy.invalid:3128"))
        else {
            Issue.record("an unknown proxy host: succeeded")
            return
        }
        #expect(unknown.kind == .proxy)
        #expect(unknown.message == "could not resolve the proxy's host proxy.invalid")
    }

    @Test func aBadProxyVariableFailsEachRequestNamingIt() async throws {
        let client = HTTPGetClient(environment: ["HTTPS_PROXY": "socks5://dave:hunter22@127.0.0.1:1080"])
        defer { client.shutdown() }
        guard case .failure(let error) = await Self.get(client, "https://127.0.0.1:1/items") else {
            Issue.record("succeeded")
            return
        }
        #expect(error.kind == .proxy)
        #expect(
            error.message
                == "HTTPS_PROXY is not a usable proxy URL (socks5://127.0.0.1:1080): SOCKS proxies are not supported; use an http:// proxy")
    }

    @Test func clientsMadeForProxiesAreBounded() throws {
        let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.connectionPool.retryConnectionEstablishment = false
        let direct = HTTPClient(eventLoopGroupProvider: .shared(loop), configuration: configuration)
        let router = ClientRouter(direct: direct, configuration: configuration, loop: loop, environment: [:])
        defer {
            router.shutdown()
            try? direct.syncShutdown()
            try? loop.syncShutdownGracefully()
        }
        // One in flight throughout: never evicted.
        let held = try router.route(for: "http://a.test/", choice: .url("http://held:1")).get()
        for port in 1...20 {
            try router.route(for: "http://a.test/", choice: .url("http://proxy:\(port)")).get().release()
        }
        #expect(router.proxyClientCount == ClientRouter.idleProxyClientsKept)
        let again = try router.route(for: "http://a.test/", choice: .url("http://held:1")).get()
        #expect(again.client === held.client, "the client in use was kept")
        held.release()
        again.release()
        let direct2 = try router.route(for: "http://a.test/", choice: .direct).get()
        #expect(direct2.client === direct)
    }
}

extension Array where Element == UInt8 {
    var base64: String {
        let table = [Character]("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var text = ""
        for start in stride(from: 0, to: count, by: 3) {
            let chunk = self[start..<Swift.min(start + 3, count)]
            let value = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
            for index in 0..<4 {
                text.append(index <= chunk.count ? table[(value >> (18 - 6 * index)) & 63] : "=")
            }
        }
        return text
    }
}
