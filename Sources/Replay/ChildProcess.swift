#if canImport(Glibc)
import Glibc
#endif
import JSONKit
import JSONRPC

/// A daemon spawned with pipes on stdin, stdout and stderr. Its stdout is framed and
/// parsed on a reader thread; everything it does arrives as an `Event` in one mailbox.
final class ChildProcess: @unchecked Sendable {
    enum Event: Sendable {
        case message(JSON)
        /// A frame whose body is not JSON, or a framing error in the daemon's output.
        case garbage(String)
        case exited(status: Int32)
    }

    let pid: pid_t
    let events = Mailbox<Event>()
    private var input: Int32
    private let stderrText = Mailbox<[UInt8]>()

    struct SpawnError: Error, CustomStringConvertible { let description: String }

    /// Held from pipe creation until the spawned child has its copies, so no other
    /// thread's spawn inherits these pipes before they are marked close-on-exec.
    private static let spawnLock = SpawnLock()

    init(command: [String]) throws {
        signal(SIGPIPE, SIG_IGN)
        ChildProcess.spawnLock.lock()
        defer { ChildProcess.spawnLock.unlock() }
        var stdinPipe: [Int32] = [0, 0], stdoutPipe: [Int32] = [0, 0], stderrPipe: [Int32] = [0, 0]
        guard pipe(&stdinPipe) == 0, pipe(&stdoutPipe) == 0, pipe(&stderrPipe) == 0 else {
            throw SpawnError(description: "pipe failed: errno \(errno)")
        }
        // Close-on-exec, so a daemon spawned concurrently (tests run in parallel) never
        // inherits another's stdin and keeps it from seeing end of input.
        for descriptor in stdinPipe + stdoutPipe + stderrPipe { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], 2)
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let result = posix_spawn(&pid, command[0], &actions, nil, argv, environ)
        close(stdinPipe[0]); close(stdoutPipe[1]); close(stderrPipe[1])
        guard result == 0 else {
            close(stdinPipe[1]); close(stdoutPipe[0]); close(stderrPipe[0])
            throw SpawnError(description: "cannot run \(command[0]): \(String(cString: strerror(result)))")
        }
        self.pid = pid
        self.input = stdinPipe[1]
        startReaders(stdout: stdoutPipe[0], stderr: stderrPipe[0])
    }

    private func startReaders(stdout: Int32, stderr: Int32) {
        let events = self.events, stderrText = self.stderrText, pid = self.pid
        startThread {
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
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            let exited = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            events.post(.exited(status: exited))
        }
        startThread {
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

    /// Writes all of `bytes` to the daemon's stdin; false if it is closed.
    func write(_ bytes: [UInt8]) -> Bool {
        guard input >= 0 else { return false }
        return bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let count = Glibc.write(input, raw.baseAddress! + offset, raw.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += count
            }
            return true
        }
    }

    func closeInput() {
        if input >= 0 { close(input) }
        input = -1
    }

    func kill() {
        Glibc.kill(pid, SIGKILL)
    }

    /// What the daemon wrote to stderr so far.
    func standardError() -> String {
        String(decoding: stderrText.takeAll(waitingAtMost: 0).joined(), as: UTF8.self)
    }
}

private final class SpawnLock: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    init() { pthread_mutex_init(&mutex, nil) }
    func lock() { pthread_mutex_lock(&mutex) }
    func unlock() { pthread_mutex_unlock(&mutex) }
}
