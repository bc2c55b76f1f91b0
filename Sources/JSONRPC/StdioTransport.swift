#if canImport(Glibc)
import Glibc
#endif
import Basics
import CSystemShims
import JSONKit

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

/// JSON-RPC over two file descriptors: one reader thread (frame + parse); answers encoded
/// and written by the thread that sends them while the pipe takes them without waiting,
/// else by one writer thread (encode + write) whose queue is unbounded, so a client that
/// reads slowly never stops the daemon from reading its next request.
///
/// This is what the threads share (`Sendable`); what only the sending thread touches is its
/// `TransportSender`. `join` ends both threads and waits for them.
package final class StdioTransport: Sendable {
    private let input: Int32
    private let output: Int32
    private let maximumMessageSize: Int
    fileprivate let writer: Writer
    /// A pipe that `join` writes to: its read end, readable from then on, tells the reader
    /// thread (waiting for input) and the writer thread (waiting for the output to take more)
    /// to end.
    private let stopping: (read: Int32, write: Int32)
    private let threads = LockedValue<[JoinableThread]>([])

    package init(input: Int32 = 0, output: Int32 = 1, maximumMessageSize: Int) {
        self.input = input
        self.output = output
        self.maximumMessageSize = maximumMessageSize
        var ends: [Int32] = [-1, -1]
        precondition(cshims_pipe_cloexec(&ends) == 0, "pipe2 failed: \(errno)")
        self.stopping = (ends[0], ends[1])
        self.writer = Writer(descriptor: output, stopping: ends[0])
        // A vanished reader must surface as EPIPE from write(2), not kill the process.
        signal(SIGPIPE, SIG_IGN)
    }

    deinit {
        close(stopping.read)
        close(stopping.write)
    }

    /// Starts both threads; every event is handed to `deliver` on the reader thread, in order
    /// (an output failure on the writer thread). Call it once, and `join` before letting go.
    package func start(deliver: @escaping @Sendable ([TransportEvent]) -> Void) {
        let input = self.input, stopping = self.stopping.read
        let limit = maximumMessageSize
        let writing = writer.start(onFailure: { code in deliver([.outputFailed(errno: code)]) })
        let reading = startJoinableThread(named: "reader") {
            var decoder = FrameDecoder(maximumMessageSize: limit)
            var scratch = PackingScratch()
            var chunk = [UInt8](repeating: 0, count: 65536)
            var descriptors = [
                pollfd(fd: input, events: Int16(POLLIN), revents: 0), pollfd(fd: stopping, events: Int16(POLLIN), revents: 0),
            ]
            while true {
                // Input, or `join` asking this thread to end, whichever comes first.
                let ready = poll(&descriptors, 2, -1)
                if ready < 0, errno == EINTR { continue }
                if descriptors[1].revents != 0 { return }
                let count = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR || errno == EAGAIN { continue }
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
        threads.withLock { $0 += [reading, writing] }
    }

    /// Ends both threads and waits until they have: the reader stops waiting for input, the
    /// writer for a pipe that takes no more (what it had not written is dropped). Call it once
    /// nothing is sent any more (after `TransportSender.stopWriting` and a `flush`), from a
    /// thread that is neither of the two.
    package func join() {
        writer.stop()
        var byte: UInt8 = 1
        while write(stopping.write, &byte, 1) < 0, errno == EINTR {}
        let started = threads.withLock { started in
            defer { started = [] }
            return started
        }
        for thread in started { thread.join() }
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
}

/// The sending side of a `StdioTransport`: what the one thread that sends at a time (the
/// daemon's, whichever thread holds its mailbox's role) touches, and nobody else. Not
/// `Sendable`: the compiler keeps it with its owner.
package final class TransportSender {
    private let writer: Writer
    /// Frames the sending thread encoded while the writer thread had nothing queued: written
    /// by `push`, from the sending thread, when they can be without waiting.
    private var pending: [UInt8] = []
    private var holding = false
    /// Whether the descriptor takes writes that do not wait (pwritev2's RWF_NOWAIT): a pipe
    /// does; a regular file says EOPNOTSUPP, and everything then goes through the thread.
    private var writesWithoutWaiting = true
    /// Frames written, as far as `flush` has counted them.
    private var flushed = 0

    package init(_ transport: StdioTransport) {
        self.writer = transport.writer
    }

    /// Sends `message` after everything sent before it. When the writer thread has nothing
    /// queued, the message is encoded here and written from this thread, as far as the pipe
    /// takes it without waiting: a request answered at once costs no wake-up of another
    /// thread. Whatever would wait goes to the writer thread, and so does every message
    /// after it until that thread has written it all; so a client that reads slowly still
    /// never stops the daemon.
    package func send(_ message: Outgoing) {
        if pending.isEmpty, !writer.isIdle {
            writer.enqueue(message)
            return
        }
        // The message's tree (an answer's row made from its packed bytes) is built, encoded
        // and dropped here: scratch memory, not malloc's.
        JSON.withScratchAllocation { Framing.appendFrame(encoding: message.json, to: &pending) }
        if !holding || pending.count >= Writer.writeSize { push() }
    }

    /// Runs `body`, writing what it sends once it returns: the answers to a burst of
    /// pipelined requests then go out in one write, as a C server's buffered output would.
    package func holdingWrites<R>(_ body: () throws -> R) rethrows -> R {
        holding = true
        defer {
            holding = false
            push()
        }
        return try body()
    }

    private func push() {
        guard !pending.isEmpty else { return }
        writer.write(&pending, withoutWaiting: &writesWithoutWaiting)
    }

    /// Waits until everything sent so far is written, or `milliseconds` pass.
    package func flush(waitingAtMost milliseconds: Int) {
        push()
        writer.flush(waitingAtMost: milliseconds, flushed: &flushed)
    }

    /// How many tallies of written frames wait for a flush (tests: it must not grow with
    /// the messages written).
    package var writtenTalliesQueued: Int { writer.writtenTalliesQueued }

    /// Writes what was sent so far, then ends the writer thread once it has written it.
    /// Nothing is written after it.
    package func stopWriting() {
        push()
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

/// The writer thread, and the sending thread's writes that need no wait.
private final class Writer: Sendable {
    private let descriptor: Int32
    /// Readable once the transport is joined: a write waiting for the pipe gives up.
    private let stopping: Int32
    private enum Item: Sendable {
        case message(Outgoing)
        /// Frames the sending thread encoded, from `offset` on (what it wrote itself is before).
        case bytes([UInt8], offset: Int)
        case stop
    }

    private let queue = Mailbox<Item>()
    private let written = Mailbox<Int>()
    private let enqueued = LockedValue(0)
    /// Items enqueued and not yet written by the thread. While it is above 0 the sending
    /// thread writes nothing itself, so the output stays in the order it was sent. Only the
    /// sending thread raises it; the writer thread lowers it once the items are written.
    private let outstanding = LockedValue(0)

    /// Encoded frames are written in pieces of about this size, so a drained backlog never
    /// needs a second copy of itself as one buffer.
    static let writeSize = 1 << 20
    /// Each time this much more has been written, once the batch that crossed it is freed,
    /// free memory is handed back to the kernel: a trim per 16 MB written costs little, and
    /// a drained backlog is given back (all but what the last 16 MB held).
    static let largeDrainSize = 16 << 20

    init(descriptor: Int32, stopping: Int32) {
        self.descriptor = descriptor
        self.stopping = stopping
    }

    func start(onFailure: @escaping @Sendable (Int32) -> Void) -> JoinableThread {
        // Made before any scratch scope: a static first made inside one would keep its slot.
        _ = JSONRPCVersion.value
        return startJoinableThread(named: "writer") { [self] in
            var failed = false
            var bytes: [UInt8] = []
            var drained = 0
            func writeOut(_ piece: UnsafeRawBufferPointer) {
                guard !failed, !piece.isEmpty else { return }
                drained += piece.count
                if let code = writeAll(piece) {
                    failed = true
                    onFailure(code)
                }
            }
            func writeBuffered() {
                bytes.withUnsafeBytes { writeOut($0) }
                bytes.removeAll(keepingCapacity: bytes.capacity <= 2 * Writer.writeSize)
            }
            while true {
                var items = queue.takeAll()
                var stopping = false
                var count = 0
                for index in items.indices {
                    switch items[index] {
                    case .stop:
                        stopping = true
                    case .message(let message):
                        count += 1
                        if !failed {
                            // The message's tree (an answer's row made from its packed bytes)
                            // is built, encoded and dropped here: scratch memory, not malloc's.
                            JSON.withScratchAllocation { Framing.appendFrame(encoding: message.json, to: &bytes) }
                        }
                    case .bytes(let frames, let offset):
                        count += 1
                        writeBuffered()
                        frames.withUnsafeBytes { writeOut(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
                    }
                    // Dropped as soon as written: a backlog's messages are freed as it drains.
                    items[index] = .bytes([], offset: 0)
                    if bytes.count >= Writer.writeSize || index == items.count - 1 { writeBuffered() }
                }
                items = []
                if drained >= Writer.largeDrainSize {
                    // A client that stopped reading leaves a backlog of messages and their
                    // trees; malloc keeps what they freed unless asked to give it back.
                    drained = 0
                    MemoryRelease.trimMalloc()
                }
                // Written (or failed: failed writes still count as done, so neither flush()
                // nor the sending thread ever waits on a dead pipe).
                outstanding.withLock { $0 -= count }
                // Folded into one count: only a flush takes from this mailbox, and one count
                // per batch kept until then grew the daemon by 8 bytes a message (issue 27).
                written.post(count, foldingInto: +=)
                if stopping { return }
            }
        }
    }

    var writtenTalliesQueued: Int { written.queuedCount }

    /// Nothing waits to be written by the thread.
    var isIdle: Bool { outstanding.withLock { $0 == 0 } }

    func enqueue(_ message: Outgoing) {
        enqueue(.message(message))
    }

    private func enqueue(_ item: Item) {
        enqueued.withLock { $0 += 1 }
        outstanding.withLock { $0 += 1 }
        queue.post(item)
    }

    /// Writes `frames` from the sending thread as far as that needs no wait, when the thread
    /// has nothing queued; the rest goes to the thread. Leaves `frames` empty.
    func write(_ frames: inout [UInt8], withoutWaiting writesWithoutWaiting: inout Bool) {
        var offset = 0
        if writesWithoutWaiting, isIdle {
            while offset < frames.count {
                let count = frames.withUnsafeBytes { cshims_write_without_waiting(descriptor, $0.baseAddress! + offset, $0.count - offset) }
                if count > 0 {
                    offset += count
                } else if count < 0, errno == EINTR {
                    continue
                } else {
                    // EAGAIN: the pipe is full. Any other error is the thread's to meet and
                    // report, as it would have without this path.
                    if count < 0, errno == EOPNOTSUPP || errno == EINVAL || errno == ENOSYS { writesWithoutWaiting = false }
                    break
                }
            }
            if offset == frames.count {
                frames.removeAll(keepingCapacity: frames.capacity <= 2 * Writer.writeSize)
                return
            }
        }
        enqueue(.bytes(frames, offset: offset))
        frames = []
    }

    func stop() {
        queue.post(.stop)
    }

    func flush(waitingAtMost milliseconds: Int, flushed: inout Int) {
        let target = enqueued.withLock { $0 }
        let deadline = MonotonicClock.milliseconds() + milliseconds
        while flushed < target {
            let remaining = deadline - MonotonicClock.milliseconds()
            guard remaining > 0 else { return }
            flushed += written.takeAll(waitingAtMost: remaining).reduce(0, +)
        }
    }

    /// nil on success, else errno; ECANCELED when the transport was joined while the pipe
    /// took no more. Waits for the pipe with poll, next to `stopping`, where writes that do
    /// not wait work (pipes); else (a regular file) with a plain write.
    private func writeAll(_ bytes: UnsafeRawBufferPointer) -> Int32? {
        var offset = 0
        var waits = true
        while offset < bytes.count {
            let count =
                waits
                ? cshims_write_without_waiting(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                : Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if count >= 0 {
                offset += count
                continue
            }
            let code = errno
            switch code {
            case EINTR:
                continue
            case EAGAIN:
                var descriptors = [
                    pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0), pollfd(fd: stopping, events: Int16(POLLIN), revents: 0),
                ]
                while poll(&descriptors, 2, -1) < 0, errno == EINTR {}
                if descriptors[1].revents != 0 { return ECANCELED }
            case EOPNOTSUPP, EINVAL, ENOSYS:
                guard waits else { return code }
                waits = false
            default:
                return code
            }
        }
        return nil
    }
}
