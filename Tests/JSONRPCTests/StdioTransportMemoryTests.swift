#if canImport(Glibc)
import Glibc
#endif
import Basics
import JSONKit
import Testing

@testable import JSONRPC

/// Issue 27, defect 17: the daemon grew by 8 bytes a message, for good. The writer told
/// `flush` how many frames it had written by posting one count per batch to a mailbox that
/// only a flush (at exit) ever took from.
@Suite struct StdioTransportMemoryTests {
    @Test func theWrittenTallyDoesNotGrowWithTheMessagesWritten() {
        var toClient: [Int32] = [-1, -1], fromClient: [Int32] = [-1, -1]
        #expect(pipe(&toClient) == 0)
        #expect(pipe(&fromClient) == 0)
        defer { [toClient[0], fromClient[1]].forEach { close($0) } }  // the others stay with the transport's threads
        let transport = StdioTransport(input: fromClient[0], output: toClient[1], maximumMessageSize: 1 << 20)
        transport.start { _ in }
        let sender = TransportSender(transport)
        // One message at a time, each read back before the next is sent: every one is a
        // batch of its own, as with a client that waits for each answer.
        var buffer = [UInt8](repeating: 0, count: 4096)
        var decoder = FrameDecoder(maximumMessageSize: 1 << 20)
        for id in 1...500 {
            sender.send(.response(id: JSON(id), result: .success(JSON("pong"))))
            var framed: FrameDecoder.Event?
            while framed == nil {
                let count = buffer.withUnsafeMutableBytes { read(toClient[0], $0.baseAddress, $0.count) }
                #expect(count > 0)
                guard count > 0 else { return }
                buffer.withUnsafeBytes { decoder.append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                framed = decoder.next()
            }
        }
        // No flush has taken a tally: before the fix, 499 or 500 were queued here.
        #expect(sender.writtenTalliesQueued <= 1)
        sender.flush(waitingAtMost: 10_000)
        #expect(sender.writtenTalliesQueued == 0)
        sender.stopWriting()
        transport.join()
    }

    @Test func aFoldingPostKeepsOneItemUntilTaken() {
        let mailbox = Mailbox<Int>()
        for _ in 0..<1000 { mailbox.post(1, foldingInto: +=) }
        #expect(mailbox.queuedCount == 1)
        #expect(mailbox.takeAll() == [1000])
        mailbox.post(7, foldingInto: +=)
        #expect(mailbox.takeAll() == [7])
    }
}
