extension DaemonInfo {
    /// `User-Agent` of every request whose source sets none: `datasourced/<version>`, then the
    /// client's `clientInfo` from `initialize` as a product of its own (`datasourced/0.2.0
    /// datasourced.nvim/0.4.0`), so an API's operators can tell which tool calls them.
    ///
    /// The client's name and version are made into HTTP tokens (RFC 9110 §5.6.2): a run of
    /// other characters becomes one `-` (`datasourced-client (python)` is
    /// `datasourced-client-python`), and each is bounded, so no client text can break the
    /// header or make it huge.
    static func userAgent(clientName: String?, clientVersion: String?) -> String {
        var agent = "\(name)/\(version)"
        guard let product = clientName.map({ token($0, limit: 64) }), !product.isEmpty else { return agent }
        agent += " " + product
        if let version = clientVersion.map({ token($0, limit: 32) }), !version.isEmpty { agent += "/" + version }
        return agent
    }

    private static func token(_ text: String, limit: Int) -> String {
        var result = ""
        var pendingDash = false
        for scalar in text.unicodeScalars {
            if scalar.isASCII, isTokenCharacter(UInt8(scalar.value)) {
                if pendingDash && !result.isEmpty { result.append("-") }
                pendingDash = false
                result.unicodeScalars.append(scalar)
                if result.utf8.count >= limit { break }
            } else {
                pendingDash = true
            }
        }
        return String(result.prefix(limit))
    }

    /// `tchar`: `!#$%&'*+-.^_`|~`, digits and letters.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
            return true
        default: return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}
