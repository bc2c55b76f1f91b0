#if canImport(Glibc)
import Glibc
#endif
import Basics
import JSONKit
import JSONRPC
@testable import Replay
import Testing

/// A daemon whose pipes the test drives by hand: what it reads, and when, is the test's choice
/// (the replayer always reads everything at once).
private final class HandDrivenDaemon: @unchecked Sendable {
    let process: SpawnedProcess
    private var decoder = FrameDecoder(maximumMessageSize: Int.max)

    init(arguments: [String] = []) throws {
        process = try SpawnedProcess(command: [TranscriptTests.daemon, "serve"] + arguments)
        _ = fcntl(process.standardOutput, F_SETFL, fcntl(process.standardOutput, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        process.kill()
        process.wait()
        close(process.standardInput)
        close(process.standardOutput)
        close(process.standardError)
    }

    /// Writes on a thread of its own: a daemon that stops reading must not hang the test.
    func sendInBackground(_ messages: [JSON]) {
        var framed: [UInt8] = []
        for message in messages { Framing.appendFrame(message.encoded(), to: &framed) }
        let bytes = framed, descriptor = process.standardInput
        startThread {
            bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let count = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                    if count < 0, errno == EINTR { continue }
                    if count <= 0 { return }
                    offset += count
                }
            }
        }
    }

    /// The next `count` messages, or as many as arrived within `milliseconds`.
    func receive(_ count: Int, withinMilliseconds milliseconds: Int) -> [JSON] {
        var messages: [JSON] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let deadline = MonotonicClock.milliseconds() + milliseconds
        while messages.count < count {
            while messages.count < count, let event = decoder.next() {
                if case .body(let body) = event, let message = try? JSON.parse(body) { messages.append(message) }
            }
            if messages.count >= count { break }
            let remaining = deadline - MonotonicClock.milliseconds()
            if remaining <= 0 { break }
            var poller = pollfd(fd: process.standardOutput, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(min(remaining, 1000))) > 0 else { continue }
            let read = chunk.withUnsafeMutableBytes { Glibc.read(process.standardOutput, $0.baseAddress, $0.count) }
            if read == 0 { break }
            if read > 0 { chunk.withUnsafeBytes { decoder.append(UnsafeRawBufferPointer(rebasing: $0[..<read])) } }
        }
        return messages
    }

    /// A line of /proc/PID/status such as VmRSS or VmHWM, in kB.
    func statusKilobytes(_ field: String) -> Int? {
        guard let text = try? readFileBytes("/proc/\(process.pid)/status") else { return nil }
        let line = String(decoding: text, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix(field + ":") }
        return line?.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    }

    func threadNames() -> [String] {
        var names: [String] = []
        guard let directory = opendir("/proc/\(process.pid)/task") else { return [] }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let task = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard !task.hasPrefix("."), let comm = try? readFileBytes("/proc/\(process.pid)/task/\(task)/comm") else { continue }
            names.append(String(decoding: comm, as: UTF8.self).trimmingNewline())
        }
        return names
    }
}

private extension String {
    func trimmingNewline() -> String { hasSuffix("\n") ? String(dropLast()) : self }
}

private func request(_ id: Int, _ method: String, _ params: JSON? = nil) -> JSON {
    var members: [(String, JSON)] = [("jsonrpc", "2.0"), ("id", JSON(id)), ("method", JSON(method))]
    if let params { members.append(("params", params)) }
    return .object(members)
}

@Suite struct DaemonProcessTests {
    /// Issue 12: with --log-level trace and a client that never reads stderr, the daemon used
    /// to stop after ~800 requests, blocked writing a log line into the full pipe.
    @Test func aClientThatNeverReadsStderrDoesNotStallTheDaemon() throws {
        let daemon = try HandDrivenDaemon(arguments: ["--log-level", "trace"])
        let count = 5000
        daemon.sendInBackground([request(0, "initialize")] + (1...count).map { request($0, "ping") })
        let answers = daemon.receive(count + 1, withinMilliseconds: 60_000)
        #expect(answers.count == count + 1, "the daemon answered \(answers.count) of \(count + 1) requests")
        #expect(answers.last?["id"]?.integerValue == count)
    }

    /// Issue 12: a backlog of ~100 MB of unread answers left the daemon at its peak size for
    /// good once drained; the writer now hands the memory back.
    @Test func memoryHeldByADrainedBacklogIsGivenBack() throws {
        let daemon = try HandDrivenDaemon()
        let objects = JSON.array(
            (0..<10_000).map { index -> JSON in
                .object([
                    ("id", JSON(index)), ("title", JSON("Book number \(index) of the backlog")),
                    ("text", JSON(String(repeating: "abcdefgh", count: 8))),
                ])
            })
        daemon.sendInBackground([
            request(0, "initialize"),
            request(1, "createSource", .object([("name", "big"), ("kind", "simple"), ("objects", objects)])),
        ])
        #expect(daemon.receive(2, withinMilliseconds: 30_000).count == 2)
        let baseline = try #require(daemon.statusKilobytes("VmRSS"))

        // About 1 MB of text per answer, 160 answers, and nobody reading yet. (Queued answers
        // hold their rows packed, about 0.8 MB each, until the writer encodes them.)
        daemon.sendInBackground((2..<162).map { request($0, "allObjects", .object([("source", "big")])) })
        let backlog = 150_000
        let deadline = MonotonicClock.milliseconds() + 60_000
        while (daemon.statusKilobytes("VmRSS") ?? 0) < baseline + backlog, MonotonicClock.milliseconds() < deadline {
            usleep(20_000)  // the interval of a poll with a deadline, not a wait for the answer
        }
        let peak = try #require(daemon.statusKilobytes("VmHWM"))
        #expect(peak >= baseline + backlog, "no backlog built up: peak \(peak) kB against \(baseline) kB at rest")

        let answers = daemon.receive(160, withinMilliseconds: 120_000)
        #expect(answers.count == 160)
        daemon.sendInBackground([request(200, "ping")])
        #expect(daemon.receive(1, withinMilliseconds: 10_000).first?["id"]?.integerValue == 200)
        let after = try #require(daemon.statusKilobytes("VmRSS"))
        #expect(after < baseline + 64_000, "RSS \(after) kB after the backlog drained; \(baseline) kB before it, peak \(peak) kB")
    }

    /// Issue 12: threads are named, so `top -H`, gdb and a core dump say which is which.
    @Test func theDaemonsThreadsAreNamed() throws {
        let daemon = try HandDrivenDaemon()
        daemon.sendInBackground([request(0, "initialize")])
        #expect(daemon.receive(1, withinMilliseconds: 30_000).count == 1)
        let names = daemon.threadNames()
        for name in ["main", "reader", "writer", "stderr"] {
            #expect(names.contains(name), "no thread named \(name) among \(names)")
        }
    }
}
