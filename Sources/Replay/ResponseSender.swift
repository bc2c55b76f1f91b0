#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOHTTP1
import TranscriptFormat

/// Sends one fixture response on a connection, paced as the route asks, then closes it.
/// Every step runs on the connection's event loop; pauses are scheduled, never slept.
struct ResponseSender: Sendable {
    let channel: any Channel
    let response: FixtureResponse

    /// The most body bytes written at once: the next piece waits until this one is written,
    /// so a padded body of a gigabyte is never all in memory.
    static let pieceSize = 64 << 10

    func start() {
        guard response.delayMilliseconds > 0 else { return sendHead() }
        channel.eventLoop.scheduleTask(in: .milliseconds(Int64(response.delayMilliseconds))) { sendHead() }
    }

    private func sendHead() {
        // HTTP/1.0 and one response per connection: with no Content-Length (omitContentLength)
        // the body then ends where the connection does, and NIO adds no chunked coding.
        var head = HTTPResponseHead(version: .http1_0, status: HTTPResponseStatus(statusCode: response.status))
        for (name, value) in response.headers { head.headers.add(name: name, value: value) }
        if !response.omitContentLength { head.headers.replaceOrAdd(name: "Content-Length", value: "\(response.length)") }
        head.headers.replaceOrAdd(name: "Connection", value: "close")
        channel.writeAndFlush(HTTPServerResponsePart.head(head), promise: nil)
        if response.reset {
            let channel = self.channel
            send(0..<response.length / 2) {
                // SO_LINGER 0: close sends RST instead of FIN.
                guard let socket = channel as? SocketOptionProvider else { return channel.close(promise: nil) }
                socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
            }
            return
        }
        drip(from: 0)
    }

    /// Sends the body from `offset` in `dripChunks` pieces, `dripMilliseconds` apart, then ends it.
    private func drip(from offset: Int) {
        // The body is at most a file's bytes plus `padToBytes`, and `dripChunks` at most
        // TranscriptLimits.dripChunks: no overflow.
        let size = max(1, (response.length + response.dripChunks - 1) / response.dripChunks)
        let end = min(response.length, offset + size)
        send(offset..<end) {
            guard end >= response.length else {
                channel.eventLoop.scheduleTask(in: .milliseconds(Int64(response.dripMilliseconds))) { drip(from: end) }
                return
            }
            let channel = self.channel
            channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { _ in channel.close(promise: nil) }
        }
    }

    /// Writes the body's bytes in `range`, a piece at a time, each once the one before is
    /// written, then runs `then`. A client that goes away ends it (the connection is closed).
    private func send(_ range: Range<Int>, then: @escaping @Sendable () -> Void) {
        guard !range.isEmpty else { return then() }
        let end = min(range.upperBound, range.lowerBound + ResponseSender.pieceSize)
        let channel = self.channel
        channel.writeAndFlush(body(range.lowerBound..<end)).whenComplete { result in
            guard case .success = result else { return channel.close(promise: nil) }
            // Through the loop, not nested: a write that completes at once would otherwise
            // recurse once per piece.
            channel.eventLoop.execute { send(end..<range.upperBound, then: then) }
        }
    }

    /// The body's bytes in `range`: the route's body, then the spaces that pad it.
    private func body(_ range: Range<Int>) -> HTTPServerResponsePart {
        var buffer = channel.allocator.buffer(capacity: range.count)
        let fromBody = range.clamped(to: 0..<response.body.count)
        if !fromBody.isEmpty { buffer.writeBytes(response.body[fromBody]) }
        buffer.writeRepeatingByte(UInt8(ascii: " "), count: range.count - fromBody.count)
        return .body(.byteBuffer(buffer))
    }
}
