import JSONKit
import JSONRPC
import Testing

private func scan(_ text: String) -> Framing.HeaderScan {
    Array(text.utf8).withUnsafeBufferPointer { Framing.scanHeader($0) }
}

@Suite struct FramingTests {
    @Test(arguments: [0, 1, 9, 10, 99, 100, 12_345, 1_000_000, Int.max])
    func writesTheHeaderDigitsInPlace(length: Int) {
        var output: [UInt8] = [7]
        Framing.appendHeader(length: length, to: &output)
        #expect(output == [7] + Array("Content-Length: \(length)\r\n\r\n".utf8))
    }

    @Test func framesAnEncodedMessageAsItsBytes() throws {
        let message: JSON = ["jsonrpc": "2.0", "id": 12, "result": ["title": "Ünïcode", "score": 1.5]]
        var output: [UInt8] = []
        Framing.appendFrame(encoding: message, to: &output)
        #expect(output == Framing.frame(message.encoded()))
        var decoder = FrameDecoder(maximumMessageSize: 1 << 20)
        output.withUnsafeBytes { decoder.append($0) }
        guard case .body(let body)? = decoder.next() else {
            Issue.record("no frame decoded")
            return
        }
        #expect(try JSON.parse(body) == message)
    }

    @Test func readsAHeaderBlock() {
        #expect(scan("Content-Length: 12\r\n\r\n{}") == .header(contentLength: 12, headerLength: 22))
        #expect(scan("content-length:3\r\n\r\n") == .header(contentLength: 3, headerLength: 20))
        #expect(scan("Content-Type: x\r\nCONTENT-LENGTH: 0\r\nX-Other: y\r\n\r\n") == .header(contentLength: 0, headerLength: 50))
    }

    @Test func waitsForTheBlankLine() {
        #expect(scan("") == .incomplete)
        #expect(scan("Content-Length: 12\r\n") == .incomplete)
        #expect(scan("Content-Length: 12\r\n\r") == .incomplete)
    }

