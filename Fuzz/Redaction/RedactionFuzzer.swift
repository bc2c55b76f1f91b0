import Basics
import FuzzSupport

// libFuzzer target: secrets redacted from text that echoes them (Basics' SecretRedaction, as
// an HTTP error's body and server message and a recording use it). The input builds one to
// four secrets and a text: filler (JSON punctuation, backslashes, the placeholder's own
// letters, non-ASCII), and the secrets echoed several times, as written, JSON-escaped with a
// form picked per character (`\uXXXX` in lower or upper case, `\/`, `\"`, `\n`..., a surrogate
// pair for a character beyond the BMP), inside string literals or not, and cut short. The
// text is redacted whole, or cut at a random byte first, or through the byte excerpt
// (a random limit) or the character excerpt.
//
// Checks, on the output alone: no secret appears as written; no JSON string literal in it
// (read as a client would: from each unescaped `"`) decodes to text holding a secret; a cut
// text does not end with the start of a secret (one character or more), neither as written
// nor inside an unterminated string literal (where an escape cut short counts as any code
// unit it could still become). Secrets are drawn from characters that are not in
// `<redacted>`: the placeholder itself may be read as any secret made of its letters.

@_cdecl("LLVMFuzzerTestOneInput")
public func redactionFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var choices = Choices(UnsafeBufferPointer(start: data, count: size))
    var secrets: [String] = []
    for _ in 0...(choices.next(4)) {
        var secret = ""
        let length = choices.next(3) == 0 ? 1 + choices.next(40) : 1 + choices.next(6)
        // A third of the secrets made mostly of what escapes are made of.
        let alphabet = choices.next(3) == 0 ? escapeAlphabet : secretAlphabet
        for _ in 0..<length { secret.unicodeScalars.append(alphabet[choices.next(alphabet.count)]) }
        // A quarter of them repeat their start (`abab€`): starts that are also ends of starts.
        if choices.next(4) == 0 {
            let chunk = String(secret.unicodeScalars.prefix(1 + choices.next(3)))
            secret =
                String(repeating: chunk, count: 2 + choices.next(3))
                + secret.unicodeScalars.suffix(choices.next(3)).map(String.init).joined()
        }
        secrets.append(secret)
    }
    var text: [UInt8] = []
    // Where each piece ends: cuts fall there half the time.
    var pieceEnds: [Int] = []
    for _ in 0..<(1 + choices.next(12)) {
        defer { pieceEnds.append(text.count) }
        let secret = secrets[choices.next(secrets.count)]
        switch choices.next(8) {
        case 0, 1:
            for _ in 0..<choices.next(24) { text += fillerAlphabet[choices.next(fillerAlphabet.count)].utf8 }
        case 2:
            text += secret.utf8
        case 3:
            text += Array(#"{"message": ""#.utf8) + escaped(secret, &choices) + Array(#""}"#.utf8)
        case 4:
            text += escaped(secret, &choices)
        case 5:
            // An echo cut short (as written or escaped).
            let written = choices.next(2) == 0 ? Array(secret.utf8) : escaped(secret, &choices)
            text += written.prefix(choices.next(written.count + 1))
            // Sometimes followed by the start of an escape (`\u00`), as a cut may leave it.
            if choices.next(2) == 0 {
                text += Array("\\u".utf8) + (0..<choices.next(4)).map { _ in Array("0026aAfF".utf8)[choices.next(8)] }
            }
        case 6:
            text += Array(#"""#.utf8) + escaped(secret, &choices)
        default:
            // The same echo several times, touching or not.
            let written = escaped(secret, &choices)
            for _ in 0..<(2 + choices.next(3)) {
                text += written
                if choices.next(2) == 0 { text += Array(", ".utf8) }
            }
        }
    }
    let secretUnits = secrets.map { Array($0.utf16) }
    switch choices.next(5) {
    case 0:
        let output = SecretRedaction.redacted(text, secrets: secrets)
        checkNothingReadable(output, secretUnits, cut: false, "whole text")
    case 4:
        // A text cut right after the start of a secret (its first characters, as written or
        // escaped; in a string or not), sometimes with the start of an escape after it. Alone,
        // with nothing before it, all of it must go.
        let alone = choices.next(2) == 0
        if alone { text = [] }
        let quoted = choices.next(2) == 0
        if quoted { text += Array(#"""#.utf8) }
        let secret = secrets[choices.next(secrets.count)]
        let characters =
            choices.next(2) == 0 ? secret.unicodeScalars.map { Array(String($0).utf8) } : escapedCharacters(secret, &choices)
        let start = choices.next(characters.count)
        text += characters.prefix(start).flatMap { $0 }
        if choices.next(2) == 0 {
            text += Array("\\".utf8)
            if choices.next(3) > 0 {
                // Mostly the start of the escape of some secret's code unit.
                let units = Array(secrets[choices.next(secrets.count)].utf16)
                let digits = String(units[choices.next(units.count)], radix: 16, uppercase: choices.next(2) == 0)
                let hex = Array((String(repeating: "0", count: 4 - digits.count) + digits).utf8)
                text += Array("u".utf8) + hex.prefix(choices.next(4))
            }
        } else if choices.next(2) == 0, start < characters.count {
            // Or the next character's escape cut short.
            text += characters[start].prefix(choices.next(characters[start].count))
        }
        let output = SecretRedaction.redacted(text, secrets: secrets, endsCut: true)
        checkNothingReadable(output, secretUnits, cut: true, "text cut after a secret's start")
        if alone, start > 0 {
            let placeholder = Array(SecretRedaction.placeholder.utf8)
            check(
                output == placeholder || output == Array(#"""#.utf8) + placeholder,
                "the start of a secret stays in \(String(decoding: output, as: UTF8.self).debugDescription)")
        }
    case 1:
        let end =
            choices.next(2) == 0
            ? choices.next(text.count + 1) : max(0, pieceEnds[choices.next(pieceEnds.count)] - choices.next(4))
        let cut = Array(text.prefix(end))
        let output = SecretRedaction.redacted(cut, secrets: secrets, endsCut: cut.count < text.count)
        checkNothingReadable(output, secretUnits, cut: cut.count < text.count, "text cut at \(cut.count) of \(text.count)")
    case 2:
        let limit = choices.next(text.count + 8)
        let output = SecretRedaction.excerpt(of: text, byteLimit: limit, secrets: secrets)
        let whole = SecretRedaction.redacted(text, secrets: secrets)
        if output != whole {
            check(output.count <= limit + 19, "an excerpt of \(output.count) bytes for a limit of \(limit)")
        }
        checkNothingReadable(output, secretUnits, cut: output != whole, "byte excerpt at \(limit)")
    default:
        let string = String(decoding: text, as: UTF8.self)
        let limit = choices.next(string.count + 4)
        let output = SecretRedaction.excerpt(of: string, characterLimit: limit, secrets: secrets)
        let whole = SecretRedaction.redacted(string, secrets: secrets)
        checkNothingReadable(Array(output.utf8), secretUnits, cut: output != whole, "character excerpt at \(limit)")
    }
    return 0
}

/// Characters secrets are made of: none of `<redacted>`'s, and JSON's special ones among them.
private let secretAlphabet: [Unicode.Scalar] = Array(
    "bfghijklmnopqsuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/+_-.:\"\\ \n\t\u{1}\u{7F}\u{FC}\u{E9}\u{301}\u{20AC}\u{1F600}\u{1D11E}"
        .unicodeScalars)
/// Backslashes and what follows them in escapes, so that secrets hold escapes as written.
private let escapeAlphabet: [Unicode.Scalar] = Array("\\\\\\\"/un0AD8b".unicodeScalars)
/// What goes between the echoes: JSON's punctuation, the placeholder's letters, escapes.
private let fillerAlphabet: [String] = [
    "{", "}", "[", "]", "\"", ":", ",", " ", "\\", "\\\\", "\\\"", "\\u", "\\u00", "\\ud83d", "u", "0", "a", "e", "r", "d", "<", ">",
    "x", "Q", "7", "/", "\u{FC}", "\u{1F600}", "\n", "<redacted>",
]

/// `secret` JSON-escaped, each character in a form the input picks.
private func escaped(_ secret: String, _ choices: inout Choices) -> [UInt8] {
    escapedCharacters(secret, &choices).flatMap { $0 }
}

/// Each of `secret`'s characters (scalars) JSON-escaped in a form the input picks.
private func escapedCharacters(_ secret: String, _ choices: inout Choices) -> [[UInt8]] {
    var characters: [[UInt8]] = []
    func hex(_ unit: UInt16, upper: Bool) -> [UInt8] {
        let digits = String(unit, radix: 16, uppercase: upper)
        return Array(("\\u" + String(repeating: "0", count: 4 - digits.count) + digits).utf8)
    }
    let short: [Unicode.Scalar: String] = [
        "\"": "\\\"", "\\": "\\\\", "/": "\\/", "\n": "\\n", "\t": "\\t", "\u{8}": "\\b", "\u{C}": "\\f", "\r": "\\r",
    ]
    for scalar in secret.unicodeScalars {
        let mustEscape = scalar == "\"" || scalar == "\\" || scalar.value < 0x20
        switch choices.next(4) {
        case 0 where !mustEscape:
            characters.append(Array(String(scalar).utf8))
        case 1 where short[scalar] != nil:
            characters.append(Array(short[scalar]!.utf8))
        default:
            let upper = choices.next(2) == 0
            characters.append(scalar.utf16.flatMap { hex($0, upper: upper) })
        }
    }
    return characters
}

/// The checks: `output` shows no secret, as written or decoded, and (when it is a cut text)
/// does not end with the start of one.
private func checkNothingReadable(_ output: [UInt8], _ secrets: [[UInt16]], cut: Bool, _ what: @autoclosure () -> String) {
    let shown = Array(String(decoding: output, as: UTF8.self).utf16)
    func describe() -> String { "\(what()): \(String(decoding: output, as: UTF8.self).debugDescription)" }
    for secret in secrets {
        check(!holds(shown, secret), "a secret \(String(decoding: secret, as: UTF16.self).debugDescription) as written in \(describe())")
        if cut {
            check(
                !endsWithStart(shown, of: secret, then: nil),
                "the start of \(String(decoding: secret, as: UTF16.self).debugDescription) ends \(describe())")
        }
    }
    for literal in stringLiterals(output) {
        for secret in secrets {
            check(
                !holds(literal.units, secret),
                "a string literal decodes to a secret \(String(decoding: secret, as: UTF16.self).debugDescription) in \(describe())")
            if cut, literal.isLast {
                check(
                    !endsWithStart(literal.units, of: secret, then: literal.cutEscape),
                    "the unterminated string ends with the start of \(String(decoding: secret, as: UTF16.self).debugDescription) in \(describe())"
                )
            }
        }
    }
}

private func holds(_ haystack: [UInt16], _ needle: [UInt16]) -> Bool {
    guard !needle.isEmpty, haystack.count >= needle.count else { return false }
    return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
}

/// Whether `units` ends with the first k ≥ 1 code units of `secret` (k < its length), or,
/// with an escape cut short after them (k ≥ 0), whether that escape could be its next unit.
private func endsWithStart(_ units: [UInt16], of secret: [UInt16], then cutEscape: [UInt8]?) -> Bool {
    for length in 0..<secret.count where length <= units.count {
        guard units.suffix(length).elementsEqual(secret.prefix(length)) else { continue }
        if length > 0 { return true }
        if let cutEscape {
            let digits = String(secret[length], radix: 16)
            let hex = Array((String(repeating: "0", count: 4 - digits.count) + digits).utf8)
            if hex.starts(with: cutEscape) { return true }
        }
    }
    return false
}

/// Each string literal of `bytes`, read as JSON reads one from each unescaped `"`, decoded to
/// code units; the last may be unterminated, and end with an escape cut short (its hex
/// digits, lower-cased: empty for `\` or `\u` alone).
private func stringLiterals(_ bytes: [UInt8]) -> [(units: [UInt16], isLast: Bool, cutEscape: [UInt8]?)] {
    var literals: [(units: [UInt16], isLast: Bool, cutEscape: [UInt8]?)] = []
    var index = 0
    while index < bytes.count {
        guard bytes[index] == UInt8(ascii: "\"") else {
            index += 1
            continue
        }
        index += 1
        var units: [UInt16] = [], run: [UInt8] = [], terminated = false, cutEscape: [UInt8]?
        func flush() {
            units += String(decoding: run, as: UTF8.self).utf16
            run = []
        }
        scan: while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                terminated = true
                index += 1
                break
            }
            guard byte == UInt8(ascii: "\\") else {
                run.append(byte)
                index += 1
                continue
            }
            guard index + 1 < bytes.count else {
                cutEscape = []
                index = bytes.count
                break
            }
            let simple: [UInt8: UInt16] = [
                UInt8(ascii: "\""): 0x22, UInt8(ascii: "\\"): 0x5C, UInt8(ascii: "/"): 0x2F, UInt8(ascii: "b"): 8,
                UInt8(ascii: "f"): 12, UInt8(ascii: "n"): 10, UInt8(ascii: "r"): 13, UInt8(ascii: "t"): 9,
            ]
            if let unit = simple[bytes[index + 1]] {
                flush()
                units.append(unit)
                index += 2
                continue
            }
            if bytes[index + 1] == UInt8(ascii: "u") {
                let digits = bytes[(index + 2)..<min(index + 6, bytes.count)]
                let hexDigits = digits.prefix { UInt8(ascii: "0") <= $0 && $0 <= UInt8(ascii: "9") || "abcdefABCDEF".utf8.contains($0) }
                if hexDigits.count == 4, let unit = UInt16(String(decoding: hexDigits, as: UTF8.self), radix: 16) {
                    flush()
                    units.append(unit)
                    index += 6
                    continue
                }
                if hexDigits.count == digits.count, index + 2 + digits.count == bytes.count {
                    cutEscape = digits.map { $0 | 0x20 }
                    index = bytes.count
                    break scan
                }
            }
            // Not an escape: the backslash as written.
            run.append(byte)
            index += 1
        }
        flush()
        literals.append((units, !terminated, terminated ? nil : cutEscape))
    }
    return literals
}

/// The input read as choices, one byte each; past its end every choice is 0.
private struct Choices {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func next(_ bound: Int) -> Int {
        guard bound > 1 else { return 0 }
        var value = 0
        // Two bytes when one cannot reach every value.
        for _ in 0..<(bound > 256 ? 2 : 1) {
            value = value << 8 | (position < bytes.count ? Int(bytes[position]) : 0)
            position += 1
        }
        return value % bound
    }
}

// The entry point (FUZZING.md, "Entry point"): in this file, beside the test function.
@_cdecl("fuzz_redaction_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runLibFuzzer(argc, argv, redactionFuzzerTestOneInput)
}
