#if canImport(Glibc)
import Glibc
#endif
import Basics

/// Writes lines to a file descriptor (the daemon's stderr) from a thread of its own, so a
/// caller never waits on a reader. While the reader lags, up to `capacity` bytes wait in a
/// queue; lines beyond that are dropped and counted, and a note saying how many takes their
/// place in the output. Logging must never stall the daemon: a client that does not read
/// our stderr would otherwise stop it at the first full pipe.
package final class DroppingLineWriter: Sendable {
    package let capacity: Int
    private let descriptor: Int32
    private let lines = Mailbox<[UInt8]>()
    private let state = LockedValue(State())

    private struct State {
        var queuedBytes = 0
        /// Dropped since the last note.
        var dropped = 0
        var droppedInAll = 0
    }

    package init(descriptor: Int32, capacity: Int = 1 << 20) {
        self.descriptor = descriptor
        self.capacity = capacity
        startThread(named: "stderr") { [self] in run() }
    }

    /// Queues `line` (which should end in "\n"), or drops it when the queue is full. Never blocks.
    package func write(_ line: [UInt8]) {
        state.withLock { state in
            guard state.queuedBytes + line.count <= capacity else {
                state.dropped += 1
                state.droppedInAll += 1
                return
            }
            state.queuedBytes += line.count
            // Posted under the lock, so the note lands exactly where the lines went missing.
            if state.dropped > 0 {
                let note = DroppingLineWriter.note(state.dropped)
                state.queuedBytes += note.count
                state.dropped = 0
                lines.post(note)
            }
            lines.post(line)
        }
    }

    /// Lines dropped so far because the queue was full.
    package var droppedLines: Int { state.withLock { $0.droppedInAll } }

    static func note(_ dropped: Int) -> [UInt8] {
        Array("[\(dropped) log line\(dropped == 1 ? "" : "s") dropped: stderr was not being read]\n".utf8)
    }

    private func run() {
        while true {
            for line in lines.takeAll() {
                writeAll(line)
                state.withLock { $0.queuedBytes -= line.count }
            }
            // Lines dropped last, with none accepted since, are reported once the queue is empty.
            let dropped = state.withLock { state in
                guard state.queuedBytes == 0, state.dropped > 0 else { return 0 }
                defer { state.dropped = 0 }
                return state.dropped
            }
            if dropped > 0 { writeAll(DroppingLineWriter.note(dropped)) }
        }
    }

    private func writeAll(_ bytes: [UInt8]) {
        // A closed stderr loses the log, nothing else.
        _ = try? FileDescriptor(rawValue: descriptor).writeAll(bytes)
    }
}

/// A `TextOutputStream` over a `DroppingLineWriter`, for swift-log's `StreamLogHandler`.
package struct DroppingLineStream: TextOutputStream, Sendable {
    package let writer: DroppingLineWriter

    package init(writer: DroppingLineWriter) {
        self.writer = writer
    }

    package mutating func write(_ string: String) {
        writer.write(Array(string.utf8))
    }
}
