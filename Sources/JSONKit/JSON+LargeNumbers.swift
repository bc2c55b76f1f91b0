extension JSON {
    /// `text` with every number jansson cannot hold written as a string of its exact text:
    /// integers outside -2^63...2^63-1 (APIs with unsigned 64-bit ids send them) and reals that
    /// overflow a double. `18446744073709551615` becomes `"18446744073709551615"`: its digits
    /// kept exactly, never rounded to a double. Nil when the text holds no such number, or
    /// ends inside a string. One pass over the bytes outside strings, and a copy of them.
    package static func quotingUnholdableNumbers(in text: [UInt8]) -> [UInt8]? {
        var output: [UInt8] = []
        var copied = 0, index = 0
        var changed = false
        // Where a member name is due a number is left as it is, an error: quoted, it would make
        // `{12345678901234567890: 1}` valid.
        var inObject: [Bool] = [], expectingName = false
        while index < text.count {
            let byte = text[index]
            switch byte {
            case UInt8(ascii: "{"):
                inObject.append(true)
                expectingName = true
            case UInt8(ascii: "["):
                inObject.append(false)
                expectingName = false
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                _ = inObject.popLast()
                expectingName = false
            case UInt8(ascii: ","):
                expectingName = inObject.last ?? false
            case UInt8(ascii: ":"):
                expectingName = false
            default:
                break
            }
            if byte == UInt8(ascii: "\"") {
                expectingName = false
                // Past the string, escapes included.
                index += 1
                while index < text.count, text[index] != UInt8(ascii: "\"") {
                    index += text[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                guard index < text.count else { return nil }
                index += 1
                continue
            }
            guard byte == UInt8(ascii: "-") || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) else {
                index += 1
                continue
            }
            let start = index
            var isInteger = true
            index += 1
            while index < text.count {
                let next = text[index]
                if next >= UInt8(ascii: "0") && next <= UInt8(ascii: "9") {
                } else if next == UInt8(ascii: ".") || next == UInt8(ascii: "e") || next == UInt8(ascii: "E")
                    || next == UInt8(ascii: "+") || next == UInt8(ascii: "-")
                {
                    isInteger = false
                } else {
                    break
                }
                index += 1
            }
            // Only what JSON's grammar calls a number, where a value is due: anything else stays
            // as it is, an error.
            guard !expectingName, isNumberLiteral(text[start..<index]) else { continue }
            let number = String(decoding: text[start..<index], as: UTF8.self)
            let holdable = isInteger ? Int64(number) != nil : (Double(number).map(\.isFinite) ?? true)
            guard !holdable else { continue }
            if output.isEmpty { output.reserveCapacity(text.count + 64) }
            output.append(contentsOf: text[copied..<start])
            output.append(UInt8(ascii: "\""))
            output.append(contentsOf: text[start..<index])
            output.append(UInt8(ascii: "\""))
            copied = index
            changed = true
        }
        guard changed else { return nil }
        output.append(contentsOf: text[copied...])
        return output
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` (RFC 8259 §6).
    static func isNumberLiteral(_ bytes: ArraySlice<UInt8>) -> Bool {
        var index = bytes.startIndex
        func digits() -> Int {
            let start = index
            while index < bytes.endIndex, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
            return index - start
        }
        if index < bytes.endIndex, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.endIndex else { return false }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if digits() == 0 {
            return false
        }
        if index < bytes.endIndex, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return false }
        }
        if index < bytes.endIndex, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.endIndex, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { return false }
        }
        return index == bytes.endIndex
    }
}
