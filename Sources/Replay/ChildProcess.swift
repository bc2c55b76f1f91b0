#if canImport(Glibc)
import Glibc
#endif
import Basics
import JSONKit
import JSONRPC
import Synchronization

/// A daemon spawned with pipes on stdin, stdout and stderr. Its stdout is framed and
/// parsed on a reader thread; everything it does arrives as an `Event` in one mailbox.
final class ChildProcess: Sendable {
    enum Event: Sendable {
        case message(JSON)
        /// A frame whose body is not JSON, or a framing error in the daemon's output.
        case garbage(String)
        case exited(status: Int32)
    }

    let pid: pid_t
    let events = Mailbox<Event>()
    /// The daemon's stdin; -1 once closed.
    private let input: Atomic<Int32>
    private let stderrText = Mailbox<[UInt8]>()

    /// `environment`: `NAME=value` strings; nil inherits this process's.
    init(command: [String], environment: [String]? = nil) throws {
        let process = try SpawnedProcess(command: command, environment: environment)
        self.pid = process.pid
        self.input = Atomic(process.standardInput)
        startReaders(process)
    }

    private func startReaders(_ process: SpawnedProcess) {
        let events = self.events, stderrText = self.stderrText
        let stdout = process.standardOutput, stderr = process.standardError
        startThread(named: "daemon stdout") {
            var decoder = FrameDecoder(maximumMessageSize: Int.max)
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(stdout, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                chunk.withUnsafeBytes { decoder.append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                while let event = decoder.next() {
                    switch event {
                    case .body(let body):
                        if let message = try? JSON.parse(body) {
                            events.post(.message(message))
                        } else {
                            events.post(.garbage(String(decoding: body, as: UTF8.self)))
                        }
                    case .malformedHeader(let reason):
                        events.post(.garbage("malformed header in the daemon's output: \(reason)"))
                    case .oversized:
                        break
                    }
                }
            }
            close(stdout)
            // Report the exit only after all output is in, so no message is lost behind it.
            events.post(.exited(status: process.wait().shellStatus))
        }
        startThread(named: "daemon stderr") {
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(stderr, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                stderrText.post(Array(chunk[..<count]))
            }
            close(stderr)
        }
    }

    /// This process's environment without the variable `name`.
    static func inheritedEnvironment(without name: String) -> [String] {
        var entries: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if !text.hasPrefix(name + "=") { entries.append(text) }
            entry += 1
        }
        return entries
    }

    /// Writes `bytes` `times` times to the daemon's stdin; false if it is closed. The repeats
    /// go out in blocks of about 64 KB, never multiplied out in memory whole.
    func write(_ bytes: [UInt8], times: Int) -> Bool {
        guard !bytes.isEmpty, times > 1 else { return times < 1 || write(bytes) }
        let perBlock = max(1, min(times, (64 << 10) / bytes.count))
        var block: [UInt8] = []
        block.reserveCapacity(bytes.count * perBlock)
        for _ in 0..<perBlock { block += bytes }
        var left = times
        while left >= perBlock {
            guard write(block) else { return false }
            left -= perBlock
        }
        return left == 0 || write(Array(block[..<(bytes.count * left)]))
    }

    /// Writes all of `bytes` to the daemon's stdin; false if it is closed.
    func write(_ bytes: [UInt8]) -> Bool {
        let input = self.input.load(ordering: .acquiring)
        guard input >= 0 else { return false }
        return (try? FileDescriptor(rawValue: input).writeAll(bytes)) != nil
    }

    func closeInput() {
        let input = self.input.exchange(-1, ordering: .acquiringAndReleasing)
        if input >= 0 { close(input) }
    }

    func kill() {
        Glibc.kill(pid, SIGKILL)
    }

    /// What the daemon wrote to stderr so far.
    func standardError() -> String {
        String(decoding: stderrText.takeAll(waitingAtMost: 0).joined(), as: UTF8.self)
    }
}
