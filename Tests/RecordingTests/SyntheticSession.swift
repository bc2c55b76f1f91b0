#if canImport(Glibc)
import Glibc
#endif
import Daemon
import DataSources
import JSONKit
import JSONRPC
@testable import Recording
import Replay
import Basics

/// A recorder driven the way the daemon's main loop drives it, without a daemon: each call is
/// one event (what the client sent, what the daemon answered, the HTTP requests it made).
final class SyntheticSession {
    let directory: TemporaryDirectory
    let path: String
    let recorder: SessionRecorder
    let warnings = Warnings()
    private var nextID = 0

    final class Warnings: Sendable {
        private let lines = LockedValue<[String]>([])
        func add(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    struct SetupError: Error { let description: String }

    init(name: String = "session.json") throws {
        guard let directory = TemporaryDirectory(prefix: "datasourced-recording-tests") else {
            throw SetupError(description: "no temporary directory")
        }
        self.directory = directory
        path = directory.path + "/" + name
        let warnings = self.warnings
        recorder = try SessionRecorder(path: path, daemonArguments: ["--no-cache"], redacting: [], warn: { warnings.add($0) })
    }

    deinit { directory.remove() }

    /// One client request and the daemon's answer; `during` runs while the event is handled
    /// (where the daemon would start HTTP requests).
    @discardableResult
    func request(_ method: String, _ params: JSON? = nil, result: JSON = ["ok": true], during: () -> Void = {}) -> Int {
        nextID += 1
        var members: [(String, JSON)] = [("jsonrpc", "2.0"), ("id", JSON(nextID)), ("method", JSON(method))]
        if let params { members.append(("params", params)) }
        let event = DaemonEvent.transport(.payload(.single(Message(.object(members))), bodySize: 0))
        recorder.daemonWillHandle(event)
        during()
        recorder.daemonWillSend(.response(id: JSON(nextID), result: .success(result)))
        recorder.daemonDidHandle(event)
        return nextID
    }

    /// A GET the daemon starts (call inside `request`'s `during`).
    func startExchange(_ path: String) -> Int {
        recorder.exchangeStarted(
            RemoteRequest(
                url: "http://api.example.test:8080\(path)", headers: [],
                timeoutSeconds: 30, maximumBodySize: 1 << 20))
    }

    /// A POST with a JSON body the daemon starts (call inside `request`'s `during`).
    func startExchange(_ path: String, posting body: JSON, headers: [(name: String, value: String)] = []) -> Int {
        var request = RemoteRequest(
            url: "http://api.example.test:8080\(path)", headers: headers, timeoutSeconds: 30, maximumBodySize: 1 << 20)
        request.method = .post
        request.body = body.encoded()
        return recorder.exchangeStarted(request)
    }

    /// The GET's response arrives (on a fetcher thread), then its completion is handled.
    func complete(_ exchange: Int, body: JSON) {
        let response = RemoteResponse(
            url: "http://api.example.test:8080/", status: 200,
            headers: [("Content-Type", "application/json")], body: body.encoded())
        recorder.exchangeCompleted(exchange, .success(response)) {}
    }

    /// The main loop handles the oldest completion noted: a `release` step.
    func handleCompletion(notifying text: String) {
        let event = DaemonEvent.loaded(id: 0, .success(DecodedResponse(objects: [], document: nil)))
        recorder.daemonWillHandle(event)
        recorder.daemonWillSend(.notification(Notification(method: "test/loaded", params: ["text": JSON(text)])))
        recorder.daemonDidHandle(event)
    }

    func bytes() throws -> [UInt8] { try readFileBytes(path) }

    func document() throws -> JSON { try JSON.parse(bytes()) }
}
