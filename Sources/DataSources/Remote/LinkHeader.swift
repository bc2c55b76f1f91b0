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
    /// O(bytes): each byte is read a bounded number of times (a `<` looks ahead for its `>`
    /// once, and the parser goes on from there), whatever the values hold.
    package static func parse(_ values: [String]) -> [Link] {
        var visits = 0
        return parse(values, visits: &visits)
    }

    /// The target of the first link with relation `relation`, if any.
    package static func target(_ relation: String, in values: [String]) -> String? {
        let wanted = relation.lowercased()
        return parse(values).first { $0.relations.contains(wanted) }?.target
    }

    /// `parse`, adding to `visits` the bytes it read, to count the work: a few reads a byte
    /// (5 for a run of `;` after a link, the most in the tests' shapes).
    static func parse(_ values: [String], visits: inout Int) -> [Link] {
        var links: [Link] = []
        for value in values {
            var parser = Parser(bytes: Array(value.utf8))
            links += parser.links()
            visits += parser.visits
        }
        return links
    }

    /// One value's links, read from the start: `index` only moves forward, and a `<` reads
    /// ahead to its `>`, from where reading goes on (or to the end, where it stops).
    struct Parser {
        let bytes: [UInt8]
        var index = 0
        /// How many times a byte was read.
        private(set) var visits = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        /// The byte at `at` (default: `index`), counted; nil past the end.
        private mutating func byte(_ at: Int? = nil) -> UInt8? {
            let at = at ?? index
            guard at < bytes.count else { return nil }
            visits += 1
            return bytes[at]
        }

        private mutating func skip(_ predicate: (UInt8) -> Bool) {
            while let byte = byte(), predicate(byte) { index += 1 }
        }

        private static func isSpace(_ byte: UInt8) -> Bool { byte == 32 || byte == 9 }

        mutating func links() -> [Link] {
            var links: [Link] = []
            while index < bytes.count {
                skip { Self.isSpace($0) || $0 == UInt8(ascii: ",") }
                guard let first = byte() else { break }
                guard first == UInt8(ascii: "<") else {
                    // Not a link: skip to the next one.
                    skipToNextLink()
                    continue
                }
                var close = index + 1
                while let byte = byte(close), byte != UInt8(ascii: ">") { close += 1 }
                // No `>` to the end: nothing after this can be a link either. (Skipping to the
                // next comma and looking again read the rest of the value from every `<`.)
                guard close < bytes.count else { break }
                let target = String(decoding: bytes[(index + 1)..<close], as: UTF8.self)
                index = close + 1
                var relations: [String] = []
                var parameters: [String: String] = [:]
                while true {
                    skip(Self.isSpace)
                    guard byte() == UInt8(ascii: ";") else { break }
                    index += 1
                    skip(Self.isSpace)
                    let nameStart = index
                    skip { $0 != UInt8(ascii: "=") && $0 != UInt8(ascii: ";") && $0 != UInt8(ascii: ",") && !Self.isSpace($0) }
                    let name = String(decoding: bytes[nameStart..<index], as: UTF8.self).lowercased()
                    skip(Self.isSpace)
                    var value = ""
                    if byte() == UInt8(ascii: "=") {
                        index += 1
                        skip(Self.isSpace)
                        value = readValue()
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
        private mutating func readValue() -> String {
            guard let first = byte() else { return "" }
            if first == UInt8(ascii: "\"") {
                index += 1
                var value: [UInt8] = []
                while var character = byte(), character != UInt8(ascii: "\"") {
                    if character == UInt8(ascii: "\\"), let escaped = byte(index + 1) {
                        index += 1
                        character = escaped
                    }
                    value.append(character)
                    index += 1
                }
                if index < bytes.count { index += 1 }
                return String(decoding: value, as: UTF8.self)
            }
            let start = index
            skip { $0 != UInt8(ascii: ";") && $0 != UInt8(ascii: ",") && !Self.isSpace($0) }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        /// Past the next comma outside quotes.
        private mutating func skipToNextLink() {
            var quoted = false
            while let character = byte() {
                index += 1
                if character == UInt8(ascii: "\"") { quoted.toggle() } else if character == UInt8(ascii: ","), !quoted { return }
            }
        }
    }
}
