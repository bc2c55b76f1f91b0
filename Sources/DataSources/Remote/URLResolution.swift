import Basics

/// Resolving `apiPath` against `baseURL` as Instant Cocoa did: `[NSURL URLWithString:apiPath
/// relativeToURL:baseURL]` (RFC 3986 §5.2), after AFNetworking added a trailing `/` to a
/// base URL that has a path. So `items` appends to the base path, `/items` replaces it, and
/// a full URL replaces the base.
package enum URLResolution {
    struct Components: Equatable {
        var scheme: String?
        var authority: String?
        var path: String
        var query: String?
        var fragment: String?

        /// RFC 3986 Appendix B.
        init(_ text: String) {
            var rest = Substring(text)
            if let colon = rest.firstIndex(of: ":"), !rest[..<colon].contains(where: { "/?#".contains($0) }), colon != rest.startIndex {
                scheme = String(rest[..<colon])
                rest = rest[rest.index(after: colon)...]
            }
            if rest.hasPrefix("//") {
                rest = rest.dropFirst(2)
                let end = rest.firstIndex(where: { "/?#".contains($0) }) ?? rest.endIndex
                authority = String(rest[..<end])
                rest = rest[end...]
            }
            if let hash = rest.firstIndex(of: "#") {
                fragment = String(rest[rest.index(after: hash)...])
                rest = rest[..<hash]
            }
            if let question = rest.firstIndex(of: "?") {
                query = String(rest[rest.index(after: question)...])
                rest = rest[..<question]
            }
            path = String(rest)
        }

        init(scheme: String?, authority: String?, path: String, query: String?, fragment: String?) {
            self.scheme = scheme
            self.authority = authority
            self.path = path
            self.query = query
            self.fragment = fragment
        }

        var text: String {
            var result = ""
            if let scheme { result += scheme + ":" }
            if let authority { result += "//" + authority }
            result += path
            if let query { result += "?" + query }
            if let fragment { result += "#" + fragment }
            return result
        }
    }

    /// RFC 3986 §5.2.2, strict.
    package static func resolve(_ reference: String, against base: String) -> String {
        let base = Components(base), reference = Components(reference)
        var target = Components(scheme: nil, authority: nil, path: "", query: nil, fragment: reference.fragment)
        if reference.scheme != nil {
            target.scheme = reference.scheme
            target.authority = reference.authority
            target.path = removeDotSegments(reference.path)
            target.query = reference.query
        } else {
            if reference.authority != nil {
                target.authority = reference.authority
                target.path = removeDotSegments(reference.path)
                target.query = reference.query
            } else {
                if reference.path.isEmpty {
                    target.path = base.path
                    target.query = reference.query ?? base.query
                } else {
                    target.path = removeDotSegments(reference.path.hasPrefix("/") ? reference.path : merge(base, reference.path))
                    target.query = reference.query
                }
                target.authority = base.authority
            }
            target.scheme = base.scheme
        }
        return target.text
    }

    /// The request URL for `apiPath` under `baseURL`, with `query` merged in: a parameter
    /// named here replaces one of the same name already in the URL.
    package static func requestURL(baseURL: String, apiPath: String, query: [(name: String, value: String)]) -> String {
        var base = Components(baseURL)
        if !base.path.isEmpty, !base.path.hasSuffix("/") { base.path += "/" }
        var url = Components(resolve(apiPath, against: base.text))
        guard !query.isEmpty else { return url.text }
        let names = Set(query.map(\.name))
        var pairs = (url.query ?? "").split(separator: "&").map(String.init).filter { pair in
            let name = pair.split(separator: "=", maxSplits: 1).first.map(String.init) ?? pair
            return !names.contains(percentDecoded(name, formEncoded: true))
        }
        pairs += query.map { percentEncoded($0.name) + "=" + percentEncoded($0.value) }
        url.query = pairs.joined(separator: "&")
        return url.text
    }

    /// Why `url` cannot be requested (no host, a port outside 1...65535), or nil. Checked
    /// when a source is created and before any URL is followed: an HTTP client would trap
    /// on a port that does not fit in 16 bits.
    package static func authorityProblem(in url: String) -> String? {
        guard let authority = Components(url).authority else { return "it has no host" }
        var hostAndPort = Substring(authority)
        if let at = hostAndPort.lastIndex(of: "@") { hostAndPort = hostAndPort[hostAndPort.index(after: at)...] }
        var host = hostAndPort, port: Substring?
        if hostAndPort.hasPrefix("[") {
            guard let close = hostAndPort.firstIndex(of: "]") else { return "its IPv6 host has no closing \"]\"" }
            host = hostAndPort[...close]
            let rest = hostAndPort[hostAndPort.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return "unexpected text after the IPv6 host" }
                port = rest.dropFirst()
            }
        } else if let colon = hostAndPort.lastIndex(of: ":") {
            host = hostAndPort[..<colon]
            port = hostAndPort[hostAndPort.index(after: colon)...]
        }
        if host.isEmpty { return "it has no host" }
        if let port, !port.isEmpty {
            guard port.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(port), (1...65535).contains(number) else {
                return "its port \(port.prefix(20)) is not in 1...65535"
            }
        }
        return nil
    }

    /// The password of `user:password@` in the URL's authority, if any.
    package static func password(in url: String) -> String? {
        guard let authority = Components(url).authority, let at = authority.lastIndex(of: "@") else { return nil }
        let userInfo = authority[..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return nil }
        let password = String(userInfo[userInfo.index(after: colon)...])
        return password.isEmpty ? nil : password
    }

    /// The origin (scheme, host, port) of an absolute URL, for comparing where requests go.
    package static func origin(of url: String) -> String? {
        let components = Components(url)
        guard let scheme = components.scheme?.lowercased(), var authority = components.authority?.lowercased() else { return nil }
        if let at = authority.lastIndex(of: "@") { authority = String(authority[authority.index(after: at)...]) }
        let hasPort = authority.hasPrefix("[") ? authority.contains("]:") : authority.contains(":")
        if !hasPort { authority += scheme == "https" ? ":443" : ":80" }
        return "\(scheme)://\(authority)"
    }

    /// `origin(of:)` as people write it, and as credential allowances hold it: without the
    /// scheme's default port (`https://api.github.com`, `http://127.0.0.1:8080`).
    package static func shownOrigin(of url: String) -> String? {
        guard let origin = origin(of: url) else { return nil }
        for suffix in ["https://": ":443", "http://": ":80"] where origin.hasPrefix(suffix.key) && origin.hasSuffix(suffix.value) {
            return String(origin.dropLast(suffix.value.count))
        }
        return origin
    }

    /// `url` with each of `query` whose name its query does not already have: a URL from the
    /// server keeps its own parameters, and gains the source's others.
    package static func addingMissingQuery(_ query: [(name: String, value: String)], to url: String) -> String {
        var components = Components(url)
        let present = Set(
            (components.query ?? "").split(separator: "&").map { pair in
                percentDecoded(pair.split(separator: "=", maxSplits: 1).first.map(String.init) ?? String(pair))
            })
        let missing = query.filter { !present.contains($0.name) }
        guard !missing.isEmpty else { return url }
        let added = missing.map { percentEncoded($0.name) + "=" + percentEncoded($0.value) }
        components.query = ((components.query.map { $0.isEmpty ? [] : [$0] } ?? []) + added).joined(separator: "&")
        return components.text
    }

    /// `url` with the `user:password@` of `source` when both have one origin (else as it is):
    /// a URL stored without credentials gets back the ones configured, never any of its own.
    package static func withCredentials(of source: String, appliedTo url: String) -> String {
        var components = Components(redacted(url))
        guard let sourceAuthority = Components(source).authority, let at = sourceAuthority.lastIndex(of: "@"),
            let hostAndPort = components.authority, let origin = origin(of: url), origin == self.origin(of: source)
        else {
            return components.text
        }
        components.authority = String(sourceAuthority[...at]) + hostAndPort
        return components.text
    }

    /// The URL without `user:password@`, for messages and logs.
    /// The URL's scheme, lower-cased; nil for a relative reference.
    package static func scheme(of url: String) -> String? {
        Components(url).scheme?.lowercased()
    }

    /// Whether the URL (or network-path reference, `//user@host/x`) has `user[:password]@`.
    package static func hasUserInfo(_ url: String) -> Bool {
        Components(url).authority?.contains("@") ?? false
    }

    package static func redacted(_ url: String) -> String {
        URLRedaction.withoutCredentials(url)
    }

    private static func merge(_ base: Components, _ path: String) -> String {
        if base.authority != nil, base.path.isEmpty { return "/" + path }
        guard let slash = base.path.lastIndex(of: "/") else { return path }
        return base.path[...slash] + path
    }

    /// RFC 3986 §5.2.4.
    static func removeDotSegments(_ path: String) -> String {
        var input = Substring(path)
        var output: [Substring] = []
        while !input.isEmpty {
            if input.hasPrefix("../") {
                input = input.dropFirst(3)
            } else if input.hasPrefix("./") {
                input = input.dropFirst(2)
            } else if input.hasPrefix("/./") {
                input = input.dropFirst(2)
            } else if input == "/." {
                input = "/"
            } else if input.hasPrefix("/../") {
                input = input.dropFirst(3)
                if !output.isEmpty { output.removeLast() }
            } else if input == "/.." {
                input = "/"
                if !output.isEmpty { output.removeLast() }
            } else if input == "." || input == ".." {
                input = ""
            } else {
                let start = input.hasPrefix("/") ? input.index(after: input.startIndex) : input.startIndex
                let end = input[start...].firstIndex(of: "/") ?? input.endIndex
                output.append(input[..<end])
                input = input[end...]
            }
        }
        return output.joined()
    }

    static func percentEncoded(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                result.unicodeScalars.append("%")
                result.unicodeScalars.append(hex[Int(byte >> 4)])
                result.unicodeScalars.append(hex[Int(byte & 15)])
            }
        }
        return result
    }

    /// RFC 3986 §2.1 percent-decoding: `%` and two hex digits (either case) become that byte.
    /// A `%` not followed by two hex digits is kept as it is, with what follows it: malformed
    /// input is passed through, never dropped. `formEncoded` also reads `+` as a space, as
    /// HTML forms (and most servers, in a query) do; RFC 3986 itself gives `+` no meaning.
    package static func percentDecoded(_ text: some StringProtocol, formEncoded: Bool = false) -> String {
        let utf8 = Array(text.utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%"), index + 2 < utf8.count,
                let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 3
                continue
            }
            bytes.append(formEncoded && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            index += 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
