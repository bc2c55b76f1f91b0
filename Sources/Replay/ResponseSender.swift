#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOHTTP1

/// Sends one fixture response on a connection, paced as the route asks, then closes it.
/// Every step runs on the connection's event loop; pauses are scheduled, never slept.
struct ResponseSender: Sendable {
    let channel: any Channel
    let response: FixtureResponse

    func start() {
        guard response.delayMilliseconds > 0 else { return sendHead() }
        channel.eventLoop.scheduleTask(in: .milliseconds(Int64(response.delayMilliseconds))) { sendHead() }
    }

    private func sendHead() {
        // HTTP/1.0 and one response per connection: with no Content-Length (omitContentLength)
        // the body then ends where the connection does, and NIO adds no chunked coding.
        var head = HTTPResponseHead(version: .http1_0, status: HTTPResponseStatus(statusCode: response.status))
        for (name, value) in response.headers { head.headers.add(name: name, value: value) }
        if !response.omitContentLength { head.headers.replaceOrAdd(name: "Content-Length", value: "\(response.body.count)") }
        head.headers.replaceOrAdd(name: "Connection", value: "close")
        channel.write(HTTPServerResponsePart.head(head), promise: nil)
        if response.reset {
            let channel = self.channel
            channel.writeAndFlush(body(response.body.prefix(response.body.count / 2))).whenComplete { _ in
                // SO_LINGER 0: close sends RST instead of FIN.
                guard let socket = channel as? SocketOptionProvider else { return channel.close(promise: nil) }
                socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
            }
            return
        }
        sendBody(from: 0)
    }

    private func sendBody(from offset: Int) {
        let size = max(1, (response.body.count + response.dripChunks - 1) / response.dripChunks)
        let end = min(response.body.count, offset + size)
        if offset < end { channel.write(body(response.body[offset..<end]), promise: nil) }
        guard end >= response.body.count else {
            channel.flush()
            channel.eventLoop.scheduleTask(in: .milliseconds(Int64(response.dripMilliseconds))) { sendBody(from: end) }
            return
        }
        let channel = self.channel
        channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { _ in channel.close(promise: nil) }
    }

    private func body(_ bytes: ArraySlice<UInt8>) -> HTTPServerResponsePart {
        .body(.byteBuffer(channel.allocator.buffer(bytes: bytes)))
    }
}
