import FuzzSupport
import JSONRPC

// libFuzzer target: the LSP framer fed the same bytes twice, once whole and once in
// pieces cut at points the input chooses. The frames found must not depend on how the
// bytes arrived; no body may exceed the limit or its Content-Length.
//
// Input: byte 0 picks the message size limit, bytes 1...8 seed the split points, the
// rest is the stream.

@_cdecl("LLVMFuzzerTestOneInput")
public func framerFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size >= 9 else { return 0 }
    let input = UnsafeBufferPointer(start: data, count: size)
    let limit = [0, 1, 16, 100, 4096, 1 << 20][Int(input[0]) % 6]
    var seed = input[1..<9].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    let stream = Array(input[9...])

    var whole = FrameDecoder(maximumMessageSize: limit)
    whole.append(stream)
    let expected = drain(&whole, limit: limit)
    let wholeMidFrame = whole.isMidFrame

    var pieces = FrameDecoder(maximumMessageSize: limit)
    var events: [FrameDecoder.Event] = []
    var offset = 0
    while offset < stream.count {
        seed = seed &* 6364136223846793005 &+ 1442695040888963407
        let length = min(stream.count - offset, 1 + Int(seed >> 33) % 64)
        pieces.append(Array(stream[offset..<offset + length]))
        events += drain(&pieces, limit: limit)
        offset += length
    }
    check(events == expected, "split points changed the frames: \(events.map(summary)) vs \(expected.map(summary))")
    check(pieces.isMidFrame == wholeMidFrame, "split points changed isMidFrame")
    return 0
}

private func drain(_ decoder: inout FrameDecoder, limit: Int) -> [FrameDecoder.Event] {
    var events: [FrameDecoder.Event] = []
    while let event = decoder.next() {
        if case .body(let body) = event { check(body.count <= limit, "a body of \(body.count) bytes passed the limit \(limit)") }
        events.append(event)
        check(events.count <= 1 << 20, "the decoder does not stop")
    }
    return events
}

private func summary(_ event: FrameDecoder.Event) -> String {
    switch event {
    case .body(let body): "body(\(body.count))"
    case .malformedHeader(let reason): "malformed(\(reason))"
    case .oversized(let length, _): "oversized(\(length))"
    }
}

// The entry point (FUZZING.md, "Entry point"): in this file, beside the test function.
@_cdecl("fuzz_framer_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runLibFuzzer(argc, argv, framerFuzzerTestOneInput)
}
