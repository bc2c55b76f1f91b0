#if canImport(Glibc)
import Glibc
#endif
import Basics
import JSONKit
import JSONRPC
import TranscriptFormat

/// Writes a line to this process's stdout. (The replayer is a client: its stdout is
/// its own report, not a protocol stream.)
package func writeLine(_ text: String) {
    _ = try? FileDescriptor.standardOutput.writeAll((text + "\n").utf8)
}

/// Runs a transcript against a freshly spawned daemon.
package struct Replayer {
    package enum Outcome {
        case passed(steps: Int)
        case failed(String)
    }

    package let daemonCommand: [String]
    /// Runs any `daemonArguments`, not only the harmless ones (`replay --allow-daemon-arguments`).
    package let allowsDaemonArguments: Bool

    package init(daemonCommand: [String], allowingDaemonArguments: Bool = false) {
        self.daemonCommand = daemonCommand
        self.allowsDaemonArguments = allowingDaemonArguments
    }

    /// The path of the running executable, so `datasourced replay` can spawn itself.
    package static func currentExecutable() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        return count > 0 ? String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
    }

    /// Sees every message of a replay, in order: `sent` by the transcript (parsed bodies
    /// included) or `received` from the daemon. The schema tests validate these.
    package typealias Capture = (_ direction: String, _ message: JSON) -> Void

    package func replay(file path: String, log: ((String) -> Void)? = nil, capture: Capture? = nil) -> Outcome {
        let transcript: Transcript
        do {
            transcript = try Transcript(parsing: JSON.parse(try readFileBytes(path, atMost: TranscriptLimits.maximumFileBytes)))
        } catch {
            return .failed("  cannot read transcript: \(error)")
        }
        return replay(transcript, log: log, capture: capture)
    }

    package func replay(_ transcript: Transcript, log: ((String) -> Void)? = nil, capture: Capture? = nil) -> Outcome {
        var requests: [FixtureServer.ReceivedRequest] = []
        return replay(transcript, log: log, capture: capture, requests: &requests)
    }

    /// Replays, and says which requests the fixture server received, in order (what
    /// `transcript trim` needs to know which routes were used).
    package func replayCollectingRequests(
        _ transcript: Transcript, log: ((String) -> Void)? = nil
    ) -> (outcome: Outcome, requests: [FixtureServer.ReceivedRequest]) {
        var requests: [FixtureServer.ReceivedRequest] = []
        let outcome = replay(transcript, log: log, capture: nil, requests: &requests)
        return (outcome, requests)
    }

    private func replay(
        _ transcript: Transcript, log: ((String) -> Void)?, capture: Capture?, requests: inout [FixtureServer.ReceivedRequest]
    ) -> Outcome {
        if !allowsDaemonArguments, let refusal = DaemonArguments.refusal(transcript.daemonArguments) {
            return .failed("  \(refusal)")
        }
        var server: FixtureServer?
        do {
            server = try transcript.fixtures.map { try FixtureServer(routes: $0) }
        } catch {
            return .failed("  fixtures: \(error)")
        }
        defer { server?.stop() }
        // Each transcript gets a cache file of its own, gone with it, unless it names one.
        let cacheDirectory =
            DaemonArguments.chooseCache(transcript.daemonArguments) ? nil : TemporaryDirectory(prefix: "datasourced-replay-cache")
        defer { cacheDirectory?.remove() }
        let command =
            daemonCommand + transcript.daemonArguments + (cacheDirectory.map { ["--cache-path", $0.path + "/cache.sqlite"] } ?? [])
        // A replay records nothing unless its arguments say so: $DATASOURCED_RECORD, set for
        // an editor's daemons, would otherwise make every replayed daemon write a recording.
        let environment = ChildProcess.inheritedEnvironment(without: "DATASOURCED_RECORD")
        var child: ChildProcess
        do {
            child = try ChildProcess(command: command, environment: environment)
        } catch {
            return .failed("  \(error)")
        }
        var session = Session(child: child, fixtures: server, timeout: transcript.timeoutMilliseconds, log: log, capture: capture)
        defer { requests = session.requestsSeen + (server?.takeReceivedRequests() ?? []) }
        for (index, step) in transcript.steps.enumerated() {
            if case .restart = step {
                guard session.hasExited else {
                    child.kill()
                    return .failed(
                        report(
                            index: index, step: step, problem: "restart needs the daemon to have exited (an expectExit step first)",
                            child: child))
                }
                do {
                    child = try ChildProcess(command: command, environment: environment)
                } catch {
                    return .failed("  \(error)")
                }
                log?("(restarted the daemon)")
                session = session.restarted(with: child)
                continue
            }
            if let problem = session.run(server.map { step.substituting(baseURL: $0.baseURL) } ?? step) {
                child.kill()
                return .failed(report(index: index, step: step, problem: problem, child: child))
            }
        }
        // Whatever the daemon still says, unasked, is a mismatch: transcripts are complete.
        if let problem = session.finish() {
            child.kill()
            return .failed(report(index: transcript.steps.count, step: nil, problem: problem, child: child))
        }
        return .passed(steps: transcript.steps.count)
    }

    private func report(index: Int, step: Transcript.Step?, problem: String, child: ChildProcess) -> String {
        var lines = ["  step \(index)\(step.map { " (\($0.label))" } ?? " (end of transcript)"): \(problem)"]
        let stderr = child.standardError()
        if !stderr.isEmpty {
            lines.append("  daemon stderr:")
            lines.append(contentsOf: stderr.split(separator: "\n").suffix(20).map { "    \($0)" })
        }
        return lines.joined(separator: "\n")
    }
}

