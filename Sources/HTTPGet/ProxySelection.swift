#if canImport(Glibc)
import Glibc
#endif
import Basics
import DataSources
import Foundation

/// An HTTP proxy: where to connect, and the credentials it wants. Shown (`description`) as
/// `host:port`, never with its credentials.
package struct ProxyServer: Hashable, Sendable, CustomStringConvertible, CustomReflectable {
    package let host: String
    package let port: Int
    /// For `Proxy-Authorization: Basic`, percent-decoded from the URL.
    let username: String?
    let password: String?

    package init(host: String, port: Int, username: String? = nil, password: String? = nil) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
    }

    package var hasCredentials: Bool { username != nil }

    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// What `dump` and debuggers show: no credentials there either.
    package var customMirror: Mirror { Mirror(self, children: ["host": host, "port": port]) }
}

/// Choosing a proxy for a URL with curl's rules, and reading proxy URLs.
///
/// - `https` URLs: `https_proxy`, else `HTTPS_PROXY`; `http` URLs: `http_proxy`, else
///   `HTTP_PROXY`; then `all_proxy`, else `ALL_PROXY`. The lowercase name wins when both are
///   set; an empty value counts as unset. Unlike curl, `HTTP_PROXY` is read, except in a CGI
///   program (`REQUEST_METHOD` set), where a request's `Proxy:` header arrives under that
///   name ("httpoxy"): the daemon is not one, and users of other tools expect it read.
/// - `no_proxy`, else `NO_PROXY`: names, addresses and networks reached directly, separated
///   by commas or spaces. `*` matches every host. `example.com` (or `.example.com`, or
///   `*.example.com`) matches that host and every name under it, not `notexample.com`. An IP
///   address matches that address, with `/bits` a network (`10.0.0.0/8`, `fd00::/8`); names
///   are not resolved to compare them with addresses. `host:port` (`[::1]:8080`) matches
///   that port only (curl ignores such entries; Go and Python honour them).
/// - A proxy URL without a scheme is `http://`; without a port, 1080 (as curl). Only `http`
///   proxies are supported: requests go through them with `CONNECT`, `https` and `http`
///   URLs alike (AsyncHTTPClient tunnels both).
package enum ProxySelection {
    package static let defaultPort = 1080

    /// The proxy for `url` given `environment`, or nil for a direct connection. An unusable
    /// value (a bad URL, an unsupported scheme) fails with kind `proxy`, naming the variable.
    package static func proxy(for url: String, environment: [String: String]) -> Result<ProxyServer?, FetchError> {
        guard let target = URL(string: url), let scheme = target.scheme?.lowercased(), let host = target.host else { return .success(nil) }
        let port = target.port ?? (scheme == "https" ? 443 : 80)
        var names = scheme == "https" ? ["https_proxy", "HTTPS_PROXY"] : ["http_proxy"]
        if scheme == "http" && value(of: "REQUEST_METHOD", in: environment) == nil { names.append("HTTP_PROXY") }
        names += ["all_proxy", "ALL_PROXY"]
        guard let name = names.first(where: { value(of: $0, in: environment) != nil }), let text = value(of: name, in: environment) else {
            return .success(nil)
        }
        if let noProxy = value(of: "no_proxy", in: environment) ?? value(of: "NO_PROXY", in: environment),
            bypasses(host: host, port: port, noProxy: noProxy)
        {
            return .success(nil)
        }
        return parse(text, from: name).map { $0 }
    }

    private static func value(of name: String, in environment: [String: String]) -> String? {
        guard let value = environment[name]?.trimmingSpaces(), !value.isEmpty else { return nil }
        return value
    }

    /// `text` as a proxy: `[http://][user:password@]host[:port][/]`. `source` names where it
    /// came from in a failure's message, which never holds the credentials.
    package static func parse(_ text: String, from source: String) -> Result<ProxyServer, FetchError> {
        func refuse(_ problem: String) -> Result<ProxyServer, FetchError> {
            .failure(
                FetchError(
                    kind: .proxy,
                    message: "\(source) is not a usable proxy URL (\(URLRedaction.withoutCredentials(text.trimmingSpaces()))): \(problem)"))
        }
        var rest = Substring(text.trimmingSpaces())
        var scheme = "http"
        if let separator = rest.range(of: "://") {
            scheme = rest[..<separator.lowerBound].lowercased()
            rest = rest[separator.upperBound...]
        }
        switch scheme {
        case "http":
            break
        case "https":
            return refuse(
                "https:// proxies (TLS to the proxy) are not supported; use http://, through which https requests still go encrypted")
        case "socks4", "socks4a", "socks5", "socks5h":
            return refuse("SOCKS proxies are not supported; use an http:// proxy")
        default:
            return refuse("the scheme must be http://")
        }
        let authorityEnd = rest.firstIndex { "/?#".contains($0) } ?? rest.endIndex
        guard rest[authorityEnd...].isEmpty || rest[authorityEnd...] == "/" else {
            return refuse("a proxy URL is http://[user:password@]host[:port], with no path or query")
        }
        var authority = rest[..<authorityEnd]
        var username: String?, password: String?
        if let at = authority.lastIndex(of: "@") {
            let userinfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
            let colon = userinfo.firstIndex(of: ":")
            let userPart = String(userinfo[..<(colon ?? userinfo.endIndex)])
            let passwordPart = colon.map { String(userinfo[userinfo.index(after: $0)...]) } ?? ""
            guard let user = userPart.removingPercentEncoding, let secret = passwordPart.removingPercentEncoding else {
                return refuse("the user name or password is not validly percent-encoded")
            }
            if !user.isEmpty || !secret.isEmpty {
                username = user
                password = secret
            }
        }
        var host = authority, portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return refuse("an IPv6 address must end with ]") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { return refuse("unexpected text after the IPv6 address") }
            if !after.isEmpty { portText = after.dropFirst() }
            guard IPAddress(String(host)) != nil else { return refuse("\(host) is not an IPv6 address") }
        } else {
            if let colon = authority.lastIndex(of: ":") {
                host = authority[..<colon]
                portText = authority[authority.index(after: colon)...]
            }
            guard !host.isEmpty else { return refuse("no host") }
            guard host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._".contains($0)) }) else {
                return refuse("the host may hold only letters, digits, '-', '.' and '_' (an IPv6 address goes in [ ])")
            }
        }
        var port = defaultPort
        if let portText {
            guard portText.count <= 5, portText.allSatisfy(\.isASCII), let number = Int(portText), (1...65535).contains(number) else {
                return refuse("the port must be in 1...65535")
            }
            port = number
        }
        return .success(ProxyServer(host: String(host).lowercased(), port: port, username: username, password: password))
    }

    /// Whether `noProxy` sends requests to `host`, `port` directly (see the type's comment).
    package static func bypasses(host: String, port: Int, noProxy: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        while name.hasSuffix(".") { name.removeLast() }
        let address = IPAddress(name)
        for token in noProxy.split(whereSeparator: { $0 == "," || $0.isWhitespace }) {
            var pattern = token.lowercased()
            if pattern == "*" { return true }
            var wantedPort: Int?
            if pattern.hasPrefix("[") {
                guard let close = pattern.firstIndex(of: "]") else { continue }
                let after = pattern[pattern.index(after: close)...]
                if after.hasPrefix(":") { wantedPort = Int(after.dropFirst()) ?? -1 }
                pattern = String(pattern[pattern.index(after: pattern.startIndex)..<close])
            } else if pattern.filter({ $0 == ":" }).count == 1, let colon = pattern.firstIndex(of: ":") {
                wantedPort = Int(pattern[pattern.index(after: colon)...]) ?? -1
                pattern = String(pattern[..<colon])
            }
            if let wantedPort, wantedPort != port { continue }
            if let address {
                var bits: Int?
                if let slash = pattern.firstIndex(of: "/") {
                    bits = Int(pattern[pattern.index(after: slash)...]) ?? -1
                    pattern = String(pattern[..<slash])
                }
                if let network = IPAddress(pattern), address.isIn(network, prefixBits: bits ?? network.bytes.count * 8) { return true }
                continue
            }
            if pattern.hasPrefix("*.") { pattern.removeFirst() }
            while pattern.hasPrefix(".") { pattern.removeFirst() }
            while pattern.hasSuffix(".") { pattern.removeLast() }
            if !pattern.isEmpty, name == pattern || name.hasSuffix("." + pattern) { return true }
        }
        return false
    }
}

/// An IPv4 or IPv6 address, as bytes.
struct IPAddress: Equatable {
    let bytes: [UInt8]

    init?(_ text: String) {
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: v6) { Array($0) }
        } else {
            return nil
        }
    }

    /// Whether the first `prefixBits` bits equal `network`'s (same family only; bits out of range match nothing).
    func isIn(_ network: IPAddress, prefixBits: Int) -> Bool {
        guard bytes.count == network.bytes.count, (0...bytes.count * 8).contains(prefixBits) else { return false }
        for index in 0..<bytes.count {
            let bitsHere = min(8, max(0, prefixBits - index * 8))
            guard bitsHere > 0 else { break }
            let mask = UInt8(truncatingIfNeeded: 0xff << (8 - bitsHere))
            if bytes[index] & mask != network.bytes[index] & mask { return false }
        }
        return true
    }
}
