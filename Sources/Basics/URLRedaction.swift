/// URLs as messages, logs, labels and cache keys show them.
package enum URLRedaction {
    /// `url` without the `user:password@` of its authority; everything else as written. The
    /// authority follows `scheme://` or a leading `//` (RFC 3986 Appendix B); without either it
    /// is what comes before the first `/`, `?` or `#`, as in a proxy written
    /// `user:password@host:port`.
    package static func withoutCredentials(_ url: String) -> String {
        var start = url.startIndex
        if let colon = url.firstIndex(of: ":"), colon != url.startIndex, !url[..<colon].contains(where: { "/?#".contains($0) }),
            url[colon...].hasPrefix("://")
        {
            start = url.index(colon, offsetBy: 3)
        } else if url.hasPrefix("//") {
            start = url.index(url.startIndex, offsetBy: 2)
        }
        let authorityEnd = url[start...].firstIndex { "/?#".contains($0) } ?? url.endIndex
        guard let at = url[start..<authorityEnd].lastIndex(of: "@") else { return url }
        return String(url[..<start]) + String(url[url.index(after: at)...])
    }
}