/// The state of one replay: what was received and not yet matched.
private struct Session {
    let child: ChildProcess
    let fixtures: FixtureServer?
    let timeout: Int
    let log: ((String) -> Void)?
    let capture: Replayer.Capture?
    var received: [ChildProcess.Event] = []
    var exitStatus: Int32?
    /// Requests taken from the fixture server by `expectRequests` steps.
    var requestsSeen: [FixtureServer.ReceivedRequest] = []

    init(child: ChildProcess, fixtures: FixtureServer?, timeout: Int, log: ((String) -> Void)?, capture: Replayer.Capture?) {
        self.child = child
        self.fixtures = fixtures
        self.timeout = timeout
        self.log = log
        self.capture = capture
    }

    var hasExited: Bool { exitStatus != nil }

    /// The same replay, talking to a new daemon.
    func restarted(with child: ChildProcess) -> Session {
        var session = Session(child: child, fixtures: fixtures, timeout: timeout, log: log, capture: capture)
        session.requestsSeen = requestsSeen
        return session
    }

    mutating func run(_ step: Transcript.Step) -> String? {
        switch step {
        case .restart:
            return "restart is handled by the replayer"

        case .send(let message):
            log?("→ \(message)")
            capture?("sent", message)
            return send(Framing.frame(message.encoded()))
        case .sendBody(let body):
            log?("→ (body) \(body)")
            if let message = try? JSON.parse(body) { capture?("sent", message) }
            return send(Framing.frame(Array(body.utf8)))
        case .sendRaw(let bytes, let times):
            log?(
                "→ (raw, \(bytes.count * times) bytes) \(String(decoding: bytes.prefix(120), as: UTF8.self).debugDescription)\(times > 1 ? " × \(times)" : "")"
            )
            return send(bytes, times: times)
        case .expect(let pattern):
            guard let message = nextMessage() else { return "expected a message matching\n\(indent(pattern))\n  but \(silence())" }
            if let problem = Matcher.mismatch(expected: pattern, actual: message) {
                return "\(problem)\n  expected:\n\(indent(pattern))\n  received:\n\(indent(message))"
            }
            return nil
        case .expectUnordered(let patterns):
            var messages: [JSON] = []
            for _ in patterns {
                guard let message = nextMessage() else {
                    return "expected \(patterns.count) messages in any order, received \(messages.count), then \(silence())"
                }
                messages.append(message)
            }
            var unmatched = messages
            for pattern in patterns {
                guard let match = unmatched.firstIndex(where: { Matcher.mismatch(expected: pattern, actual: $0) == nil }) else {
                    return "no received message matches\n\(indent(pattern))\n  received, in order:\n"
                        + messages.map { indent($0) }.joined(separator: "\n")
                }
                unmatched.remove(at: match)
            }
            return nil
        case .comment(let text):
            log?("# \(text)")
            return nil
        case .expectRequests(let expected):
            guard let fixtures else { return "expectRequests needs \"fixtures\" in the transcript" }
            let requests = fixtures.takeReceivedRequests()
            requestsSeen += requests
            let received = requests.map(\.target)
            return received == expected ? nil : "expected the fixture server to have received \(expected), got \(received)"
        case .expectRequestHeaders(let expected):
            guard let fixtures else { return "expectRequestHeaders needs \"fixtures\" in the transcript" }
            let received = fixtures.takeReceivedRequests()
            requestsSeen += received
            guard received.map(\.target) == expected.map(\.target) else {
                return "expected the fixture server to have received \(expected.map(\.target)), got \(received.map(\.target))"
            }
            for (index, (request, wanted)) in zip(received, expected).enumerated() {
                // Clients add headers of their own (Host, User-Agent...): only the listed ones count.
                let pattern = JSON.object(
                    [("$partial", JSON(true))] + (wanted.headers.objectMembers ?? []).map { ($0.key.lowercased(), $0.value) })
                if let problem = Matcher.mismatch(expected: pattern, actual: request.headersObject, path: "request[\(index)].headers") {
                    return "\(problem)\n  request \(request.target) had headers:\n\(indent(request.headersObject))"
                }
            }
            return nil
        case .release(let name):
            guard let fixtures else { return "release needs \"fixtures\" in the transcript" }
            log?("→ (release \(name))")
            fixtures.release(name)
            return nil
        case .requested(let name):
            guard let fixtures else { return "requested needs \"fixtures\" in the transcript" }
            return fixtures.waitUntilRequested(name, milliseconds: timeout)
                ? nil
                : "the daemon did not request the fixture route held as \(name) within \(timeout) ms"
        case .closeInput:
            log?("→ (close stdin)")
            child.closeInput()
            return nil
        case .expectExit(let expected):
            if let unexpected = nextMessageIfAny() {
                return "expected the daemon to exit, but it sent\n\(indent(unexpected))"
            }
            guard let status = waitForExit() else {
                return "expected exit status \(expected), but the daemon did not exit within \(timeout) ms"
            }
            return status == expected ? nil : "expected exit status \(expected), got \(status)"
        }
    }

