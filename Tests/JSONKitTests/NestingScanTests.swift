import Testing
import JSONKit

/// The nesting scan reads 64 bytes at a time where it can; it must find exactly what a
/// byte-by-byte reading finds, wherever strings, escapes and brackets fall across blocks.
@Suite struct NestingScanTests {
    private func depth(_ text: String, limit: Int = 2) -> Int? {
        Array(text.utf8).withUnsafeBytes { JSON.nestingDepthExceeding(limit, in: $0) }
    }

    @Test func nestingIsCountedOutsideStringsOnly() {
        #expect(depth("[[[1]]]") == 2)
        #expect(depth(#"{"a":[{"b":1}]}"#) == 6)
        #expect(depth(#"["[[[", "\"[[[", "\\"]"#) == nil, "escaped quotes and backslashes stay inside their strings")
        #expect(depth(#"["\\", [[1]]]"#) == 8, "a string ending in an escaped backslash ends")
        #expect(depth(#"[[]]"#) == nil && depth(#"[[[]]"#) == 2)
        #expect(depth(#""unterminated [[["#) == nil && depth("") == nil && depth(#""\\"#) == nil)
    }

    @Test func stringsAndEscapesAcrossBlocksAreFollowed() {
        let padding = String(repeating: " ", count: 61)
        // A string opened in one block and closed in the next; an escape on a block's last byte.
        #expect(depth(padding + #"["[[[[[[[[[[[[[[[[[[[[[", [1]]"#) == nil)
        #expect(depth(padding + #"  "\"[[[[[[[", [[[1]]]"#) == padding.utf8.count + 17)
        #expect(depth(String(repeating: "[", count: 200), limit: 150) == 150)
        #expect(depth(String(repeating: "[]", count: 500) + "[[[", limit: 2) == 1002)
    }

    /// Byte by byte, as the scan was first written: the oracle.
    private func reference(_ limit: Int, _ bytes: [UInt8]) -> Int? {
        var depth = 0, offset = 0
        while offset < bytes.count {
            switch bytes[offset] {
            case 34:
                offset += 1
                while offset < bytes.count, bytes[offset] != 34 { offset += bytes[offset] == 92 ? 2 : 1 }
            case 91, 123:
                depth += 1
                if depth > limit { return offset }
            case 93, 125: depth -= 1
            default: break
            }
            offset += 1
        }
        return nil
    }

    @Test func randomTextsScanAsByteByByte() {
        var generator = SplitMix(seed: 0x5eed)
        let alphabet = Array(#"[]{}"\ a,:"#.utf8)
        var exceeded = 0
        for round in 0..<20_000 {
            let count = Int(generator.next() % 300)
            // Some texts mostly brackets, some mostly quotes and backslashes.
            let bias = Int(generator.next() % 3)
            let bytes = (0..<count).map { _ -> UInt8 in
                let pick = Int(generator.next() % UInt64(alphabet.count + 4))
                return pick < alphabet.count ? alphabet[pick] : alphabet[bias == 0 ? 0 : bias == 1 ? 4 : 5]
            }
            let limit = Int(generator.next() % 12)
            let expected = reference(limit, bytes)
            let found = bytes.withUnsafeBytes { JSON.nestingDepthExceeding(limit, in: $0) }
            #expect(found == expected, "round \(round): \(String(decoding: bytes, as: UTF8.self)) limit \(limit)")
            if expected != nil { exceeded += 1 }
            if found != expected { break }
        }
        #expect(exceeded > 1000 && exceeded < 19_000, "the texts exercise both answers: \(exceeded)")
    }
}

/// A small seeded generator, so that a failing round can be run again.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
