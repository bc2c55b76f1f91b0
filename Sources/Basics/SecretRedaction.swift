/// Secrets kept out of text that quotes someone else: a failed response's body and its
/// server's message in an HTTP error, the strings of a recording. One function for all of
/// them, pure, so that every rule is a test and the fuzzer (`Fuzz/Redaction`) holds it to
/// its promise: after `redacted`, no secret can be read in the text.
///
/// **What is replaced.** Every occurrence of every secret, by `<redacted>`, in two views of
/// the text (which may be JSON, cut anywhere, or not JSON at all):
/// - as written: its characters (UTF-8 decoded as `String(decoding:as:)` shows them);
/// - with JSON's escapes decoded wherever they stand: `\"`, `\\`, `\/`, `\b`, `\f`, `\n`,
///   `\r`, `\t` and `\uXXXX` (either case; a surrogate pair as its two UTF-16 code units, so
///   `\ud83d\ude00` is U+1F600). Decoding everywhere, not only inside string literals, holds
///   inside every literal (a literal starts after a `"`, where the decoding is never in the
///   middle of an escape) and covers text that is not JSON. When decoded characters spell a
///   secret, the bytes that wrote them are replaced.
///
/// Both views are compared in UTF-16 code units, so a secret is found whatever follows it
/// (a combining mark does not hide it as it hides it from `String.replacing`).
///
/// Occurrences may overlap or touch, of one secret or of several: every byte of every one is
/// covered, and each run of covered bytes becomes one `<redacted>`, so no secret leaves a
/// tail of itself behind (whatever the order secrets are given in). A match as written that
/// covers part of an escape covers the whole escape: the text kept around a placeholder is
/// then made of whole escapes, decodes as it did, and cannot spell a secret it did not
/// spell before. (A secret made of the placeholder's own characters, `<`, `>`, `redact`,
/// can of course be read in the placeholder.)
///
/// **A cut text** (`endsCut`, the text was cut from a longer one) also has its end replaced
/// when it is the start of a secret, one character or more, in either view: `...ghp_ab` and
/// `..."ghp_ab\/c` lose their end (the longest such start, with anything after it: an escape
/// cut short, `\` or `\u00`, goes with it). With no such start, an escape cut short at the
/// very end is replaced when it could still become a secret's first code unit (`\u00` could
/// be `/`, not `€`). As written, an escape cut short at the end counts too, whatever the
/// backslashes before it pair with: five backslashes and `\u00` lose all of it when a secret
/// starts with five backslashes.
///
/// **Cost.** With n the text's length in bytes and m secrets of L UTF-16 code units in all,
/// finding takes O(n·m + L) time: each of the two views is decoded once, and each secret is
/// followed through it by Knuth-Morris-Pratt (amortized O(1) a code unit and secret, its
/// table O(L) to build). The r byte ranges found (at most 2n·m + 2m, a few in practice) are
/// then sorted and joined, O(r log r), and the output written, O(n). Memory is O(L + r + n),
/// plus the escapes' ranges when the text holds backslashes. An excerpt does this twice, on
/// its prefix only. The callers' inputs are bounded: an HTTP error's text is its first 2,048
/// bytes plus 6 bytes a code unit of the longest secret (secrets are at most 64 KiB each),
/// a server message is at most 1 MiB, a recording's string is what the session said.
package enum SecretRedaction {
    /// What stands for a secret.
    package static let placeholder = "<redacted>"

    /// `text` with every secret replaced by `placeholder` (see the type's comment). Empty
    /// secrets are ignored; secrets of every other length are replaced.
    package static func redacted(_ text: some Collection<UInt8>, secrets: some Sequence<String>, endsCut: Bool = false) -> [UInt8] {
        Redaction(Array(text), patterns: Pattern.make(secrets), endsCut: endsCut).bytes
    }

    package static func redacted(_ text: String, secrets: some Sequence<String>, endsCut: Bool = false) -> String {
        let patterns = Pattern.make(secrets)
        guard !patterns.isEmpty else { return text }
        return String(decoding: Redaction(Array(text.utf8), patterns: patterns, endsCut: endsCut).bytes, as: UTF8.self)
    }

    /// The start of `text`, about `byteLimit` bytes, with the secrets redacted: the secrets
    /// are replaced in the text before it is cut (in its first `byteLimit` bytes and as many
    /// more as the longest secret needs written with an escape for each code unit), the
    /// result is cut at `byteLimit` bytes (between two characters; a `<redacted>` across the
    /// limit is kept whole), and a cut text's end is redacted when it starts a secret.
    /// (Only that much of `text` is read or copied, however long it is.)
    package static func excerpt(of text: [UInt8], byteLimit: Int, secrets: some Sequence<String>) -> [UInt8] {
        let patterns = Pattern.make(secrets)
        let longest = patterns.map(\.units.count).max() ?? 0
        let taken = Array(text[..<characterBoundary(in: text, atOrBefore: byteLimit + 6 * longest)])
        var redaction = Redaction(taken, patterns: patterns, endsCut: taken.count < text.count)
        guard redaction.bytes.count > byteLimit else { return redaction.bytes }
        var cut = byteLimit
        if let across = redaction.placeholders.first(where: { $0.contains(cut) && $0.lowerBound < cut }) { cut = across.upperBound }
        cut = characterBoundary(in: redaction.bytes, atOrBefore: cut)
        redaction = Redaction(Array(redaction.bytes[..<cut]), patterns: patterns, endsCut: true)
        return redaction.bytes
    }

    /// `offset`, or the start of the character it falls inside (at most three bytes back).
    static func characterBoundary(in bytes: [UInt8], atOrBefore offset: Int) -> Int {
        guard offset < bytes.count else { return bytes.count }
        var cut = offset
        while cut > 0, offset - cut < 3, bytes[cut] & 0xC0 == 0x80 { cut -= 1 }
        return cut
    }

    /// The first `characterLimit` characters of `text` with the secrets redacted: replaced in
    /// the whole text first, then the result cut (a `<redacted>` across the limit kept
    /// whole), and a cut text's end redacted when it starts a secret.
    package static func excerpt(of text: String, characterLimit: Int, secrets: some Sequence<String>) -> String {
        let patterns = Pattern.make(secrets)
        let redaction = Redaction(Array(text.utf8), patterns: patterns, endsCut: false)
        let whole = patterns.isEmpty ? text : String(decoding: redaction.bytes, as: UTF8.self)
        guard whole.count > characterLimit else { return whole }
        var cut = whole.utf8.distance(from: whole.startIndex, to: whole.index(whole.startIndex, offsetBy: characterLimit))
        if let across = redaction.placeholders.first(where: { $0.contains(cut) && $0.lowerBound < cut }) { cut = across.upperBound }
        let kept = Array(whole.utf8.prefix(cut))
        return String(decoding: Redaction(kept, patterns: patterns, endsCut: true).bytes, as: UTF8.self)
    }

    // MARK: The secrets

    /// A secret as code units, with its Knuth-Morris-Pratt table: `border[i]` is the length of
    /// the longest proper prefix of `units[...i]` that is also its suffix.
    struct Pattern {
        let units: [UInt16]
        let border: [Int32]

        init(_ units: [UInt16]) {
            self.units = units
            var border = [Int32](repeating: 0, count: units.count)
            var length = 0
            for index in units.indices.dropFirst() {
                while length > 0, units[index] != units[length] { length = Int(border[length - 1]) }
                if units[index] == units[length] { length += 1 }
                border[index] = Int32(length)
            }
            self.border = border
        }

        /// Each distinct non-empty secret once.
        static func make(_ secrets: some Sequence<String>) -> [Pattern] {
            var seen: Set<String> = []
            return secrets.compactMap { secret in
                guard !secret.isEmpty, seen.insert(secret).inserted else { return nil }
                return Pattern(Array(secret.utf16))
            }
        }

        /// The state after `unit`, from `state` (the length of the secret's start matched so far).
        @inline(__always)
        func advance(_ state: Int, _ unit: UInt16) -> Int {
            var state = state
            if state == units.count { state = Int(border[state - 1]) }
            while state > 0, units[state] != unit { state = Int(border[state - 1]) }
            return units[state] == unit ? state + 1 : 0
        }
    }

    // MARK: The redaction

    /// An escape cut short by the end of a cut text: `\` alone, or `\u` and up to three hex digits.
    struct CutEscape {
        let start: Int
        /// The hex digits after `\u`, lower-cased; nil for `\` alone.
        let digits: [UInt8]?

        /// The escape cut short that `text` ends with, if any (its backslash as the last byte, or
        /// followed by `u` and up to three hex digits), whatever the backslashes before it pair with.
        static func atEnd(of text: [UInt8]) -> CutEscape? {
            guard let start = text.suffix(5).lastIndex(of: UInt8(ascii: "\\")) else { return nil }
            let rest = text[(start + 1)...]
            guard let first = rest.first else { return CutEscape(start: start, digits: nil) }
            let digits = rest.dropFirst()
            guard first == UInt8(ascii: "u"), digits.allSatisfy({ Redaction.hexValue($0) != nil }) else { return nil }
            return CutEscape(start: start, digits: digits.map { $0 | 0x20 })
        }

        /// The character cut short that `text` ends with, if any: a UTF-8 lead byte and fewer
        /// continuation bytes than it announces (it could still become any code unit).
        static func characterCutShort(atEndOf text: [UInt8]) -> CutEscape? {
            guard let start = text.suffix(3).lastIndex(where: { $0 & 0xC0 != 0x80 }), text[start] >= 0xC2 else { return nil }
            let expected = text[start] < 0xE0 ? 2 : text[start] < 0xF0 ? 3 : text[start] < 0xF5 ? 4 : 0
            let (_, length) = UTF8Scalars.scalar(in: text, at: start)
            // Cut short, not ill-formed: every byte there fits the sequence so far.
            guard text.count - start < expected, length == text.count - start else { return nil }
            return CutEscape(start: start, digits: nil)
        }

        /// Whether the escape could still become `unit`.
        func couldBe(_ unit: UInt16) -> Bool {
            guard let digits else { return true }
            let written = Array(String(unit, radix: 16).utf8)
            let hex = [UInt8](repeating: UInt8(ascii: "0"), count: 4 - written.count) + written
            return hex.starts(with: digits)
        }
    }

    struct Redaction {
        private(set) var bytes: [UInt8]
        /// Where each `<redacted>` was put, in `bytes`.
        private(set) var placeholders: [Range<Int>] = []

        init(_ text: [UInt8], patterns: [Pattern], endsCut: Bool) {
            guard !patterns.isEmpty, !text.isEmpty else {
                bytes = text
                return
            }
            var matched: [Range<Int>] = []
            var escapes: [Range<Int>] = []
            Self.search(text, patterns: patterns, decodingEscapes: false, endsCut: endsCut, matched: &matched, escapes: &escapes)
            if text.contains(UInt8(ascii: "\\")) {
                Self.search(text, patterns: patterns, decodingEscapes: true, endsCut: endsCut, matched: &matched, escapes: &escapes)
            }
            guard !matched.isEmpty else {
                bytes = text
                return
            }
            var runs = Self.merged(matched)
            // A match as written that covers part of an escape covers all of it.
            if !escapes.isEmpty {
                runs = Self.merged(runs.map { Self.widened($0, toWhole: escapes) })
            }
            var output: [UInt8] = []
            output.reserveCapacity(text.count)
            var position = 0
            for run in runs {
                output += text[position..<run.lowerBound]
                placeholders.append(output.count..<(output.count + placeholder.utf8.count))
                output += placeholder.utf8
                position = run.upperBound
            }
            output += text[position...]
            bytes = output
        }

        /// Follows every secret through one view of `text`, adding the byte ranges of what it
        /// finds to `matched` (and, when decoding, the ranges of the escapes to `escapes`).
        private static func search(
            _ text: [UInt8], patterns: [Pattern], decodingEscapes: Bool, endsCut: Bool,
            matched: inout [Range<Int>], escapes: inout [Range<Int>]
        ) {
            let longest = patterns.map(\.units.count).max() ?? 1
            // Where each of the last `longest` code units starts in `text`.
            var starts = [Int](repeating: 0, count: longest)
            var states = [Int](repeating: 0, count: patterns.count)
            var count = 0
            var cutEscape: CutEscape?
            func take(_ unit: UInt16, from start: Int, to end: Int) {
                starts[count % longest] = start
                count += 1
                for index in patterns.indices {
                    let pattern = patterns[index]
                    let state = pattern.advance(states[index], unit)
                    states[index] = state
                    if state == pattern.units.count { matched.append(starts[(count - state) % longest]..<end) }
                }
            }
            // The end of a cut text: the longest start of a secret it ends with (all of it goes,
            // with any escape cut short after it), or else an escape cut short that could
            // become the secret's first unit.
            func redactEnding(before cutEscape: CutEscape?) {
                for (index, pattern) in patterns.enumerated() {
                    var state = states[index]
                    if state == pattern.units.count { state = Int(pattern.border[state - 1]) }
                    if state > 0 {
                        matched.append(starts[(count - state) % longest]..<text.count)
                    } else if let cutEscape, cutEscape.couldBe(pattern.units[0]) {
                        matched.append(cutEscape.start..<text.count)
                    }
                }
            }
            // As written, an escape cut short at the end may follow a secret's start written as
            // it is (`ghp_ab\u00`), whatever the backslashes before it pair with.
            // So may a character cut short (`\u{E2}\u{82}`, the start of `€`), in either view.
            let writtenCut =
                endsCut ? (decodingEscapes ? nil : CutEscape.atEnd(of: text)) ?? CutEscape.characterCutShort(atEndOf: text) : nil
            var offset = 0
            while offset < text.count {
                if offset == writtenCut?.start { redactEnding(before: writtenCut) }
                if decodingEscapes, text[offset] == UInt8(ascii: "\\") {
                    switch escape(in: text, at: offset) {
                    case .unit(let unit, let length)?:
                        escapes.append(offset..<(offset + length))
                        take(unit, from: offset, to: offset + length)
                        offset += length
                        continue
                    case .cutShort(let digits)? where endsCut:
                        cutEscape = CutEscape(start: offset, digits: digits)
                        escapes.append(offset..<text.count)
                        offset = text.count
                        continue
                    default:
                        break  // a backslash as written
                    }
                }
                let (scalar, length) = UTF8Scalars.scalar(in: text, at: offset)
                for unit in scalar.utf16 { take(unit, from: offset, to: offset + length) }
                offset += length
            }
            if endsCut { redactEnding(before: cutEscape) }
        }

        enum Escape {
            case unit(UInt16, length: Int)
            /// The text ends inside it: `\`, or `\u` with fewer than four hex digits (lower-cased).
            case cutShort(digits: [UInt8]?)
        }

        /// The JSON escape at `offset` (a backslash), if it is one.
        private static func escape(in text: [UInt8], at offset: Int) -> Escape? {
            guard offset + 1 < text.count else { return .cutShort(digits: nil) }
            switch text[offset + 1] {
            case UInt8(ascii: "\""): return .unit(0x22, length: 2)
            case UInt8(ascii: "\\"): return .unit(0x5C, length: 2)
            case UInt8(ascii: "/"): return .unit(0x2F, length: 2)
            case UInt8(ascii: "b"): return .unit(0x08, length: 2)
            case UInt8(ascii: "f"): return .unit(0x0C, length: 2)
            case UInt8(ascii: "n"): return .unit(0x0A, length: 2)
            case UInt8(ascii: "r"): return .unit(0x0D, length: 2)
            case UInt8(ascii: "t"): return .unit(0x09, length: 2)
            case UInt8(ascii: "u"):
                var value: UInt16 = 0
                var digits: [UInt8] = []
                for position in (offset + 2)..<min(offset + 6, text.count) {
                    guard let digit = hexValue(text[position]) else { return nil }
                    value = value << 4 | UInt16(digit)
                    digits.append(text[position] | 0x20)
                }
                return digits.count == 4 ? .unit(value, length: 6) : .cutShort(digits: digits)
            default:
                return nil
            }
        }

        static func hexValue(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }

        /// Overlapping and touching ranges joined, in order.
        private static func merged(_ ranges: [Range<Int>]) -> [Range<Int>] {
            var runs: [Range<Int>] = []
            for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
                if let last = runs.last, range.lowerBound <= last.upperBound {
                    runs[runs.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
                } else {
                    runs.append(range)
                }
            }
            return runs
        }

        /// `run` grown to the whole of any escape it covers part of (`escapes`: in order, disjoint).
        private static func widened(_ run: Range<Int>, toWhole escapes: [Range<Int>]) -> Range<Int> {
            func enclosing(_ offset: Int) -> Range<Int>? {
                // The last escape starting at or before `offset`.
                var low = 0, high = escapes.count
                while low < high {
                    let middle = (low + high) / 2
                    if escapes[middle].lowerBound <= offset { low = middle + 1 } else { high = middle }
                }
                guard low > 0, escapes[low - 1].contains(offset) else { return nil }
                return escapes[low - 1]
            }
            let lower = enclosing(run.lowerBound)?.lowerBound ?? run.lowerBound
            let upper = enclosing(run.upperBound - 1)?.upperBound ?? run.upperBound
            return lower..<upper
        }
    }
}

/// UTF-8 read one scalar at a time, with the offsets `String(decoding:as:)` would give: an
/// ill-formed sequence is one U+FFFD for each maximal subpart (Unicode's recommended practice).
enum UTF8Scalars {
    static func scalar(in bytes: [UInt8], at offset: Int) -> (Unicode.Scalar, length: Int) {
        let lead = bytes[offset]
        if lead < 0x80 { return (Unicode.Scalar(lead), 1) }
        let length: Int
        var allowed: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: (length, allowed) = (3, 0xA0...0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: (length, allowed) = (3, 0x80...0x9F)
        case 0xF0: (length, allowed) = (4, 0x90...0xBF)
        case 0xF1...0xF3: length = 4
        case 0xF4: (length, allowed) = (4, 0x80...0x8F)
        default: return ("\u{FFFD}", 1)
        }
        var value = UInt32(lead) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
        for index in 1..<length {
            guard offset + index < bytes.count, allowed.contains(bytes[offset + index]) else { return ("\u{FFFD}", index) }
            value = value << 6 | UInt32(bytes[offset + index] & 0x3F)
            allowed = 0x80...0xBF
        }
        return (Unicode.Scalar(value) ?? "\u{FFFD}", length)
    }
}
