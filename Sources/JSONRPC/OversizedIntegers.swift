import JSONKit

/// Requests that are valid JSON but hold what jansson refuses to parse: an integer beyond 64
/// bits, or an object key with a NUL character (`"x\u0000"`). Without this, the whole message
/// is a parse error under a null id and a client waiting on the request's id hangs; with it,
/// each request whose own `id` is readable is answered `-32602` under that id, and the other
/// requests of a batch are served.
enum OversizedIntegers {
    /// jansson's words for a number it cannot hold: "too big integer", "too big negative
    /// integer", "real number overflow".
    static func isTooBig(_ error: JSONParseError) -> Bool {
        error.message.hasPrefix("too big") || error.message.hasPrefix("real number overflow")
    }

    /// jansson's words for a key holding `\u0000`, valid JSON it does not represent.
    static func isNulInKey(_ error: JSONParseError) -> Bool {
        error.message.hasPrefix("NUL byte in object key")
    }

    /// Whether the body is refused for what it holds, not for its syntax.
    static func isUnholdable(_ error: JSONParseError) -> Bool {
        isTooBig(error) || isNulInKey(error)
    }

    /// The body's messages when it failed to parse only because of integers beyond 64
    /// bits; nil when something else is wrong with it (then it is a parse error as usual).
    static func messages(in body: [UInt8]) -> Payload? {
        guard let top = valueSpans(body), !top.isEmpty else { return nil }
        let isBatch = body[top[0].lowerBound] == UInt8(ascii: "[")
        let elements = isBatch ? (elementSpans(body, of: top[0]) ?? []) : top
        guard !elements.isEmpty else { return nil }
        var messages: [Message] = []
        for span in elements {
            let bytes = Array(body[span])
            do {
                messages.append(Message(try JSON.parse(bytes)))
            } catch {
                guard isUnholdable(error) else { return nil }
                // A notification is never answered, even to say it was refused.
                guard let id = readableID(in: bytes) else { continue }
                messages.append(.invalid(id: id, error: refusal(error)))
            }
        }
        if isBatch {
            return messages.isEmpty ? .ignored("a batch of notifications holding values the daemon cannot hold") : .batch(messages)
        }
        return messages.first.map(Payload.single) ?? .ignored("a notification holding a value the daemon cannot hold")
    }

    private static func refusal(_ error: JSONParseError) -> ResponseError {
        if isNulInKey(error) {
            return .invalidParams(
                "a member name in the request holds a NUL character (\\u0000), which the daemon does not take (\(error.description))",
                data: [
                    "field": "params", "expected": "member names without NUL characters", "got": "a member name holding \\u0000",
                    "line": JSON(error.line), "column": JSON(error.column), "position": JSON(error.position),
                ])
        }
        return .invalidParams(
            "a number in the request is out of range (\(error.description)): integers must be within -2^63...2^63-1, reals finite",
            data: [
                "field": "params", "expected": "integers within -9223372036854775808...9223372036854775807 and finite reals",
                "got": "a number out of range", "line": JSON(error.line), "column": JSON(error.column),
                "position": JSON(error.position),
            ])
    }

    /// The `id` of a request object, parsed from its own bytes: null when it is itself too
    /// big to read, nil when there is none (a notification).
    static func readableID(in object: [UInt8]) -> JSON? {
        guard let members = memberSpans(object) else { return .null }
        for (key, value) in members where key == "id" {
            guard let id = try? JSON.parse(Array(object[value])), [.string, .integer, .real, .null].contains(id.kind) else { return .null }
            return id
        }
        return nil
    }

    // MARK: Scanning (no parsing: the bytes may hold numbers jansson refuses)

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 32 || byte == 9 || byte == 10 || byte == 13 }

    /// The end of the value starting at `start` (exclusive), or nil if it never ends.
    private static func valueEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var index = start, depth = 0
        var inString = false, escaped = false
        while index < bytes.count {
            let byte = bytes[index]
            if inString {
                if escaped {
                    escaped = false
                } else if byte == 92 {
                    escaped = true
                } else if byte == 34 {
                    inString = false
                    if depth == 0 { return index + 1 }
                }
            } else {
                switch byte {
                case 34: inString = true
                case 91, 123: depth += 1
                case 93, 125:
                    depth -= 1
                    if depth == 0 { return index + 1 }
                    if depth < 0 { return nil }
                default:
                    // A scalar ends at the first delimiter after it.
                    if depth == 0, isSpace(byte) || byte == 44 || byte == 58 { return index }
                }
            }
            index += 1
        }
        return depth == 0 && !inString ? index : nil
    }

    /// The body's single top-level value.
    private static func valueSpans(_ bytes: [UInt8]) -> [Range<Int>]? {
        guard let start = bytes.firstIndex(where: { !isSpace($0) }), let end = valueEnd(bytes, from: start) else { return nil }
        guard bytes[end...].allSatisfy(isSpace) else { return nil }
        return [start..<end]
    }

    /// The elements of the array at `span`.
    private static func elementSpans(_ bytes: [UInt8], of span: Range<Int>) -> [Range<Int>]? {
        var spans: [Range<Int>] = []
        var index = span.lowerBound + 1
        let last = span.upperBound - 1
        while index < last {
            while index < last, isSpace(bytes[index]) || bytes[index] == 44 { index += 1 }
            guard index < last else { break }
            // A `:` between elements ends no value: without progress this would loop for ever.
            guard let end = valueEnd(bytes, from: index), end > index, end <= last else { return nil }
            spans.append(index..<end)
            index = end
        }
        return spans
    }

    /// An object's members: each key (decoded simply: ids are plain ASCII names) and the
    /// span of its value.
    private static func memberSpans(_ bytes: [UInt8]) -> [(String, Range<Int>)]? {
        guard let open = bytes.firstIndex(where: { !isSpace($0) }), bytes[open] == 123 else { return nil }
        var members: [(String, Range<Int>)] = []
        var index = open + 1
        while index < bytes.count {
            while index < bytes.count, isSpace(bytes[index]) || bytes[index] == 44 { index += 1 }
            guard index < bytes.count, bytes[index] == 34, let keyEnd = valueEnd(bytes, from: index) else { return members }
            let key = (try? JSON.parse(Array(bytes[index..<keyEnd])))?.stringValue ?? ""
            index = keyEnd
            while index < bytes.count, isSpace(bytes[index]) { index += 1 }
            guard index < bytes.count, bytes[index] == 58 else { return members }
            index += 1
            while index < bytes.count, isSpace(bytes[index]) { index += 1 }
            guard let valueEnd = valueEnd(bytes, from: index) else { return members }
            members.append((key, index..<valueEnd))
            index = valueEnd
        }
        return members
    }
}
