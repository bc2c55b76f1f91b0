import HTTPGet
import Testing

/// Which proxy a URL gets from which environment: curl's rules, as a pure function of literal
/// environments.
@Suite struct ProxySelectionTests {
    /// The proxy chosen for `url`, as `host:port`, "direct", or the failure's message.
    func chosen(_ url: String, _ environment: [String: String]) -> String {
        switch ProxySelection.proxy(for: url, environment: environment) {
        case .success(let proxy?): return proxy.description
        case .success(nil): return "direct"
        case .failure(let error): return "\(error.kind): \(error.message)"
        }
    }

    @Test func eachSchemeHasItsVariablesAndAllProxyIsTheFallback() {
        let https = "https://api.example.com/items", http = "http://api.example.com/items"
        #expect(chosen(https, ["HTTPS_PROXY": "http://s:1"]) == "s:1")
        #expect(chosen(https, ["https_proxy": "http://s:1"]) == "s:1")
        #expect(chosen(https, ["HTTP_PROXY": "http://h:2"]) == "direct", "an http proxy variable is not for https URLs")
        #expect(chosen(http, ["HTTP_PROXY": "http://h:2"]) == "h:2")
        #expect(chosen(http, ["http_proxy": "http://h:2"]) == "h:2")
        #expect(chosen(http, ["HTTPS_PROXY": "http://s:1"]) == "direct")
        for url in [https, http] {
            #expect(chosen(url, ["ALL_PROXY": "http://a:3"]) == "a:3")
            #expect(chosen(url, ["all_proxy": "http://a:3"]) == "a:3")
            #expect(chosen(url, [:]) == "direct")
        }
        #expect(chosen(https, ["HTTPS_PROXY": "http://s:1", "ALL_PROXY": "http://a:3"]) == "s:1", "the scheme's variable comes first")
    }

    @Test func lowercaseWinsAndEmptyCountsAsUnset() {
        let url = "https://api.example.com/"
        #expect(chosen(url, ["https_proxy": "http://lower:1", "HTTPS_PROXY": "http://upper:2"]) == "lower:1")
        #expect(chosen(url, ["all_proxy": "http://lower:1", "ALL_PROXY": "http://upper:2"]) == "lower:1")
        #expect(chosen(url, ["https_proxy": "", "HTTPS_PROXY": "http://upper:2"]) == "upper:2")
        #expect(chosen(url, ["HTTPS_PROXY": "  ", "ALL_PROXY": "http://a:3"]) == "a:3")
    }

    @Test func uppercaseHTTPProxyIsIgnoredInACGIProgramOnly() {
        // httpoxy: a CGI program gets a request's `Proxy:` header as HTTP_PROXY.
        #expect(chosen("http://x.test/", ["HTTP_PROXY": "http://evil:1", "REQUEST_METHOD": "GET"]) == "direct")
        #expect(chosen("http://x.test/", ["http_proxy": "http://ok:1", "REQUEST_METHOD": "GET"]) == "ok:1")
        #expect(chosen("http://x.test/", ["HTTP_PROXY": "http://ok:1"]) == "ok:1")
    }

    @Test func noProxyNamesHostsAndTheDomainsUnderThem() {
        let proxy = ["HTTPS_PROXY": "http://p:1"]
        func direct(_ host: String, _ noProxy: String, port: Int? = nil) -> Bool {
            var environment = proxy
            environment["NO_PROXY"] = noProxy
            return chosen("https://\(host)\(port.map { ":\($0)" } ?? "")/x", environment) == "direct"
        }
        #expect(direct("anything.test", "*"))
        #expect(direct("example.com", "example.com"))
        #expect(direct("api.example.com", "example.com"))
        #expect(direct("a.b.example.com", "example.com"))
        #expect(!direct("notexample.com", "example.com"), "a suffix matches at a dot only")
        #expect(!direct("example.com.evil.test", "example.com"))
        #expect(direct("example.com", ".example.com"), "a leading dot is ignored, as curl does")
        #expect(direct("api.example.com", ".example.com"))
        #expect(direct("api.example.com", "*.example.com"))
        #expect(direct("API.Example.COM", "example.com"), "names compare case-insensitively")
        #expect(direct("api.example.com.", "example.com"), "a trailing dot is ignored")
        #expect(direct("example.com", "example.com."))
        #expect(direct("b.test", "a.test, b.test"))
        #expect(direct("b.test", "a.test b.test"), "spaces separate too")
        #expect(direct("b.test", ",,a.test,,b.test,"))
        #expect(!direct("c.test", "a.test,b.test"))
        #expect(!direct("example.com", ""))
        #expect(!direct("example.com", "*.*"), "only * alone matches every host")
    }

