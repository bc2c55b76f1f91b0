#if canImport(Glibc)
import Glibc
#endif
import Basics
import JSONKit
import Testing

@testable import JSONRPC

/// Issue 33: the sending thread writes answers itself while the pipe takes them, and hands
/// the rest to the writer thread. Neither may reorder the output or block the sender.
@Suite struct StdioTransportOrderTests {
    @Test func aFullPipeNeitherBlocksTheSenderNorReordersTheOutput() {
        var toClient: [Int32] = [-1, -1], fromClient: [Int32] = [-1, -1]
        #expect(pipe(&toClient) == 0)
        #expect(pipe(&fromClient) == 0)
        defer { [toClient[0], fromClient[1]].forEach { close($0) } }
        let transport = StdioTransport(input: fromClient[0], output: toClient[1], maximumMessageSize: 1 << 20)
        transport.start { _ in }
        let count = 2000
        let padding = JSON(String(repeating: "x", count: 1000))
        // 2 MB into a 64 KB pipe nobody reads yet, some messages sent one by one and some
        // held and written together: the sender must come back each time.
        let sent = Mailbox<Bool>(), read = Mailbox<Bool>(), flushed = Mailbox<Bool>()
        startThread {
            let sender = TransportSender(transport)
            for id in 1...count {
                let message = Outgoing.response(id: JSON(id), result: .success(padding))
                if id % 3 == 0 {
                    sender.holdingWrites {
                        sender.send(message)
                    }
                } else {
                    sender.send(message)
                }
            }
            sent.post(true)
            _ = read.takeAll()
            sender.flush(waitingAtMost: 10_000)
            sender.stopWriting()
            flushed.post(true)
        }
        #expect(sent.takeAll(waitingAtMost: 20_000) == [true], "send blocked on a full pipe")
        // Now the client reads: every answer arrives whole, once, in the order sent.
        var decoder = FrameDecoder(maximumMessageSize: 1 << 20)
        var buffer = [UInt8](repeating: 0, count: 65536)
        var ids: [Int] = []
        while ids.count < count {
            let read = buffer.withUnsafeMutableBytes { Glibc.read(toClient[0], $0.baseAddress, $0.count) }
            #expect(read > 0)
            guard read > 0 else { break }
            buffer.withUnsafeBytes { decoder.append(UnsafeRawBufferPointer(rebasing: $0[..<read])) }
            while case .body(let body) = decoder.next() {
                ids.append((try? JSON.parse(body))?["id"]?.integerValue ?? -1)
            }
        }
        #expect(ids == Array(1...count))
        read.post(true)
        #expect(flushed.takeAll(waitingAtMost: 20_000) == [true])
        transport.join()
    }

    @Test func aProducerHandlesItsItemsOnlyWhenNoOneElseHandlesAndAfterThoseQueuedBefore() {
        let mailbox = Mailbox<Int>()
        mailbox.post(1)
        // Free: the producer takes the role, with what was queued first.
        #expect(mailbox.claimOrPost(contentsOf: [2, 3]) == [1, 2, 3])
        // Held: the next producer's items wait for the holder.
        #expect(mailbox.claimOrPost(contentsOf: [4]) == nil)
        mailbox.release()
        #expect(mailbox.claimAll() == [4])
        mailbox.release()
        // A release that wakes brings the consumer back even with nothing queued.
        mailbox.release(waking: true)
        #expect(mailbox.claimAll() == [])
        mailbox.release()
    }
}

/// Issue 33: the daemon hung at exit about once in 80 sessions. The reader handled `exit` and
/// released the role waking the main loop; before the main loop took the role, the reader
/// claimed it again (for end of input); the main loop came to `claimAll`, found the role held
/// and waited; the reader's release, with nothing queued and no wake of its own, did not
/// signal, so the main loop never saw the wake-up still pending.
@Suite struct MailboxRoleTests {
    @Test func aWakeUpStillPendingWhenTheProducerReleasesReachesTheConsumerWaitingForTheRole() {
        let consumerWaits = Mailbox<Bool>()
        let mailbox = Mailbox<Int>(roleSteps: { step in
            if case .consumerWaits = step { consumerWaits.post(true) }
        })
        // The producer handles an item that ends the consumer's work, and wakes it.
        #expect(mailbox.claimOrPost(contentsOf: [1]) == [1])
        mailbox.release(waking: true)
        // It claims again before the consumer has come to take the role.
        #expect(mailbox.claimOrPost(contentsOf: []) == [])
        let returned = Mailbox<Bool>()
        startThread {
            _ = mailbox.claimAll()
            mailbox.release()
            returned.post(true)
        }
        // The consumer finds the role held and waits; only then is the role handed back.
        #expect(consumerWaits.takeAll(waitingAtMost: 10_000) == [true], "the consumer never waited for the role")
        mailbox.release()
        #expect(returned.takeAll(waitingAtMost: 10_000) == [true], "the consumer missed its wake-up")
    }
}
