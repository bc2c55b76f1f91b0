#if canImport(Glibc)
import Glibc
#endif
@testable import Daemon
import Basics
import DataSources
import JSONKit
import JSONRPC
import Logging

/// A daemon on pipes inside the test process, and a client that waits for each answer:
/// for tests that send hundreds of requests and must stay fast.
final class WireClient: @unchecked Sendable {
    private let toDaemon: Int32
    private let fromDaemon: Int32
    private var decoder = FrameDecoder(maximumMessageSize: 64 << 20)
    private let exitStatus = Mailbox<Int32>()
    private var nextID = 1
    /// Notifications that arrived while waiting for answers.
    private(set) var notifications: [JSON] = []

    /// `cache` and `logHandler`: the daemon's persisted cache and where its log goes (nowhere by default).
    init(
        fetcher: HTTPFetching, cache: (any PageCacheStore & Sendable)? = nil, options: DaemonOptions = DaemonOptions(),
        logHandler: LogHandler = SwiftLogNoOpLogHandler()
    ) {
        var input: [Int32] = [0, 0], output: [Int32] = [0, 0]
        precondition(pipe(&input) == 0 && pipe(&output) == 0)
        toDaemon = input[1]
        fromDaemon = output[0]
        let daemonInput = input[0], daemonOutput = output[1], status = exitStatus
        startThread {
            let daemon = Daemon(
                options: options, logger: Logger(label: "test", factory: { _ in logHandler }),
                fetcher: fetcher, cache: cache, input: daemonInput, output: daemonOutput)
            status.post(daemon.run())
        }
    }

    deinit {
        close(toDaemon)
        _ = exitStatus.takeAll(waitingAtMost: 5000)
        close(fromDaemon)
    }

    /// Sends a request and returns its response (notifications before it are kept aside).
    func request(_ method: String, _ params: JSON? = nil) -> JSON {
        let id = nextID
        nextID += 1
        var members: [(String, JSON)] = [("jsonrpc", "2.0"), ("id", JSON(id)), ("method", JSON(method))]
        if let params { members.append(("params", params)) }
        return raw(JSON.object(members).encoded())
    }

    /// Sends one frame holding `body` as is, and returns the next response.
    func raw(_ body: [UInt8]) -> JSON {
        let frame = Framing.frame(body)
        let written = frame.withUnsafeBytes { write(toDaemon, $0.baseAddress, $0.count) }
        precondition(written == frame.count, "short write to the daemon")
        while let message = receive() {
            if message["method"] != nil { notifications.append(message) } else { return message }
        }
        return ["error": "the daemon closed its output"]
    }

    private func receive() -> JSON? {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            if case .body(let body)? = decoder.next() { return try? JSON.parse(body) }
            let count = chunk.withUnsafeMutableBytes { read(fromDaemon, $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            decoder.append(Array(chunk[..<count]))
        }
    }
}

extension JSON {
    /// This value with the member at `path` (`limits.maxDepth`, `indexPath[1]`) replaced,
    /// or removed when `value` is nil.
    func replacing(_ path: String, with value: JSON?) -> JSON {
        var rest = Substring(path)
        let key = String(rest.prefix { $0 != "." && $0 != "[" })
        rest = rest.dropFirst(key.count)
        if key.isEmpty, rest.first == "[" {
            let close = rest.firstIndex(of: "]")!
            let index = Int(rest[rest.index(after: rest.startIndex)..<close])!
            rest = rest[rest.index(after: close)...]
            if rest.first == "." { rest = rest.dropFirst() }
            var elements = arrayValue!
            if rest.isEmpty {
                if let value { elements[index] = value } else { elements.remove(at: index) }
            } else {
                elements[index] = elements[index].replacing(String(rest), with: value)
            }
            return .array(elements)
        }
        if rest.first == "." { rest = rest.dropFirst() }
        if rest.isEmpty { return value.map { setting(key, to: $0) } ?? removing(key) }
        let child = self[key] ?? (rest.first == "[" ? [] : [:])
        return setting(key, to: child.replacing(String(rest), with: value))
    }
}
