#if canImport(Glibc)
import Glibc
#endif
import FuzzSupport
@testable import Daemon
import DataSources
import JSONKit
@testable import JSONRPC
import Logging

// libFuzzer target: structure-aware sessions against an in-process daemon. The input is
// a sequence of choices (Choices) that builds framed requests from the method table
// (RequestBuilder), completes the fake server's fetches with canned bodies
// (CannedFetcher), cancels, batches, and sends garbage. The daemon's own event handler
// runs every event on this thread, in an order the input alone decides.
//
// Checks, after every session: nothing trapped; everything on stdout is a well-framed
// JSON-RPC message; every request was answered exactly once (at most once after `exit`);
// every -32602 carries data {field, expected, got}; the daemon still answers a ping.

@_cdecl("LLVMFuzzerTestOneInput")
public func sessionFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var session = Session(Choices(Array(UnsafeBufferPointer(start: data, count: size))))
    session.run()
    return 0
}

/// One daemon, fresh for each input, writing to a file the checks read back.
struct Session {
    static let output = OutputFile()

    var choices: Choices
    let fetcher = CannedFetcher()
    let daemon: Daemon
    /// What arrives the way stdin's reader would hand it over.
    var framer = FrameDecoder(maximumMessageSize: 1 << 20)
    /// Kept from one message to the next, as the reader keeps it.
    var packing = PackingScratch()
    var nextID = 1
    /// How many answers each id must get.
    var expected: [JSON: Int] = [:]
    /// Ids in messages that also held a number beyond 64 bits: whether they are answered
    /// under their id depends on how much of such a message the daemon can read.
    var uncounted: Set<JSON> = []
    var sentIDs: [JSON] = []
    var exited = false
    let methods: [String]

