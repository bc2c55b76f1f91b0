// HTTP's text, read one way everywhere: its optional white space, its header lookup and its dates.

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's "optional white space", RFC 9110
    /// §5.6.3); also what lists written by people (`--redact a, b`, NO_PROXY) are trimmed of.
    package func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}

extension Sequence<(name: String, value: String)> {
    /// Every value of header `name`, in order (names compare case-insensitively, RFC 9110 §5.1).
    package func values(ofHeader name: String) -> [String] {
        compactMap { HTTPHeaderName.equal($0.name, name) ? $0.value : nil }
    }

    /// Whether header `name` is present (names compare case-insensitively).
    package func contains(header name: String) -> Bool {
        contains { HTTPHeaderName.equal($0.name, name) }
    }
}

package enum HTTPHeaderName {
    /// Header names are ASCII tokens: they compare case-insensitively, byte by byte.
    package static func equal(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { lowered($0) == lowered($1) }
    }

    private static func lowered(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }
}

/// IMF-fixdate (RFC 9110 §5.6.7), the one HTTP date format servers send.
package enum HTTPDate {
    /// `Sun, 06 Nov 1994 08:49:37 GMT` as seconds since 1970, or nil.
    package static func seconds(_ text: String) -> Double? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", let day = Int(parts[1]), let year = Int(parts[3]),
            let month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"].firstIndex(
                of: String(parts[2])),
            (1...31).contains(day), (1970...9999).contains(year)
        else { return nil }
        let time = parts[4].split(separator: ":").compactMap { Int($0) }
        guard time.count == 3, (0...23).contains(time[0]), (0...59).contains(time[1]), (0...60).contains(time[2]) else { return nil }
        // Days from 1970-01-01 to the date (proleptic Gregorian; Howard Hinnant's algorithm).
        let y = month < 2 ? year - 1 : year
        let m = month + 1
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Double(days * 86_400 + time[0] * 3600 + time[1] * 60 + time[2])
    }
}
