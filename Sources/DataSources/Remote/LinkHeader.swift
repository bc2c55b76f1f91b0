/// RFC 8288 `Link` header values: `<https://api.example.com/items?page=2>; rel="next",
/// <...>; rel="last"`. Several links in one value, several values (headers) in order,
/// quoted parameters with escapes, `rel` with several space-separated types, relative URIs
/// (resolved by the caller against the request's URL).
package enum LinkHeader {
    package struct Link: Sendable, Equatable {
        package let target: String
        /// Relation types, lower-cased.
        package let relations: [String]
        /// Other parameters, names lower-cased, values unquoted.
        package let parameters: [String: String]
    }

    /// Every link in the values, in order; malformed parts are skipped, never trusted.
    package static func parse(_ values: [String]) -> [Link] {
        values.flatMap { parse(Array($0.utf8)) }
    }

    /// The target of the first link with relation `relation`, if any.
    package static func target(_ relation: String, in values: [String]) -> String? {
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
