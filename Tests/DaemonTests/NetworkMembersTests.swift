@testable import Daemon
import DataSources
import JSONKit
import Basics
import Testing

/// `remoteConfiguration.compression` and `.proxy` as `createSource` reads them, what reaches
/// the fetcher, and the User-Agent the daemon adds.
@Suite struct NetworkMembersTests {
    /// Answers every GET with an empty list, keeping the requests.
    final class RecordingFetcher: HTTPFetching {
        let requests = LockedValue<[RemoteRequest]>([])

        func fetch(_ request: RemoteRequest, completion: @escaping @Sendable (Result<RemoteResponse, FetchError>) -> Void) -> FetchHandle {
            requests.withLock { $0.append(request) }
            completion(
                .success(
                    RemoteResponse(
                        url: request.url, finalURL: nil, status: 200,
                        headers: [("Content-Type", "application/json")], body: Array("[]".utf8))))
            return FetchHandle {}
        }

        func shutdown() {}
    }

    static func params(_ remote: JSON) -> JSON {
        ["name": "r", "kind": "remote", "apiPath": "/items", "remoteConfiguration": remote.setting("baseURL", to: "http://api.test")]
    }

    @Test func theMembersReachTheFetcherAndDescribeSourceShowsThemWithoutCredentials() {
        let fetcher = RecordingFetcher()
        let client = WireClient(fetcher: fetcher)
        _ = client.request("initialize")
        for (name, remote) in [
            ("plain", JSON.object([])), ("off", ["compression": false]), ("direct", ["proxy": .null]),
            ("via", ["proxy": "http://alice:pa%40ss@proxy.test:3128"]),
        ] {
            let created = client.request("createSource", Self.params(remote).setting("name", to: JSON(name)))
            let shown = created["result"]?["remoteConfiguration"]
            switch name {
            case "off": #expect(shown?["compression"] == false)
            case "direct": #expect(shown?["proxy"] == .null)
            case "via": #expect(shown?["proxy"] == "http://proxy.test:3128")
            default: #expect(shown?["compression"] == nil && shown?["proxy"] == nil, "defaults are not shown")
            }
            _ = client.request("fetchData", ["source": JSON(name), "wait": true])
        }
        let sent = fetcher.requests.withLock { $0 }
        #expect(sent.map(\.compression) == [true, false, true, true])
        #expect(sent.map(\.proxy) == [.environment, .environment, .direct, .url("http://alice:pa%40ss@proxy.test:3128")])
    }

    @Test func badValuesAreRefusedNamingTheFieldAndNeverTheCredentials() {
        let client = WireClient(fetcher: RecordingFetcher())
        _ = client.request("initialize")
        let cases: [(JSON, String, String)] = [
            (
                ["compression": "yes"], "remoteConfiguration.compression",
                "\"remoteConfiguration.compression\" must be a boolean, got a string"
            ),
            (
                ["proxy": 3128], "remoteConfiguration.proxy",
                "must be an http:// proxy URL (http://[user:password@]host[:port]), or null for a direct connection, got an integer"
            ),
            (
                ["proxy": "https://alice:hunter22@proxy.test"], "remoteConfiguration.proxy",
                "https:// proxies (TLS to the proxy) are not supported"
            ),
            (["proxy": "socks5://alice:hunter22@proxy.test:1080"], "remoteConfiguration.proxy", "SOCKS proxies are not supported"),
            (["proxy": "alice:hunter22@proxy.test:3128"], "remoteConfiguration.proxy", "it does not start with http://"),
            (["proxy": "http://alice:hunter22@proxy.test:70000"], "remoteConfiguration.proxy", "its port 70000 is not in 1...65535"),
            (["proxy": "http://alice:hunter22@proxy.test:3128/path"], "remoteConfiguration.proxy", "it has a path or a query"),
            (["proxy": "http://alice:hunter22%g1@proxy.test:3128"], "remoteConfiguration.proxy", "not validly percent-encoded"),
            (["proxy": "http://alice:hunter22@"], "remoteConfiguration.proxy", "it has no host"),
            (["proxxy": "http://proxy.test:1"], "remoteConfiguration.proxxy", "did you mean \"remoteConfiguration.proxy\"?"),
        ]
        for (remote, field, words) in cases {
            let answer = client.request("createSource", Self.params(remote))
            let error = answer["error"]
            #expect(error?["code"] == -32602, "\(remote)")
            #expect(error?["data"]?["field"] == JSON(field), "\(remote): \(answer)")
            #expect(error?["message"]?.stringValue?.contains(words) == true, "\(remote): \(answer)")
            #expect(!answer.text().contains("hunter22"), "\(remote): \(answer)")
        }
        #expect(client.request("listSources")["result"] == [], "nothing was created")
    }

    @Test func theUserAgentIsMadeOfHTTPTokens() {
        let base = "datasourced/\(DaemonInfo.version)"
        #expect(DaemonInfo.userAgent(clientName: nil, clientVersion: nil) == base)
        #expect(DaemonInfo.userAgent(clientName: nil, clientVersion: "1.0") == base)
        #expect(DaemonInfo.userAgent(clientName: "datasourced.nvim", clientVersion: "0.4.0") == base + " datasourced.nvim/0.4.0")
        #expect(
            DaemonInfo.userAgent(clientName: "datasourced-client (python)", clientVersion: "0.5.0") == base
                + " datasourced-client-python/0.5.0")
        #expect(DaemonInfo.userAgent(clientName: "evil\r\nX-Injected: 1", clientVersion: "1\r\n") == base + " evil-X-Injected-1/1")
        #expect(DaemonInfo.userAgent(clientName: "  ", clientVersion: "1") == base, "no token left: no product")
        #expect(DaemonInfo.userAgent(clientName: "é", clientVersion: nil) == base)
        let long = DaemonInfo.userAgent(
            clientName: String(repeating: "a", count: 10_000), clientVersion: String(repeating: "9", count: 10_000))
        #expect(long == base + " " + String(repeating: "a", count: 64) + "/" + String(repeating: "9", count: 32))
    }

    @Test func initializeAddsTheClientAndASourcesOwnUserAgentIsKept() {
        let fetcher = RecordingFetcher()
        let client = WireClient(fetcher: fetcher)
        _ = client.request("initialize", ["clientInfo": ["name": "tool", "version": "2.1"]])
        _ = client.request("createSource", Self.params([:]))
        _ = client.request("createSource", Self.params(["headers": ["user-agent": "mine/1"]]).setting("name", to: "own"))
        _ = client.request("fetchData", ["source": "r", "wait": true])
        _ = client.request("fetchData", ["source": "own", "wait": true])
        let agents = fetcher.requests.withLock { $0 }.map { $0.headers.filter { $0.name.lowercased() == "user-agent" }.map(\.value) }
        #expect(agents == [["datasourced/\(DaemonInfo.version) tool/2.1"], ["mine/1"]])
    }
}