    @Test func refusesMalformedBlocks() {
        #expect(scan("garbage\r\nContent-Length: 2\r\n\r\n") == .malformed(reason: "header line without a colon: \"garbage\"", resumeAt: 7))
        #expect(scan("Content-Type: a\r\n\r\n") == .malformed(reason: "header block without Content-Length", resumeAt: 19))
        #expect(
            scan("Content-Length: -1\r\n\r\n") == .malformed(reason: "Content-Length is not a non-negative integer: \"-1\"", resumeAt: 18))
        #expect(
            scan("Content-Length: 1\r\nContent-Length: 2\r\n\r\n")
                == .malformed(reason: "conflicting Content-Length headers: 1 and 2", resumeAt: 36))
        #expect(
            scan("Content-Length: 99999999999999999999\r\n\r\n")
                == .malformed(reason: "Content-Length is not a non-negative integer: \"99999999999999999999\"", resumeAt: 36))
        #expect(
            scan("Content-Length: 2\n\n{}") == .malformed(reason: "header line ended by a bare LF: \"Content-Length: 2\"", resumeAt: 18))
        #expect(
            scan("Content-Type: x\r\nContent-Length: 2\n")
                == .malformed(
                    reason: "header line ended by a bare LF: \"Content-Length: 2\"", resumeAt: 35))
        // A bare LF in the body is the body's business.
        #expect(scan("Content-Length: 3\r\n\r\n{\n}") == .header(contentLength: 3, headerLength: 21))
        if case .malformed = scan(String(repeating: "x", count: Framing.maximumHeaderBlockSize + 10)) {
        } else {
            Issue.record("a long block without a blank line must be malformed")
        }
    }

    @Test func decodesFramesFedOneByteAtATime() {
        let stream = Framing.frame(Array("{\"a\":1}".utf8)) + Framing.frame(Array("[]".utf8))
        var decoder = FrameDecoder(maximumMessageSize: 100)
        var bodies: [String] = []
        for byte in stream {
            decoder.append([byte])
            while let event = decoder.next() {
                guard case .body(let body) = event else {
                    Issue.record("unexpected \(event)")
                    return
                }
                bodies.append(String(decoding: body, as: UTF8.self))
            }
        }
        #expect(bodies == ["{\"a\":1}", "[]"])
        #expect(!decoder.isMidFrame)
    }

    @Test func skipsOversizedBodiesAcrossReads() {
        var decoder = FrameDecoder(maximumMessageSize: 4)
        decoder.append(Array("Content-Length: 10\r\n\r\n0123".utf8))
        #expect(decoder.next() == .oversized(contentLength: 10, limit: 4))
        #expect(decoder.next() == nil)
        #expect(decoder.isMidFrame)
        decoder.append(Array("456789".utf8) + Framing.frame(Array("ok".utf8)))
        #expect(decoder.next() == .body(Array("ok".utf8)))
        #expect(!decoder.isMidFrame)
    }

    @Test func toleratesBlankLinesBetweenMessages() {
        var decoder = FrameDecoder(maximumMessageSize: 100)
        decoder.append(Framing.frame(Array("1".utf8)) + Array("\r\n\n".utf8) + Framing.frame(Array("2".utf8)))
        #expect(decoder.next() == .body(Array("1".utf8)))
        #expect(decoder.next() == .body(Array("2".utf8)))
    }

    @Test func resynchronisesAfterGarbage() {
        var decoder = FrameDecoder(maximumMessageSize: 100)
        decoder.append(Array("junk\r\nmore junk\r\n".utf8) + Framing.frame(Array("1".utf8)))
        guard case .malformedHeader = decoder.next() else {
            Issue.record("expected a malformed header")
            return
        }
        #expect(decoder.next() == .body(Array("1".utf8)))
    }

    @Test func keepsAHeaderSplitAcrossReadsAfterGarbage() {
        var decoder = FrameDecoder(maximumMessageSize: 100)
        decoder.append(Array(String(repeating: "g", count: 9000).utf8))
        guard case .malformedHeader = decoder.next() else {
            Issue.record("expected a malformed header")
            return
        }
        decoder.append(Array("\r\nContent-Le".utf8))
        #expect(decoder.next() == nil)
        decoder.append(Array("ngth: 1\r\n\r\nx".utf8))
        #expect(decoder.next() == .body(Array("x".utf8)))
    }

    @Test func reportsOneErrorForALongRunOfGarbageReadInPieces() {
        var decoder = FrameDecoder(maximumMessageSize: 100)
        var events: [FrameDecoder.Event] = []
        let piece = [UInt8](repeating: UInt8(ascii: "x"), count: 65536)
        for _ in 0..<16 {
            decoder.append(piece)
            while let event = decoder.next() { events.append(event) }
        }
        decoder.append(Framing.frame(Array("ok".utf8)))
        while let event = decoder.next() { events.append(event) }
        #expect(events.count == 2, "one error for the whole megabyte, then the frame: \(events.map { "\($0)".prefix(80) })")
        if case .malformedHeader = events.first {
        } else {
            Issue.record("expected a malformed header first, got \(String(describing: events.first))")
        }
        #expect(events.last == .body(Array("ok".utf8)))
        #expect(!decoder.isMidFrame)
    }

    @Test func reportsGarbageAgainAfterAValidFrame() {
        var decoder = FrameDecoder(maximumMessageSize: 100)
        decoder.append(
            Array("junk\r\n\r\n".utf8) + Framing.frame(Array("1".utf8)) + Array("more junk\r\n\r\n".utf8) + Framing.frame(Array("2".utf8)))
        var events: [FrameDecoder.Event] = []
        while let event = decoder.next() { events.append(event) }
        #expect(events.count == 4)
        #expect(events[1] == .body(Array("1".utf8)))
        #expect(events[3] == .body(Array("2".utf8)))
    }

    @Test func aHeaderEndedByBareLineFeedsDoesNotSwallowTheNextFrame() {
        var decoder = FrameDecoder(maximumMessageSize: 100)
        decoder.append(Array("Content-Length: 2\n\n{}".utf8) + Framing.frame(Array("[1]".utf8)))
        guard case .malformedHeader(let reason) = decoder.next() else {
            Issue.record("expected a malformed header")
            return
        }
        #expect(reason.contains("bare LF"))
        #expect(decoder.next() == .body(Array("[1]".utf8)))
        #expect(decoder.next() == nil)
    }

    @Test func aBareLineFeedArrivingAloneIsRefusedAtOnce() {
        var decoder = FrameDecoder(maximumMessageSize: 100)
        decoder.append(Array("Content-Length: 2\n".utf8))
        guard case .malformedHeader = decoder.next() else {
            Issue.record("expected a malformed header before more input")
            return
        }
        decoder.append(Array("\n{}".utf8) + Framing.frame(Array("7".utf8)))
        #expect(decoder.next() == .body(Array("7".utf8)))
    }

    /// The framer fuzzer's property (FUZZING.md), and its first find: garbage that goes on in
    /// the next read must not make the frame after it read as part of a bad header. Fed
    /// whole or in pieces, the stream gives the same frames.
    @Test func garbageSplitAcrossReadsStillReachesTheNextFrame() {
        let stream = Array("bad\r\n\r\nmore garbage ".utf8) + Framing.frame(Array("{}".utf8))
        var whole = FrameDecoder(maximumMessageSize: 100)
        whole.append(stream)
        var wholeEvents: [FrameDecoder.Event] = []
        while let event = whole.next() { wholeEvents.append(event) }
        #expect(wholeEvents == [.malformedHeader(reason: "header line without a colon: \"bad\""), .body(Array("{}".utf8))])

        var pieces = FrameDecoder(maximumMessageSize: 100)
        var pieceEvents: [FrameDecoder.Event] = []
        for split in stride(from: 0, to: stream.count, by: 7) {
            pieces.append(Array(stream[split..<min(split + 7, stream.count)]))
            while let event = pieces.next() { pieceEvents.append(event) }
        }
        #expect(pieceEvents == wholeEvents)
        #expect(!pieces.isMidFrame && !whole.isMidFrame)
    }
}
