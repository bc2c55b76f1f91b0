#if canImport(Glibc)
import Glibc
#endif
import JSONKit
import Basics

/// What the transport reports to its owner.
package enum TransportEvent: Sendable {
    /// A message or batch, and the size of its body in bytes.
    case payload(Payload, bodySize: Int)
    /// A header block could not be read, or a body was too large: answer with `error`
    /// under a null id. The stream has resynchronised.
    case framingError(ResponseError)
    /// stdin reached end of file; `midFrame` when it cut a message short.
    case endOfInput(midFrame: Bool)
    /// stdout could not be written (the client is gone).
    case outputFailed(errno: Int32)
}

/// JSON-RPC over two file descriptors: one reader thread (frame + parse), one writer
/// thread (encode + write). The writer's queue is unbounded, so a client that reads
/// slowly never stops the daemon from reading its next request.
package final class StdioTransport: @unchecked Sendable {
    private let input: Int32
    private let output: Int32
    private let maximumMessageSize: Int
    private let writer: Writer

    package init(input: Int32 = 0, output: Int32 = 1, maximumMessageSize: Int) {
        self.input = input
        self.output = output
        self.maximumMessageSize = maximumMessageSize
        self.writer = Writer(descriptor: output)
        // A vanished reader must surface as EPIPE from write(2), not kill the process.
        signal(SIGPIPE, SIG_IGN)
    }

    /// Starts both threads; every event is handed to `deliver` on the reader thread, in order.
    package func start(deliver: @escaping @Sendable ([TransportEvent]) -> Void) {
        let input = self.input
        let limit = maximumMessageSize
        writer.start(onFailure: { code in deliver([.outputFailed(errno: code)]) })
        startThread(named: "reader") {
            var decoder = FrameDecoder(maximumMessageSize: limit)
            var scratch = PackingScratch()
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 {
                    deliver([.endOfInput(midFrame: decoder.isMidFrame)])
                    return
                }
                chunk.withUnsafeBytes { decoder.append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                var events: [TransportEvent] = []
                while let event = decoder.next() {
                    events.append(StdioTransport.transportEvent(for: event, scratch: &scratch))
                }
                deliver(events)
            }
        }
    }

    static func transportEvent(for event: FrameDecoder.Event, scratch: inout PackingScratch) -> TransportEvent {
        switch event {
        case .body(let body):
            return .payload(Payload(body: body, scratch: &scratch), bodySize: body.count)
        case .malformedHeader(let reason):
            return .framingError(ResponseError(code: ErrorCode.parseError, message: "Parse error: malformed header: \(reason)"))
        case .oversized(let length, let limit):
            return .framingError(
                .invalidRequest(
                    "message of \(length) bytes exceeds the maximum message size of \(limit) bytes",
                    data: ["contentLength": JSON(length), "maxMessageSize": JSON(limit)]))
        }
    }

    package func send(_ message: Outgoing) {
        writer.enqueue(message)
    }

    /// Waits until everything sent so far is written, or `milliseconds` pass.
    package func flush(waitingAtMost milliseconds: Int) {
        writer.flush(waitingAtMost: milliseconds)
    }

    /// How many tallies of written frames wait for a flush (tests: it must not grow with
    /// the messages written).
    var writtenTalliesQueued: Int { writer.writtenTalliesQueued }

    /// Writes what was sent so far, then ends the writer thread: for a daemon that ends
    /// inside a longer-lived process (the session fuzzer makes thousands). Nothing is
    /// written after it.
    package func stopWriting() {
        writer.stop()
    }
}

extension Framing {
    /// Encodes `message` straight into `output`, framed: the writer's path, where a copy of
    /// each body would cost an allocation a message.
    package static func appendFrame(encoding message: JSON, to output: inout [UInt8]) {
        message.withEncoded { body in
            appendHeader(length: body.count, to: &output)
            output.append(contentsOf: body)
        }
    }
}

/// The one writer of stdout.
private final class Writer: @unchecked Sendable {
    private let descriptor: Int32
    private enum Item {
        case message(Outgoing)
        case stop
    }

    private let queue = Mailbox<Item>()
    private let written = Mailbox<Int>()
    private let enqueued = LockedValue(0)
    /// Only `flush`'s caller (the main thread) reads and writes this.
    private var flushed = 0

    /// Encoded frames are written in pieces of about this size, so a drained backlog never
    /// needs a second copy of itself as one buffer.
    static let writeSize = 1 << 20
    /// Each time this much more has been written, once the batch that crossed it is freed,
    /// free memory is handed back to the kernel: a trim per 16 MB written costs little, and
    /// a drained backlog is given back (all but what the last 16 MB held).
    static let largeDrainSize = 16 << 20

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    func start(onFailure: @escaping @Sendable (Int32) -> Void) {
        // Made before any scratch scope: a static first made inside one would keep its slot.
        _ = JSONRPCVersion.value
        startThread(named: "writer") { [self] in
            var failed = false
            var bytes: [UInt8] = []
            var drained = 0
            while true {
                var items = queue.takeAll()
                let stopping = items.contains { if case .stop = $0 { true } else { false } }
                var batch = items.compactMap { item -> Outgoing? in if case .message(let message) = item { message } else { nil } }
                items = []
                let count = batch.count
                for (index, message) in batch.enumerated() where !failed {
                    // The message's tree (an answer's row made from its packed bytes) is
                    // built, encoded and dropped here: scratch memory, not malloc's.
                    JSON.withScratchAllocation { Framing.appendFrame(encoding: message.json, to: &bytes) }
                    if bytes.count >= Writer.writeSize || index == count - 1 {
                        drained += bytes.count
                        if let code = writeAll(bytes) {
                            failed = true
                            onFailure(code)
                        }
                        bytes.removeAll(keepingCapacity: bytes.capacity <= 2 * Writer.writeSize)
                    }
                }
                batch = []
                if drained >= Writer.largeDrainSize {
                    // A client that stopped reading leaves a backlog of messages and their
                    // trees; malloc keeps what they freed unless asked to give it back.
                    drained = 0
                    MemoryRelease.trimMalloc()
                }
                // Failed writes still count as done, so flush() never waits on a dead pipe.
                // Folded into one count: only a flush takes from this mailbox, and one count
                // per batch kept until then grew the daemon by 8 bytes a message (issue 27).
                written.post(count, foldingInto: +=)
                if stopping { return }
            }
        }
    }

    var writtenTalliesQueued: Int { written.queuedCount }

    func enqueue(_ message: Outgoing) {
        enqueued.withLock { $0 += 1 }
        queue.post(.message(message))
    }

    func stop() {
        queue.post(.stop)
    }

    func flush(waitingAtMost milliseconds: Int) {
        let target = enqueued.withLock { $0 }
        let deadline = MonotonicClock.milliseconds() + milliseconds
        while flushed < target {
            let remaining = deadline - MonotonicClock.milliseconds()
            guard remaining > 0 else { return }
            flushed += written.takeAll(waitingAtMost: remaining).reduce(0, +)
        }
    }

    /// nil on success, else errno.
    private func writeAll(_ bytes: [UInt8]) -> Int32? {
        do {
            _ = try FileDescriptor(rawValue: descriptor).writeAll(bytes)
            return nil
        } catch {
            return (error as? Errno)?.rawValue ?? EIO
        }
    }
}