    init(_ choices: Choices) {
        self.choices = choices
        Session.output.reset()
        var input: [Int32] = [0, 0]
        precondition(pipe(&input) == 0)
        close(input[1])
        daemon = Daemon(
            options: DaemonOptions(maximumMessageSize: 1 << 20), logger: Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() }),
            fetcher: fetcher, input: input[0], output: Session.output.descriptor)
        // The reader meets end of input at once and ends; the writer writes to the file.
        daemon.transport.start { _ in }
        close(input[0])
        methods = Daemon.methodTable().names
    }

    mutating func run() {
        if !choices.chance(8) { send(request("initialize")) }
        var steps = 0
        while !choices.isExhausted, !exited, steps < 64 {
            steps += 1
            step()
            handleQueuedEvents()
        }
        settle()
        if !exited {
            // Alive: a ping after everything is answered (an error after shutdown is an answer).
            send(.object([("jsonrpc", "2.0"), ("id", JSON(nextID)), ("method", "ping")]))
            nextID += 1
            settle()
        }
        for timer in daemon.delayTimers.values { timer.cancel() }
        daemon.sender.flush(waitingAtMost: 10_000)
        daemon.sender.stopWriting()
        daemon.sender.flush(waitingAtMost: 10_000)
        daemon.transport.join()
        check()
    }

    private mutating func step() {
        switch choices.below(16) {
        case 0...8:
            send(request(choices.pick(methods)))
        case 9:
            let count = 1 + choices.below(4)
            let batch = (0..<count).map { _ in request(choices.pick(methods)) }
            let bytes = RequestBuilder.text(of: .array(batch), oversized: choices.below(3))
            batch.forEach { track($0, oversized: containsOversized(bytes)) }
            sendBytes(Framing.frame(bytes))
        case 10, 11:
            fetcher.complete(choices.below(256)) { [raw = choices.bytes(upTo: 200), choice = choices.below(256)] request in
                CannedFetcher.response(choice, raw: raw, for: request)
            }
        case 12:
            let id = sentIDs.isEmpty ? JSON(0) : sentIDs[sentIDs.count - 1 - choices.below(min(sentIDs.count, 8))]
            send(["jsonrpc": "2.0", "method": "$/cancelRequest", "params": ["id": id]])
        case 13:
            // Garbage: a body that is not JSON-RPC, or not JSON, in a frame or not.
            var bytes = choices.bytes(upTo: 120)
            // Valid JSON could be a request under an id that is counted: keep it garbage.
            if (try? JSON.parse(bytes)) != nil { bytes.insert(UInt8(ascii: "#"), at: 0) }
            sendBytes(choices.chance(128) ? Framing.frame(bytes) : bytes + Array("\r\n".utf8))
        case 14:
            send(["jsonrpc": "2.0", "method": JSON(choices.pick(["initialized", "exit", "$/unknown", "ping"]))])
        default:
            // A request with an id of another kind, or one already in use.
            var message = request(choices.pick(methods))
            let id: JSON = choices.chance(128) ? JSON("s\(nextID)") : (sentIDs.last ?? 1.5)
            message = message.setting("id", to: id)
            send(message)
        }
    }

    private mutating func request(_ method: String) -> JSON {
        var builder = RequestBuilder(choices: choices)
        let params = builder.params(for: method)
        choices = builder.choices
        defer { nextID += 1 }
        var members: [(String, JSON)] = [("jsonrpc", "2.0"), ("id", JSON(nextID)), ("method", JSON(method))]
        if !params.isObject || !params.objectKeys.isEmpty || choices.chance(128) { members.append(("params", params)) }
        return .object(members)
    }

    /// Sends one message; now and then padded with spaces past `Payload.largestPackedMessage`,
    /// so that its params reach the daemon as jansson's tree rather than packed.
    private mutating func send(_ message: JSON) {
        var bytes = RequestBuilder.text(of: message, oversized: choices.below(3))
        track(message, oversized: containsOversized(bytes))
        if choices.chance(16) { bytes += [UInt8](repeating: 32, count: Payload.largestPackedMessage) }
        sendBytes(Framing.frame(bytes))
    }

    /// A request's id is expected back once.
    private mutating func track(_ message: JSON, oversized: Bool) {
        guard !exited, let id = message["id"], message["method"] != nil else { return }
        if oversized {
            uncounted.insert(id)
        } else {
            expected[id, default: 0] += 1
            sentIDs.append(id)
        }
    }

    private func containsOversized(_ bytes: [UInt8]) -> Bool {
        RequestBuilder.oversizedTexts.contains { text in
            let needle = Array(text.utf8)
            return bytes.count >= needle.count
                && (0...(bytes.count - needle.count)).contains { bytes[$0..<$0 + needle.count].elementsEqual(needle) }
        }
    }

    /// Feeds bytes to the daemon as its stdin reader would, in pieces the input chooses.
    private mutating func sendBytes(_ bytes: [UInt8]) {
        guard !exited else { return }
        var offset = 0
        while offset < bytes.count {
            let length = choices.chance(32) ? 1 + choices.below(bytes.count - offset) : bytes.count - offset
            framer.append(Array(bytes[offset..<offset + length]))
            offset += length
            while let event = framer.next() {
                handle(.transport(StdioTransport.transportEvent(for: event, scratch: &packing)))
                if exited { return }
            }
        }
    }

    private mutating func handle(_ event: DaemonEvent) {
        guard !exited else { return }
        if daemon.handleEvent(event) != nil { exited = true }
    }

    private mutating func handleQueuedEvents() {
        for event in daemon.mailbox.takeAll(waitingAtMost: 0) { handle(event) }
    }

    /// Completes every fetch (pages may ask for more, a bounded number of times) and waits
    /// for delayed pings, so that every request has had its chance to be answered.
    private mutating func settle() {
        var rounds = 0
        while !exited, fetcher.pendingCount > 0 || !daemon.delayTimers.isEmpty {
            rounds += 1
            if rounds > 200 {
                fatalError("the session does not settle: \(fetcher.pendingCount) fetches, \(daemon.delayTimers.count) timers")
            }
            if fetcher.pendingCount > 0 {
                let choice = rounds > 20 ? 6 : choices.below(256)
                fetcher.complete(0) { CannedFetcher.response(choice, raw: [], for: $0) }
                handleQueuedEvents()
            } else {
                for event in daemon.mailbox.takeAll(waitingAtMost: 100) { handle(event) }
            }
        }
        handleQueuedEvents()
    }

    // MARK: Checks

    private func check() {
        var reader = FrameDecoder(maximumMessageSize: Int.max)
        reader.append(Session.output.contents())
        var answers: [JSON: Int] = [:]
        while let event = reader.next() {
            guard case .body(let body) = event else { fail("stdout is not well framed: \(event)") }
            guard let message = try? JSON.parse(body) else {
                fail("stdout carries a frame that is not JSON: \(String(decoding: body.prefix(200), as: UTF8.self))")
            }
            if let responses = message.arrayValue {
                require(!responses.isEmpty, "an empty batch answer")
                for response in responses { checkResponse(response, &answers) }
            } else if message["method"] != nil {
                checkNotification(message)
            } else {
                checkResponse(message, &answers)
            }
        }
        require(!reader.isMidFrame, "stdout ends in the middle of a frame")
        for (id, count) in answers where id != .null && expected[id] == nil && !uncounted.contains(id) {
            fail("\(count) answers to id \(id), which no request carried")
        }
        for (id, count) in expected where !uncounted.contains(id) {
            let got = answers[id] ?? 0
            if exited ? got > count : got != count { fail("id \(id): \(count) requests, \(got) answers\(exited ? " (after exit)" : "")") }
        }
    }

    private func checkResponse(_ response: JSON, _ answers: inout [JSON: Int]) {
        require(response["jsonrpc"] == "2.0", "a response without jsonrpc 2.0: \(response)")
        guard let id = response["id"] else { fail("a response without id: \(response)") }
        answers[id, default: 0] += 1
        let result = response["result"], error = response["error"]
        require((result == nil) != (error == nil), "a response needs exactly one of result and error: \(response)")
        guard let error else { return }
        require(error["code"]?.kind == .integer && error["message"]?.kind == .string, "a malformed error: \(response)")
        if error["code"] == JSON(ErrorCode.invalidParams) {
            let data = error["data"]
            require(
                data?["field"]?.kind == .string && data?["expected"]?.kind == .string && data?["got"] != nil,
                "a -32602 without data {field, expected, got}: \(response)")
        }
    }

    private func checkNotification(_ message: JSON) {
        require(message["id"] == nil, "a notification with an id: \(message)")
        let method = message["method"]?.stringValue ?? ""
        require(NotificationName(rawValue: method) != nil, "an unknown notification: \(method)")
        require(message["params"]?["source"]?.kind == .string, "a notification without its source: \(message)")
    }

    private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fail(message()) }
    }

    private func fail(_ message: String) -> Never {
        fatalError("session invariant: \(message)")
    }
}

/// An unlinked temporary file the daemon's writer appends to.
final class OutputFile: @unchecked Sendable {
    let descriptor: Int32

    init() {
        var template = Array("/tmp/datasourced-fuzz-XXXXXX".utf8CString)
        descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        precondition(descriptor >= 0, "mkstemp failed")
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        _ = fcntl(descriptor, F_SETFL, O_APPEND)
    }

    func reset() {
        _ = ftruncate(descriptor, 0)
    }

    func contents() -> [UInt8] {
        let size = Int(lseek(descriptor, 0, SEEK_END))
        var bytes = [UInt8](repeating: 0, count: size)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, size, 0) }
        precondition(count == size, "short read of the daemon's output")
        return bytes
    }
}

// The entry point (FUZZING.md, "Entry point"): in this file, beside the test function.
@_cdecl("fuzz_session_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runLibFuzzer(argc, argv, sessionFuzzerTestOneInput)
}
