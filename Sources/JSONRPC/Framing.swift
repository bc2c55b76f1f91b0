/// The LSP base protocol: a header block (`Name: value` lines ended by CRLF, then an
/// empty line) followed by exactly `Content-Length` bytes of body.
package enum Framing {
    /// A header block longer than this without its blank line is garbage, not a header.
    package static let maximumHeaderBlockSize = 8192

    /// What the start of a buffer holds.
    package enum HeaderScan: Equatable, Sendable {
        /// Not enough bytes to know yet.
        case incomplete
        /// A well-formed header block of `headerLength` bytes (terminator included).
        case header(contentLength: Int, headerLength: Int)
        /// Not a header block; `reason` says why. The next frame is searched for from
        /// `resumeAt`: just past the offending line, so a valid header after it is kept.
        case malformed(reason: String, resumeAt: Int)
    }

    /// Reads the header block at the start of `bytes`. Pure: no state, no allocation
    /// beyond the reason text, so every edge case is a one-line test.
    package static func scanHeader(_ bytes: UnsafeBufferPointer<UInt8>) -> HeaderScan {
        if let lineFeed = indexOfBareLineFeed(bytes) {
            // Lines end with CRLF only: taken as text, a bare LF would hide the blank line and
            // the next frame's header inside this block's last line.
            let lineStart = bytes[..<lineFeed].lastIndex(of: 10).map { $0 + 1 } ?? 0
            return .malformed(
                reason: "header line ended by a bare LF: \(quoted(UnsafeBufferPointer(rebasing: bytes[lineStart..<lineFeed])))",
                resumeAt: lineFeed + 1)
        }
        guard let end = indexOfBlankLine(bytes) else {
            if bytes.count > maximumHeaderBlockSize {
                return .malformed(reason: "no end of header block within \(maximumHeaderBlockSize) bytes", resumeAt: 1)
            }
            return .incomplete
        }
        var contentLength: Int?
        var lineStart = 0
        while lineStart < end {
            var lineEnd = lineStart
            while !(bytes[lineEnd] == 13 && bytes[lineEnd + 1] == 10) { lineEnd += 1 }
            let line = UnsafeBufferPointer(rebasing: bytes[lineStart..<lineEnd])
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                return .malformed(reason: "header line without a colon: \(quoted(line))", resumeAt: lineEnd)
            }
            let name = trimmed(UnsafeBufferPointer(rebasing: line[..<colon]))
            if equalsIgnoringCase(name, "content-length") {
                let value = trimmed(UnsafeBufferPointer(rebasing: line[(colon + 1)...]))
                guard let length = decimal(value) else {
                    return .malformed(reason: "Content-Length is not a non-negative integer: \(quoted(value))", resumeAt: lineEnd)
                }
                if let earlier = contentLength, earlier != length {
                    return .malformed(reason: "conflicting Content-Length headers: \(earlier) and \(length)", resumeAt: lineEnd)
                }
                contentLength = length
            }
            // Content-Type and unknown headers are accepted and ignored.
            lineStart = lineEnd + 2
        }
        guard let contentLength else { return .malformed(reason: "header block without Content-Length", resumeAt: end + 4) }
        return .header(contentLength: contentLength, headerLength: end + 4)
    }

    /// Where the next `Content-Length` header name starts, searching from `from`.
    package static func indexOfContentLength(_ bytes: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        let name = Array("content-length".utf8)
        guard bytes.count >= name.count else { return nil }
        var index = from
        while index <= bytes.count - name.count {
            if equalsIgnoringCase(UnsafeBufferPointer(rebasing: bytes[index..<index + name.count]), "content-length") {
                return index
            }
            index += 1
        }
        return nil
    }

    /// The length of the longest tail of `bytes` that begins the name `Content-Length`.
    package static func lengthOfContentLengthPrefix(endingAt bytes: UnsafeBufferPointer<UInt8>) -> Int {
        let name = Array("content-length".utf8)
        for length in stride(from: min(name.count - 1, bytes.count), to: 0, by: -1) {
            let tail = bytes[(bytes.count - length)...]
            if zip(tail, name).allSatisfy({ ($0 >= 65 && $0 <= 90 ? $0 + 32 : $0) == $1 }) { return length }
        }
        return 0
    }

    package static func frame(_ body: [UInt8]) -> [UInt8] {
        var framed = Array("Content-Length: \(body.count)\r\n\r\n".utf8)
        framed.append(contentsOf: body)
        return framed
    }

    package static func appendFrame(_ body: [UInt8], to output: inout [UInt8]) {
        appendHeader(length: body.count, to: &output)
        output.append(contentsOf: body)
    }

    /// `Content-Length: <length>\r\n\r\n`, the digits written in place (no string is made
    /// for a header: the writer frames every message).
    package static func appendHeader(length: Int, to output: inout [UInt8]) {
        precondition(length >= 0, "a body has no negative length")
        output.append(contentsOf: "Content-Length: ".utf8)
        var divisor = 1
        while divisor <= length / 10 { divisor *= 10 }
        while divisor > 0 {
            output.append(UInt8(ascii: "0") + UInt8(length / divisor % 10))
            divisor /= 10
        }
        output.append(contentsOf: "\r\n\r\n".utf8)
    }

    // MARK: Byte helpers

    private static func indexOfBlankLine(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard bytes.count >= 4 else { return nil }
        let limit = min(bytes.count - 4, maximumHeaderBlockSize)
        var index = 0
        while index <= limit {
            if bytes[index] == 13, bytes[index + 1] == 10, bytes[index + 2] == 13, bytes[index + 3] == 10 {
                return index
            }
            index += 1
        }
        return nil
    }

    /// The first LF not preceded by CR before the header block's blank line, if any.
    private static func indexOfBareLineFeed(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        let limit = min(bytes.count, maximumHeaderBlockSize + 4)
        var index = 0
        while index < limit {
            if bytes[index] == 10 {
                if index == 0 || bytes[index - 1] != 13 { return index }
                if index >= 3, bytes[index - 2] == 10, bytes[index - 3] == 13 { return nil }
            }
            index += 1
        }
        return nil
    }

    private static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == 32 || bytes[start] == 9 { start += 1 }
        while end > start, bytes[end - 1] == 32 || bytes[end - 1] == 9 { end -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    private static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = lowercase.utf8Start
        for index in 0..<bytes.count {
            var byte = bytes[index]
            if byte >= 65, byte <= 90 { byte += 32 }
            if byte != expected[index] { return false }
        }
        return true
    }

    private static func decimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 18 else { return nil }
        var value = 0
        for byte in bytes {
            guard byte >= 48, byte <= 57 else { return nil }
            value = value * 10 + Int(byte - 48)
        }
        return value
    }

    private static func quoted(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let text = String(decoding: bytes.prefix(60), as: UTF8.self)
        return "\"\(text)\(bytes.count > 60 ? "…" : "")\""
    }
}

