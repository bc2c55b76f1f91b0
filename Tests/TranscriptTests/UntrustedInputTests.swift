#if canImport(Glibc)
import Glibc
#endif
import Basics
import Foundation
import JSONKit
import JSONRPC
@testable import Replay
import Testing

/// `datasourced` run as a careless or hostile user would (issue 27, defects 8 to 13): files
/// from strangers, descriptors left closed, out-of-range options.
private final class Run: @unchecked Sendable {
    let process: SpawnedProcess
    private var exitStatus: Int32?
    /// Closed once only: tests run in parallel, and a descriptor closed twice may by then be another's.
    private var inputIsOpen = true

    init(_ arguments: [String], environment: [String]? = nil, closing: [Int32] = []) throws {
        process = try SpawnedProcess(command: [TranscriptTests.daemon] + arguments, environment: environment, closing: closing)
    }

    deinit {
        if exitStatus == nil {
            process.kill()
            process.wait()
        }
        closeInput()
        close(process.standardOutput)
        close(process.standardError)
    }

    func write(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.write(process.standardInput, $0.baseAddress, $0.count) }
    }

    func closeInput() {
        if inputIsOpen { close(process.standardInput) }
        inputIsOpen = false
    }

    /// What the process writes on `descriptor` (its stdout or stderr end) up to `count` bytes
    /// or until it closes it; nil if neither happens within `milliseconds`.
    func read(_ descriptor: Int32, upTo count: Int = Int.max, withinMilliseconds milliseconds: Int) -> [UInt8]? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let deadline = MonotonicClock.milliseconds() + milliseconds
        while bytes.count < count {
            let remaining = deadline - MonotonicClock.milliseconds()
            guard remaining > 0 else { return nil }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(min(remaining, 1000))) > 0 else { continue }
            let read = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if read < 0, errno == EINTR { continue }
            if read <= 0 { break }
            bytes += chunk[..<read]
        }
        return bytes
    }

    /// Everything on stdout and stderr until the process exits, and its status; nil if it
    /// does not close them within `milliseconds` (it is then killed).
    func finish(withinMilliseconds milliseconds: Int) -> (status: Int32, output: String, errors: String)? {
        let deadline = MonotonicClock.milliseconds() + milliseconds
        // stderr is small here: read after stdout without a thread of its own.
        guard let output = read(process.standardOutput, withinMilliseconds: milliseconds),
            let errors = read(process.standardError, withinMilliseconds: max(1, deadline - MonotonicClock.milliseconds()))
        else { return nil }
        let exited = process.wait().shellStatus
        exitStatus = exited
        return (exited, String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self))
    }

    /// What descriptor `descriptor` of the process is (`/dev/null`, `pipe:[…]`, `anon_inode:[eventpoll]`).
    func descriptorTarget(_ descriptor: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/\(process.pid)/fd/\(descriptor)", &buffer, buffer.count - 1)
        return count < 0 ? "(closed)" : String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

private func frame(_ text: String) -> [UInt8] { Framing.frame(Array(text.utf8)) }

/// A directory for one test's files, removed after it.
private func withTemporaryDirectory(_ body: (String) throws -> Void) throws {
    let directory = try #require(TemporaryDirectory(prefix: "datasourced-untrusted"))
    defer { directory.remove() }
    try body(directory.path)
}

private func write(_ text: String, to path: String) throws { try writeFileBytes(path, Array(text.utf8)) }

@Suite struct UntrustedInputTests {
    static let deadline = 30_000

    /// Defect 11: with stdin closed at start, fd 0 became an epoll descriptor; `fixtures`
    /// read it in a loop for ever (one ran 23 minutes). A closed stdin now reads as end of input.
    @Test func fixturesWithStdinClosedAtStartEnds() throws {
        try withTemporaryDirectory { directory in
            try write(#"{"fixtures": [{"path": "/a", "body": 1}]}"#, to: "\(directory)/f.json")
            let run = try Run(["fixtures", "\(directory)/f.json"], closing: [0])
            guard let result = run.finish(withinMilliseconds: UntrustedInputTests.deadline) else {
                Issue.record("datasourced fixtures with stdin closed did not end within \(UntrustedInputTests.deadline) ms")
                return
            }
            #expect(result.status == 0, "stderr: \(result.errors)")
            #expect(result.output.contains("\"baseURL\""))
        }
    }

    /// Defect 11, the daemon: with stdout closed at start, answers went to whatever took fd 1
    /// (an event loop's descriptor: the daemon gave up, "stdout is closed"; a file opened
    /// first would have been written into). It is /dev/null now.
    @Test func theDaemonWithStdoutClosedAtStartWritesToDevNull() throws {
        let run = try Run(["serve", "--log-level", "debug"], closing: [1])
        run.write(frame(#"{"jsonrpc": "2.0", "id": 1, "method": "initialize"}"#))
        // Logged once it serves, after every descriptor of its own is open.
        let started = run.read(run.process.standardError, upTo: 1, withinMilliseconds: UntrustedInputTests.deadline)
        #expect(started?.isEmpty == false)
        #expect(run.descriptorTarget(1) == "/dev/null")
        run.write(frame(#"{"jsonrpc": "2.0", "id": 2, "method": "shutdown"}"#) + frame(#"{"jsonrpc": "2.0", "method": "exit"}"#))
        run.closeInput()
        let result = try #require(run.finish(withinMilliseconds: UntrustedInputTests.deadline))
        #expect(result.status == 0, "stderr: \(result.errors)")
        #expect(!result.errors.contains("stdout is closed"), "stderr: \(result.errors)")
    }

    /// Defect 11, stderr: logs would go into whatever took fd 2.
    @Test func theDaemonWithStderrClosedAtStartLogsToDevNull() throws {
        let run = try Run(["serve", "--log-level", "trace"], closing: [2])
        run.write(frame(#"{"jsonrpc": "2.0", "id": 1, "method": "initialize"}"#))
        let answer = run.read(run.process.standardOutput, upTo: 1, withinMilliseconds: UntrustedInputTests.deadline)
        #expect(answer?.isEmpty == false)
        #expect(run.descriptorTarget(2) == "/dev/null")
        run.closeInput()
        #expect(run.finish(withinMilliseconds: UntrustedInputTests.deadline) != nil)
    }

    /// Defect 11, replay: the pipes to its daemons are made with stdin closed too.
    @Test func replayWithStdinClosedAtStartStillReplays() throws {
        let example = TranscriptTests.repository.appendingPathComponent("Examples/quickstart.json").path
        let run = try Run(["replay", example], closing: [0])
        let result = try #require(run.finish(withinMilliseconds: 120_000))
        #expect(result.status == 0, "\(result.output)\n\(result.errors)")
        #expect(result.output.contains("1 passed, 0 failed"))
    }

    /// Defect 12: `fixtures --port 70000` served on port 4464 (70000 modulo 65536).
    @Test func fixturesRefusesAPortOutOfRange() throws {
        try withTemporaryDirectory { directory in
            try write(#"{"fixtures": []}"#, to: "\(directory)/f.json")
            for port in ["70000", "65536", "-1"] {
                let run = try Run(["fixtures", "\(directory)/f.json", "--port=\(port)"])
                guard let result = run.finish(withinMilliseconds: UntrustedInputTests.deadline) else {
                    Issue.record("fixtures --port \(port) is serving instead of refusing the port")
                    continue
                }
                #expect(result.status != 0)
                #expect(result.output.isEmpty, "it served: \(result.output)")
                #expect(result.errors.contains("--port must be an integer in 0...65535, got \(port)"), "stderr: \(result.errors)")
            }
        }
    }

    /// Defect 9, `fixtures`: a route with status -1 crashed the server when requested. It is
    /// refused when the file is read, naming the field.
    @Test func fixturesRefusesARouteOutOfRangeBeforeServing() throws {
        try withTemporaryDirectory { directory in
            try write(#"{"fixtures": [{"path": "/a", "body": 1}, {"path": "/b", "status": -1}]}"#, to: "\(directory)/f.json")
            let run = try Run(["fixtures", "\(directory)/f.json"])
            guard let result = run.finish(withinMilliseconds: UntrustedInputTests.deadline) else {
                Issue.record("fixtures is serving a route with status -1")
                return
            }
            #expect(result.status != 0)
            #expect(result.output.isEmpty, "it served: \(result.output)")
            #expect(result.errors.contains(#""fixtures[1].status" must be an integer in 100...599, got -1"#), "stderr: \(result.errors)")
        }
    }

    /// Defect 13: `replay --capture missing-dir/x.jsonl` replayed, wrote nothing and exited 0.
    @Test func replayFailsAtOnceWhenTheCaptureCannotBeWritten() throws {
        try withTemporaryDirectory { directory in
            let example = TranscriptTests.repository.appendingPathComponent("Examples/quickstart.json").path
            let run = try Run(["replay", "--capture", "\(directory)/missing-dir/x.jsonl", example])
            let result = try #require(run.finish(withinMilliseconds: 120_000))
            #expect(result.status != 0)
            #expect(!result.output.contains("PASS"), "it replayed first: \(result.output)")
            #expect(
                result.errors.contains("--capture: cannot write \(directory)/missing-dir/x.jsonl: No such file or directory"),
                "stderr: \(result.errors)")
        }
    }

    /// Defect 10: a transcript's `["--record", FILE]` overwrote FILE, and `["--cache-path", FILE]`
    /// moved it aside, with the replaying user's rights. Refused now unless they say so.
    @Test func replayRefusesDaemonArgumentsThatNameFiles() throws {
        try withTemporaryDirectory { directory in
            let victim = "\(directory)/notes.txt"
            try write("precious\n", to: victim)
            let steps =
                #""steps": [{"send": {"jsonrpc": "2.0", "id": 1, "method": "initialize"}}, {"expect": {"jsonrpc": "2.0", "id": 1, "result": "$object"}}]"#
            for arguments in [
                #"["--record", "\#(victim)"]"#, #"["--cache-path", "\#(victim)"]"#, #"["--no-cache", "--record=\#(victim)"]"#,
            ] {
                try write(#"{"daemonArguments": \#(arguments), \#(steps)}"#, to: "\(directory)/t.json")
                let run = try Run(["replay", "\(directory)/t.json"])
                let result = try #require(run.finish(withinMilliseconds: 60_000))
                #expect(result.status == 1)
                #expect(result.output.contains("names a file, which the daemon would write with your rights"), "\(result.output)")
                #expect(result.output.contains("--allow-daemon-arguments"))
                #expect(
                    String(decoding: try readFileBytes(victim), as: UTF8.self) == "precious\n",
                    "daemonArguments \(arguments) changed the file")
                #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["notes.txt", "t.json"])
            }
            // Said so: the arguments run (here, a recording in the test's own directory).
            let recording = "\(directory)/recorded.json"
            try write(#"{"daemonArguments": ["--record", "\#(recording)"], \#(steps)}"#, to: "\(directory)/t.json")
            let run = try Run(["replay", "--allow-daemon-arguments", "\(directory)/t.json"])
            let result = try #require(run.finish(withinMilliseconds: 60_000))
            #expect(result.status == 0, "\(result.output)")
            #expect(FileManager.default.fileExists(atPath: recording))
        }
    }

    /// Defect 10, the environment: a replayed daemon inherited $DATASOURCED_RECORD (set for an
    /// editor's daemons) and recorded the replay into that file.
    @Test func aReplayRecordsNothingUnlessItsArgumentsSaySo() throws {
        try withTemporaryDirectory { directory in
            let recording = "\(directory)/editor-session.json"
            let transcript = TranscriptTests.repository.appendingPathComponent("Tests/Transcripts/lifecycle.json").path
            let environment = ChildProcess.inheritedEnvironment(without: "DATASOURCED_RECORD") + ["DATASOURCED_RECORD=\(recording)"]
            let run = try Run(["replay", transcript], environment: environment)
            let result = try #require(run.finish(withinMilliseconds: 60_000))
            #expect(result.status == 0, "\(result.output)")
            #expect(!FileManager.default.fileExists(atPath: recording), "the replayed daemon recorded the replay")
        }
    }

    /// Defects 8 and 9: each input that crashed `datasourced replay` (a trap, an allocation
    /// failure, a precondition in NIOHTTP1) is refused, naming the field; replay reports it
    /// and exits 1. The transcripts are Tests/TranscriptsThatFail/refused-*.json.
    @Test func replayReportsEveryCrashInputAsAFailure() throws {
        let folder = TranscriptTests.repository.appendingPathComponent(FailingTranscriptTests.folder)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("refused-") }.sorted()
        #expect(names.count >= 7)
        let paths = names.map { folder.appendingPathComponent($0).path }
        let run = try Run(["replay"] + paths)
        let result = try #require(run.finish(withinMilliseconds: 120_000))
        #expect(result.status == 1, "\(result.output)\n\(result.errors)")
        #expect(result.output.hasSuffix("0 passed, \(names.count) failed\n"), "\(result.output)")
        for path in paths {
            let reason = try #require(try JSON.parse(readFileBytes(path))["expectedFailure"]?.stringValue)
            #expect(result.output.contains("FAIL \(path)\n  "), "\(path) did not fail")
            #expect(result.output.contains(reason), "\(path) failed for another reason than \(reason)")
        }
    }
}
