#if canImport(Glibc)
import Glibc
#endif
import Basics
import Foundation
import JSONKit
import JSONRPC
import Recording
@testable import Replay
import Testing

/// A `datasourced serve --record FILE` process, driven through its pipes.
private final class RecordingDaemon {
    let process: SpawnedProcess
    private var decoder = FrameDecoder(maximumMessageSize: Int.max)
    private(set) var termination: SpawnedProcess.Termination?

    static let executable: String = {
        URL(fileURLWithPath: Replayer.currentExecutable()).deletingLastPathComponent().appendingPathComponent("datasourced").path
    }()

    /// The child starts with no signal blocked (SpawnedProcess sees to it, whatever this test's
    /// thread blocks): with SIGXFSZ blocked, a write past a file-size limit would fail with
    /// EFBIG whatever the daemon does, and the file-size test would prove nothing.
    init(_ command: [String]) throws {
        process = try SpawnedProcess(command: command)
        _ = fcntl(process.standardOutput, F_SETFL, fcntl(process.standardOutput, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        if termination == nil {
            process.kill()
            wait()
        }
        close(process.standardInput)
        close(process.standardOutput)
        close(process.standardError)
    }

    /// Writes on a thread of its own: the test reads the answers meanwhile.
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

    /// Messages until `responses` of them answered a request (or stdout ended, or a minute passed).
    func receive(responses: Int) -> [JSON] {
        var messages: [JSON] = []
        var answered = 0
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let deadline = MonotonicClock.milliseconds() + 60_000
        while answered < responses {
            while answered < responses, let event = decoder.next() {
                if case .body(let body) = event, let message = try? JSON.parse(body) {
                    messages.append(message)
                    if message["id"] != nil { answered += 1 }
                }
            }
            if answered >= responses { break }
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

    @discardableResult
    func wait() -> SpawnedProcess.Termination {
        let ended = process.wait()
        termination = ended
        return ended
    }

    func standardError() -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(process.standardError, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

private func request(_ id: Int, _ method: String, _ params: JSON? = nil) -> JSON {
    var members: [(String, JSON)] = [("jsonrpc", "2.0"), ("id", JSON(id)), ("method", JSON(method))]
    if let params { members.append(("params", params)) }
    return .object(members)
}

/// The ids of the requests a transcript's `send` steps hold, in order.
private func sentIDs(_ document: JSON) -> [Int] {
    (document["steps"]?.arrayValue ?? []).compactMap { $0["send"]?["id"]?.integerValue }
}

/// xorshift64*: the same kill points on every run.
private struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 2_685_821_657_736_338_717
    }
}

@Suite struct RecordingProcessTests {
    /// Issue 27, defect 14: under `prlimit --fsize=65536` the daemon was killed by SIGXFSZ after
    /// 491 pings. Now the recording stops where the limit is, with a warning, and the daemon
    /// answers everything and exits 0; the file is the transcript of the session so far.
    @Test func aFileSizeLimitEndsTheRecordingAndNotTheDaemon() throws {
        let candidates: [String] = ["/usr/bin/prlimit", "/bin/prlimit"]
        let prlimit = try #require(candidates.first { access($0, X_OK) == 0 }, "prlimit (util-linux) sets the child's RLIMIT_FSIZE")
        let directory = try #require(TemporaryDirectory(prefix: "datasourced-recording-limit"))
        defer { directory.remove() }
        let path = directory.path + "/session.json"
        let daemon = try RecordingDaemon(
            [prlimit, "--fsize=65536", "--", RecordingDaemon.executable, "serve", "--record", path])
        let pings = 800
        daemon.sendInBackground(
            [request(0, "initialize")] + (1...pings).map { request($0, "ping") }
                + [request(pings + 1, "shutdown"), ["jsonrpc": "2.0", "method": "exit"]])
        let answers = daemon.receive(responses: pings + 2)
        let ended = daemon.wait()
        #expect(answers.count == pings + 2, "the daemon answered \(answers.count) of \(pings + 2) requests")
        #expect(answers.last?["id"]?.integerValue == pings + 1)
        if case .signalled(let signal) = ended { Issue.record("the daemon died of signal \(signal)") }
        #expect(ended == .exited(0), "the daemon \(ended)")
        let warnings = daemon.standardError()
        let saysWhy = warnings.contains("File too large") && warnings.contains("recording stops here")
        #expect(saysWhy, "stderr: \(warnings)")

        let bytes = try readFileBytes(path)
        #expect(bytes.count <= 65536)
        let document = try JSON.parse(bytes)
        let ids = sentIDs(document)
        #expect(ids.count > 100 && ids.count < pings, "\(ids.count) requests recorded")
        #expect(ids == Array(0..<ids.count))
        let outcome = Replayer(daemonCommand: [RecordingDaemon.executable, "serve"]).replay(file: path)
        if case .failed(let report) = outcome { Issue.record("the recording does not replay:\n\(report)") }
        #expect(try RecordingFileTests.names(in: directory.path).filter { $0.contains(".partial-") }.isEmpty)
    }

    /// Issue 27, defect 15: killed (`kill -9`) at 40 points of a session with HTTP exchanges in
    /// flight, the recording replays as it is, or once `transcript repair` has made it whole,
    /// and holds a prefix of the requests sent.
    @Test func killedAnywhereTheRecordingReplaysOrIsRepaired() throws {
        let server = try FixtureServer(fixtures: [
            ["path": "/items", "body": ["items": [["id": 1, "title": "Dune"], ["id": 2, "title": "Solaris"]]]],
            ["path": "/slow", "delayMilliseconds": 150, "body": ["items": [["id": 3]]]],
        ])
        defer { server.stop() }
        let directory = try #require(TemporaryDirectory(prefix: "datasourced-recording-kills"))
        defer { directory.remove() }
        let replayer = Replayer(daemonCommand: [RecordingDaemon.executable, "serve"])
        var generator = SeededGenerator(state: 27)
        for round in 0..<40 {
            let path = directory.path + "/session-\(round).json"
            let daemon = try RecordingDaemon([RecordingDaemon.executable, "serve", "--record", path])
            var messages = [
                request(0, "initialize"),
                request(
                    1, "createSource",
                    [
                        "name": "r", "kind": "remote", "keyPath": "items", "apiPath": "/items",
                        "remoteConfiguration": ["baseURL": JSON(server.baseURL)],
                    ]),
                request(
                    2, "createSource",
                    [
                        "name": "slow", "kind": "remote", "keyPath": "items", "apiPath": "/slow",
                        "remoteConfiguration": ["baseURL": JSON(server.baseURL)],
                    ]),
            ]
            for id in 3..<83 {
                switch id % 4 {
                case 0: messages.append(request(id, "fetchData", ["source": "r", "wait": true]))
                case 1: messages.append(request(id, "fetchData", ["source": "slow"]))
                default: messages.append(request(id, "ping"))
                }
            }
            daemon.sendInBackground(messages)
            let killAfter = Int.random(in: 1...80, using: &generator)
            _ = daemon.receive(responses: killAfter)
            daemon.process.kill()
            daemon.wait()

            var outcome = replayer.replay(file: path)
            if case .failed = outcome {
                let result = try TranscriptRepair.repair(try readFileBytes(path))
                try writeFileBytes(path, Array(Trimming.text(result.document).utf8))
                outcome = replayer.replay(file: path)
            }
            if case .failed(let report) = outcome {
                Issue.record("round \(round), killed after \(killAfter) answers: the recording does not replay, even repaired:\n\(report)")
            }
            let ids = sentIDs(try JSON.parse(readFileBytes(path)))
            #expect(ids == Array(0..<ids.count), "round \(round): the requests recorded are not a prefix of those sent")
            // An answer leaves before its event is on file: only the last one answered may be missing.
            #expect(ids.count >= killAfter - 1, "round \(round): \(ids.count) requests on file after \(killAfter) answers")
        }
    }
}