/// Turns a byte stream into frames, resynchronising after garbage and skipping
/// oversized bodies without buffering them.
package struct FrameDecoder: Sendable {
    package enum Event: Equatable, Sendable {
        case body([UInt8])
        /// A header block that could not be read; the decoder has moved on to the next
        /// `Content-Length` header, if any.
        case malformedHeader(reason: String)
        /// A body longer than the limit; its bytes are being discarded as they arrive.
        case oversized(contentLength: Int, limit: Int)
    }

    package let maximumMessageSize: Int
    /// The most buffer capacity kept between frames.
    static let retainedCapacity = 1 << 20
    private var buffer: [UInt8] = []
    private var consumed = 0
    private var bytesToSkip = 0
    /// After a malformed header, until the next `Content-Length`: the rest of a run of
    /// garbage is dropped as it arrives, so one bad run costs one error, however long.
    private var discardingGarbage = false

    package init(maximumMessageSize: Int) {
        self.maximumMessageSize = maximumMessageSize
    }

    /// True when input ending now would cut a message short (trailing line breaks don't count).
    package var isMidFrame: Bool {
        bytesToSkip > 0 || buffer[consumed...].contains { $0 != 13 && $0 != 10 }
    }

    package mutating func append(_ bytes: UnsafeRawBufferPointer) {
        var bytes = bytes
        if bytesToSkip > 0 {
            let skipped = min(bytesToSkip, bytes.count)
            bytesToSkip -= skipped
            bytes = UnsafeRawBufferPointer(rebasing: bytes[skipped...])
        }
        if consumed == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            consumed = 0
        } else if consumed > 65536, consumed * 2 > buffer.count {
            buffer.removeFirst(consumed)
            consumed = 0
        }
        buffer.append(contentsOf: bytes)
    }

    package mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    package mutating func next() -> Event? {
        guard bytesToSkip == 0 else { return nil }
        let event = buffer.withUnsafeBufferPointer { whole -> Event? in
            // Stray line breaks between messages are tolerated, not reported.
            while consumed < whole.count, whole[consumed] == 13 || whole[consumed] == 10 { consumed += 1 }
            if discardingGarbage {
                resynchronise(UnsafeBufferPointer(rebasing: whole[consumed...]), from: 0)
            }
            let pending = UnsafeBufferPointer(rebasing: whole[consumed...])
            if discardingGarbage { return nil }
            switch Framing.scanHeader(pending) {
            case .incomplete:
                return nil
            case .malformed(let reason, let resumeAt):
                resynchronise(pending, from: resumeAt)
                return .malformedHeader(reason: reason)
            case .header(let contentLength, let headerLength):
                if contentLength > maximumMessageSize {
                    let available = pending.count - headerLength
                    let skippedNow = min(available, contentLength)
                    consumed += headerLength + skippedNow
                    bytesToSkip = contentLength - skippedNow
                    return .oversized(contentLength: contentLength, limit: maximumMessageSize)
                }
                guard pending.count - headerLength >= contentLength else { return nil }
                let bodyStart = headerLength
                let body = Array(pending[bodyStart..<bodyStart + contentLength])
                consumed += headerLength + contentLength
                return .body(body)
            }
        }
        if consumed == buffer.count, buffer.capacity > FrameDecoder.retainedCapacity {
            // Everything read is handed out: keep the usual capacity for the next frames, but
            // not what one huge message needed, which would stay resident for good. Released
            // here, before the message is handled, not on the next read.
            buffer = []
            consumed = 0
        }
        return event
    }

    private mutating func resynchronise(_ pending: UnsafeBufferPointer<UInt8>, from resumeAt: Int) {
        if let next = Framing.indexOfContentLength(pending, from: resumeAt) {
            consumed += next
            discardingGarbage = false
        } else {
            discardingGarbage = true
            // Keep only a tail that could be the start of a header split across reads.
            consumed += pending.count - Framing.lengthOfContentLengthPrefix(endingAt: pending)
        }
    }
}
