/// RFC 8288 `Link` header values: `<https://api.example.com/items?page=2>; rel="next",
/// <...>; rel="last"`. Several links in one value, several values (headers) in order,
/// quoted parameters with escapes, `rel` with several space-separated types, relative URIs
/// (resolved by the caller against the request's URL).
public enum LinkHeader {
    public struct Link: Sendable, Equatable {
        public let target: String
        /// Relation types, lower-cased.
        public let relations: [String]
        /// Other parameters, names lower-cased, values unquoted.
        public let parameters: [String: String]
    }

    /// Every link in the values, in order; malformed parts are skipped, never trusted.
    public static func parse(_ values: [String]) -> [Link] {
        values.flatMap { parse(Array($0.utf8)) }
    }

    /// The target of the first link with relation `relation`, if any.
    public static func target(_ relation: String, in values: [String]) -> String? {
        let wanted = relation.lowercased()
        return parse(values).first { $0.relations.contains(wanted) }?.target
    }

    private static func parse(_ bytes: [UInt8]) -> [Link] {
        var links: [Link] = []
        var index = 0
        func skip(_ predicate: (UInt8) -> Bool) { while index < bytes.count, predicate(bytes[index]) { index += 1 } }
        func isSpace(_ byte: UInt8) -> Bool { byte == 32 || byte == 9 }
        while index < bytes.count {
            skip { isSpace($0) || $0 == UInt8(ascii: ",") }
            guard index < bytes.count else { break }
            guard bytes[index] == UInt8(ascii: "<"), let close = bytes[index...].firstIndex(of: UInt8(ascii: ">")) else {
                // Not a link: skip to the next one.
                skipToNextLink(bytes, &index)
                continue
            }
            let target = String(decoding: bytes[(index + 1)..<close], as: UTF8.self)
            index = close + 1
            var relations: [String] = []
            var parameters: [String: String] = [:]
            while true {
                skip(isSpace)
                guard index < bytes.count, bytes[index] == UInt8(ascii: ";") else { break }
                index += 1
                skip(isSpace)
                let nameStart = index
                skip { $0 != UInt8(ascii: "=") && $0 != UInt8(ascii: ";") && $0 != UInt8(ascii: ",") && !isSpace($0) }
                let name = String(decoding: bytes[nameStart..<index], as: UTF8.self).lowercased()
                skip(isSpace)
                var value = ""
                if index < bytes.count, bytes[index] == UInt8(ascii: "=") {
                    index += 1
                    skip(isSpace)
                    value = readValue(bytes, &index)
                }
                guard !name.isEmpty else { continue }
                if name == "rel" {
                    // The first rel parameter wins (RFC 8288 §3.3).
                    if relations.isEmpty { relations = value.lowercased().split(separator: " ").map(String.init) }
                } else if parameters[name] == nil {
                    parameters[name] = value
                }
            }
            links.append(Link(target: target, relations: relations, parameters: parameters))
        }
        return links
    }

    /// A token, or a quoted string with `\` escapes.
    private static func readValue(_ bytes: [UInt8], _ index: inout Int) -> String {
        guard index < bytes.count else { return "" }
        if bytes[index] == UInt8(ascii: "\"") {
            index += 1
            var value: [UInt8] = []
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                if bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count { index += 1 }
                value.append(bytes[index])
                index += 1
            }
            if index < bytes.count { index += 1 }
            return String(decoding: value, as: UTF8.self)
        }
        let start = index
        while index < bytes.count, ![UInt8(ascii: ";"), UInt8(ascii: ","), 32, 9].contains(bytes[index]) { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// Past the next comma outside quotes and angle brackets.
    private static func skipToNextLink(_ bytes: [UInt8], _ index: inout Int) {
        var quoted = false
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "\"") { quoted.toggle() } else if byte == UInt8(ascii: ","), !quoted { return }
        }
    }
}

/// `Retry-After` (RFC 9110 §10.2.3): a number of seconds or an HTTP-date.
public enum RetryAfter {
    /// The delay in seconds, given the current time as seconds since 1970; nil if unreadable.
    public static func seconds(_ value: String, now: Double) -> Double? {
        let text = value.trimmingCharacters(in: " \t")
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
            return text.count > 9 ? nil : Double(text)
        }
        guard let date = httpDate(text) else { return nil }
        return max(0, date - now)
    }

    /// IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`, as seconds since 1970.
    static func httpDate(_ text: String) -> Double? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", let day = Int(parts[1]), let year = Int(parts[3]),
              let month = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"].firstIndex(of: String(parts[2])),
              (1...31).contains(day), (1970...9999).contains(year) else { return nil }
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

extension String {
    func trimmingCharacters(in set: String) -> String {
        let characters = Set(set)
        return String(drop { characters.contains($0) }.reversed().drop { characters.contains($0) }.reversed())
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// Seconds since 1970, as HTTP dates and cache entries count them.
public enum WallClock {
    public static func secondsSince1970() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
