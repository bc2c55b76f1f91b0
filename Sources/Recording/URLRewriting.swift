/// Rewrites the URLs inside one string of a recording: credentials (`user:pw@`) removed,
/// query values under secret names replaced by the placeholder, and the origins the session
/// talked to replaced by `${fixtures}`, the base URL of replay's fixture server.
struct URLRewriting {
    /// `scheme://host[:port]`, lowercased, of every API the session used.
    var origins: Set<String> = []

    /// The origin of an absolute http(s) URL, without credentials; nil for anything else.
    static func origin(of url: String) -> String? {
        guard let parts = AbsoluteURL(url[...]) else { return nil }
        return parts.origin
    }

    /// `text` rewritten, and the secret values found in it (credentials, secret query values).
    func rewrite(_ text: String, replacingOrigins: Bool, isSecretName: (String) -> Bool) -> (text: String, secrets: [String]) {
        guard text.contains("://") || text.contains("?") else { return (text, []) }
        var secrets: [String] = []
        var output = ""
        var token = ""
        func flush() {
            if !token.isEmpty {
                output += rewriteToken(token, replacingOrigins: replacingOrigins, isSecretName: isSecretName, secrets: &secrets)
            }
            token = ""
        }
        for character in text {
            if character.isWhitespace || "\"'<>".contains(character) {
                flush()
                output.append(character)
            } else {
                token.append(character)
            }
        }
        flush()
        return (output, secrets)
    }

    private func rewriteToken(_ token: String, replacingOrigins: Bool, isSecretName: (String) -> Bool, secrets: inout [String]) -> String {
        var prefix = ""
        var rest = Substring(token)
        let lower = token.lowercased()
        if let start = lower.firstRange(of: "https://") ?? lower.firstRange(of: "http://") {
            let offset = lower.distance(from: lower.startIndex, to: start.lowerBound)
            let urlStart = token.index(token.startIndex, offsetBy: offset)
            if let url = AbsoluteURL(token[urlStart...]) {
                prefix = String(token[..<urlStart])
                if let userinfo = url.userinfo {
                    secrets.append(userinfo)
                    secrets.append(URLRewriting.percentDecoded(userinfo))
                    secrets.append(Base64.encode(Array(URLRewriting.percentDecoded(userinfo).utf8)))
                    if let colon = userinfo.firstIndex(of: ":") {
                        let password = String(userinfo[userinfo.index(after: colon)...])
                        secrets.append(password)
                        secrets.append(URLRewriting.percentDecoded(password))
                    }
                }
                prefix += replacingOrigins && origins.contains(url.origin) ? "${fixtures}" : "\(url.scheme)://\(url.hostAndPort)"
                rest = url.rest
            }
        }
        return prefix + redactingQuery(rest, isSecretName: isSecretName, secrets: &secrets)
    }

    /// The query's values under secret names replaced by the (percent-encoded) placeholder.
    private func redactingQuery(_ text: Substring, isSecretName: (String) -> Bool, secrets: inout [String]) -> String {
        guard let question = text.firstIndex(of: "?") else { return String(text) }
        let queryEnd = text[question...].firstIndex(of: "#") ?? text.endIndex
        let query = text[text.index(after: question)..<queryEnd]
        let pairs = query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let name = pair[..<equals], value = pair[pair.index(after: equals)...]
            guard !value.isEmpty, value != Secrets.queryPlaceholder, isSecretName(URLRewriting.percentDecoded(String(name))) else {
                return String(pair)
            }
            secrets.append(String(value))
            secrets.append(URLRewriting.percentDecoded(String(value)))
            return "\(name)=\(Secrets.queryPlaceholder)"
        }
        return String(text[...question]) + pairs.joined(separator: "&") + String(text[queryEnd...])
    }

    static func percentDecoded(_ text: String) -> String {
        var bytes: [UInt8] = []
        let utf8 = Array(text.utf8)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "%"), index + 2 < utf8.count,
                let value = UInt8(String(decoding: utf8[index + 1...index + 2], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                index += 3
            } else {
                bytes.append(utf8[index] == UInt8(ascii: "+") ? 32 : utf8[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// The parts of `scheme://[userinfo@]host[:port]rest` that a recording rewrites.
struct AbsoluteURL {
    let scheme: String
    let userinfo: String?
    let hostAndPort: String
    /// Path, query and fragment, as written.
    let rest: Substring

    var origin: String { "\(scheme)://\(hostAndPort.lowercased())" }

    init?(_ text: Substring) {
        guard let separator = text.firstRange(of: "://") else { return nil }
        let scheme = text[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        let afterScheme = text[separator.upperBound...]
        let authorityEnd = afterScheme.firstIndex(where: { "/?#".contains($0) }) ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        guard !authority.isEmpty else { return nil }
        if let at = authority.lastIndex(of: "@") {
            userinfo = String(authority[..<at])
            hostAndPort = String(authority[authority.index(after: at)...])
        } else {
            userinfo = nil
            hostAndPort = String(authority)
        }
        self.scheme = scheme
        rest = afterScheme[authorityEnd...]
    }
}

/// Standard base64, for the `Authorization: Basic` form of URL credentials.
enum Base64 {
    static func encode(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var output: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let value = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
            for position in 0..<4 {
                output.append(position <= chunk.count ? alphabet[(value >> (18 - 6 * position)) & 63] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }
}