    @Test func noProxyPortsAndAddresses() {
        let proxy = ["HTTPS_PROXY": "http://p:1"]
        func direct(_ hostAndPort: String, _ noProxy: String) -> Bool {
            var environment = proxy
            environment["no_proxy"] = noProxy
            return chosen("https://\(hostAndPort)/x", environment) == "direct"
        }
        #expect(direct("example.com:8443", "example.com:8443"))
        #expect(!direct("example.com:9443", "example.com:8443"), "a port given matches that port only")
        #expect(direct("example.com", "example.com:443"), "the scheme's default port")
        #expect(direct("example.com:9443", "example.com"), "no port: every port")
        #expect(direct("127.0.0.1", "127.0.0.1"))
        #expect(!direct("127.0.0.2", "127.0.0.1"))
        #expect(direct("10.1.2.3", "10.0.0.0/8"))
        #expect(!direct("11.1.2.3", "10.0.0.0/8"))
        #expect(direct("192.168.7.9", "192.168.0.0/16"))
        #expect(direct("192.168.7.9:8080", "192.168.0.0/16"))
        #expect(!direct("192.168.7.9", "192.168.0.0/33"), "bits out of range match nothing")
        #expect(direct("[::1]", "::1"))
        #expect(direct("[::1]:8080", "[::1]:8080"))
        #expect(!direct("[::1]:8081", "[::1]:8080"))
        #expect(direct("[fd00::5]", "fd00::/8"))
        #expect(!direct("[fe80::5]", "fd00::/8"))
        #expect(!direct("127.0.0.1", "localhost"), "names are not resolved")
        #expect(!direct("localhost", "127.0.0.1"))
        #expect(!direct("[::1]", "127.0.0.1"), "families do not mix")
        #expect(direct("localhost:3000", "localhost"))
    }

    @Test func noProxyLowercaseWins() {
        let environment = ["HTTPS_PROXY": "http://p:1", "no_proxy": "a.test", "NO_PROXY": "b.test"]
        #expect(chosen("https://a.test/", environment) == "direct")
        #expect(chosen("https://b.test/", environment) == "p:1")
    }

    @Test func proxyURLsAreReadAsCurlReadsThem() throws {
        func parsed(_ text: String) -> ProxyServer? { try? ProxySelection.parse(text, from: "HTTPS_PROXY").get() }
        #expect(parsed("http://proxy.corp:3128")?.description == "proxy.corp:3128")
        #expect(parsed("proxy.corp:3128")?.description == "proxy.corp:3128", "no scheme: http")
        #expect(parsed("http://proxy.corp")?.port == 1080, "no port: 1080, as curl")
        #expect(parsed("HTTP://Proxy.Corp:8080/")?.description == "proxy.corp:8080")
        #expect(parsed("http://[::1]:3128")?.description == "[::1]:3128")
        #expect(parsed("  http://p:1  ")?.description == "p:1")
        let withCredentials = try #require(parsed("http://al%40ice:p%3Ass@proxy:1"))
        #expect(withCredentials.hasCredentials)
        #expect(withCredentials.description == "proxy:1")
        #expect(!String(describing: withCredentials).contains("ice"))
        #expect(!String(reflecting: withCredentials).contains("ice"))
        var dumped = ""
        dump(withCredentials, to: &dumped)
        #expect(!dumped.contains("ice") && !dumped.contains("p:ss"), "\(dumped)")
        #expect(parsed("http://proxy:1")?.hasCredentials == false)
    }

    @Test func unusableProxyURLsFailNamingTheVariableNotTheCredentials() {
        let cases: [(String, String)] = [
            ("https://user:hunter22@p:1", "https:// proxies (TLS to the proxy) are not supported"),
            ("socks5://user:hunter22@p:1080", "SOCKS proxies are not supported"),
            ("ftp://user:hunter22@p:1", "the scheme must be http://"),
            ("http://user:hunter22@p:1/path", "with no path or query"),
            ("http://user:hunter22@p:0", "the port must be in 1...65535"),
            ("http://user:hunter22@p:99999999999999999999", "the port must be in 1...65535"),
            ("http://user:hunter22@:1", "no host"),
            ("http://user:hunter22@p q:1", "the host may hold only"),
            ("http://user:hunter22%zz@p:1", "not validly percent-encoded"),
            ("http://user:hunter22@[::1:1", "an IPv6 address must end with ]"),
        ]
        for (text, problem) in cases {
            let message = chosen("https://api.test/", ["HTTPS_PROXY": text])
            #expect(message.hasPrefix("proxy: HTTPS_PROXY is not a usable proxy URL"), "\(text): \(message)")
            #expect(message.contains(problem), "\(text): \(message)")
            #expect(!message.contains("hunter22") && !message.contains("user:hunter22"), "\(text): \(message)")
        }
    }
}