    /// After the last step: close stdin, and nothing more may arrive before exit.
    mutating func finish() -> String? {
        child.closeInput()
        if let unexpected = nextMessageIfAny() {
            return "unexpected message after the last step\n\(indent(unexpected))"
        }
        return waitForExit() == nil ? "the daemon did not exit within \(timeout) ms of end of input" : nil
    }

    private mutating func send(_ bytes: [UInt8], times: Int = 1) -> String? {
        child.write(bytes, times: times) ? nil : "the daemon's stdin is closed (it exited\(exitStatus.map { " with status \($0)" } ?? ""))"
    }

    /// The next message, waiting up to the timeout; nil on timeout or exit.
    private mutating func nextMessage() -> JSON? {
        var waited = 0
        while true {
            if let index = received.firstIndex(where: { if case .exited = $0 { return false } else { return true } }) {
                let event = received.remove(at: index)
                switch event {
                case .message(let message):
                    log?("← \(message)")
                    capture?("received", message)
                    return message
                case .garbage(let text):
                    log?("← (not JSON) \(text)")
                    return JSON("(not JSON) \(text)")
                case .exited:
                    continue
                }
            }
            if exitStatus != nil || waited >= timeout { return nil }
            let batch = child.events.takeAll(waitingAtMost: min(100, timeout - waited))
            waited += batch.isEmpty ? min(100, timeout - waited) : 0
            for event in batch {
                if case .exited(let status) = event { exitStatus = status } else { received.append(event) }
            }
        }
    }

    /// The next message if one arrives before the daemon exits (or the timeout passes).
    private mutating func nextMessageIfAny() -> JSON? {
        nextMessage()
    }

    private mutating func waitForExit() -> Int32? {
        var waited = 0
        while exitStatus == nil, waited < timeout {
            for event in child.events.takeAll(waitingAtMost: 100) {
                if case .exited(let status) = event { exitStatus = status } else { received.append(event) }
            }
            waited += 100
        }
        return exitStatus
    }

    private func silence() -> String {
        exitStatus.map { "the daemon exited with status \($0)" } ?? "nothing arrived within \(timeout) ms"
    }

    private func indent(_ value: JSON) -> String {
        value.text(format: [.pretty]).split(separator: "\n").map { "    \($0)" }.joined(separator: "\n")
    }
}

/// The file's bytes; a file larger than `limit` is refused, read no further than that.
package func readFileBytes(_ path: String, atMost limit: Int = Int.max) throws -> [UInt8] {
    struct ReadError: Error, CustomStringConvertible { let description: String }
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { throw ReadError(description: "\(path): \(String(cString: strerror(errno)))") }
    defer { close(descriptor) }
    let bytes: [UInt8]?
    do {
        bytes = try FileDescriptor(rawValue: descriptor).readToEnd(atMost: limit)
    } catch {
        throw ReadError(description: "\(path): \(error)")
    }
    guard let bytes else { throw ReadError(description: "\(path): larger than \(limit) bytes") }
    return bytes
}

package func writeFileBytes(_ path: String, _ bytes: [UInt8]) throws {
    struct WriteError: Error, CustomStringConvertible { let description: String }
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard descriptor >= 0 else { throw WriteError(description: "\(path): \(String(cString: strerror(errno)))") }
    defer { close(descriptor) }
    do {
        _ = try FileDescriptor(rawValue: descriptor).writeAll(bytes)
    } catch {
        throw WriteError(description: "\(path): \(error)")
    }
}

extension Transcript.Step {
    /// The step with `${fixtures}` replaced by the fixture server's base URL in every string.
    func substituting(baseURL: String) -> Transcript.Step {
        func replace(_ value: JSON) -> JSON {
            if let text = value.stringValue {
                return text.contains("${fixtures}") ? JSON(text.replacingAll("${fixtures}", with: baseURL)) : value
            }
            if let elements = value.arrayValue { return .array(elements.map(replace)) }
            if let members = value.objectMembers { return .object(members.map { ($0.key, replace($0.value)) }) }
            return value
        }
        switch self {
        case .send(let message): return .send(replace(message))
        case .expect(let pattern): return .expect(replace(pattern))
        case .expectUnordered(let patterns): return .expectUnordered(patterns.map(replace))
        case .sendBody(let text): return .sendBody(text.replacingAll("${fixtures}", with: baseURL))
        default: return self
        }
    }
}

extension String {
    func replacingAll(_ target: String, with replacement: String) -> String {
        var result = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound] + replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
