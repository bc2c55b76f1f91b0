#if canImport(Glibc)
import Glibc
#endif
import DataSources
import Dispatch
import JSONKit
import JSONRPC
import Logging

/// Everything the main loop reacts to, in the order it arrived.
public enum DaemonEvent: Sendable {
    case transport(TransportEvent)
    /// A `ping` with a delay is due.
    case delayElapsed(RequestToken, milliseconds: Int)
    /// An HTTP load for a remote source ended.
    case loaded(id: Int, Result<DecodedResponse, FetchError>)
}

public struct DaemonOptions: Sendable {
    public var maximumMessageSize: Int
    public init(maximumMessageSize: Int = 64 << 20) {
        self.maximumMessageSize = maximumMessageSize
    }
}

/// The daemon: one loop that takes events from one mailbox and handles each to the end
/// before the next, so all state is touched by one thread and the order of events on the
/// wire is the order they were handled in.
///
/// The path of a message: transport (frame + parse, reader thread) → `handle(_:)` →
/// lifecycle gate → method table → handler → `finish` → transport (encode + write,
/// writer thread).
public final class Daemon {
    /// Throws `ResponseError` for a specific answer; anything else becomes -32603.
    typealias Handler = (Daemon, Request, RequestToken) throws -> Reply

    enum Reply {
        case result(JSON)
        /// The handler keeps the token and answers later through `finish`.
        case deferred
    }

    enum Lifecycle {
        case uninitialized, running, shutDown
    }

    let options: DaemonOptions
    let logger: Logger
    let transport: StdioTransport
    let mailbox = Mailbox<DaemonEvent>()
    var lifecycle = Lifecycle.uninitialized
    var pending = PendingRequests()
    let methods: [String: Handler]
    let registry: SourceRegistry
    let loader: HTTPLoader
    /// `fetchData {wait: true}` requests, answered by their source's final event.
    var fetchWaiters: [ObjectIdentifier: [RequestToken]] = [:]

    public convenience init(options: DaemonOptions, logger: Logger, input: Int32 = 0, output: Int32 = 1) {
        self.init(options: options, logger: logger, input: input, output: output, additionalMethods: [:])
    }

    /// `additionalMethods` lets tests add handlers (for failures no client can provoke).
    init(options: DaemonOptions, logger: Logger, input: Int32, output: Int32, additionalMethods: [String: Handler]) {
        self.options = options
        self.logger = logger
        self.transport = StdioTransport(input: input, output: output, maximumMessageSize: options.maximumMessageSize)
        self.methods = Daemon.methodTable().merging(additionalMethods) { _, added in added }
        let loader = HTTPLoader(mailbox: mailbox)
        self.loader = loader
        self.registry = SourceRegistry { kind, name, identity, params throws(DataSourceError) in
            kind == "remote"
                ? try RemoteDataSource(name: name, identity: identity, params: params, loader: loader)
                : try PaginatedDataSource(name: name, identity: identity, params: params, loader: loader)
        }
    }

    static func methodTable() -> [String: Handler] {
        var table: [String: Handler] = [:]
        registerLifecycleMethods(into: &table)
        registerSourceMethods(into: &table)
        return table
    }

    /// Serves until `exit`, end of input or a dead stdout; returns the exit status.
    public func run() -> Int32 {
        let mailbox = self.mailbox
        transport.start { events in mailbox.post(contentsOf: events.map(DaemonEvent.transport)) }
        logger.info("serving JSON-RPC on stdio", metadata: ["maxMessageSize": "\(options.maximumMessageSize)"])
        while true {
            if let status = handle(mailbox.takeAll()) {
                transport.flush(waitingAtMost: 500)
                return status
            }
            // The events handled, and the parsed trees of their messages, are freed by now.
            if freedLargeMessage {
                freedLargeMessage = false
                releaseFreedMemory()
            }
        }
    }

    private func handle(_ events: [DaemonEvent]) -> Int32? {
        for event in events {
            if let status = handle(event) { return status }
        }
        return nil
    }

    /// A message at least this large leaves its parsed tree to free: memory worth handing
    /// back once the message is gone (`freedLargeMessage`).
    static let largeMessageSize = 4 << 20
    private var freedLargeMessage = false

    /// Hands the pages freed by a large message's tree back to the kernel. malloc keeps
    /// freed memory for reuse, and a 60 MB createSource would otherwise keep the daemon
    /// at its peak size for good; the rows it created are a fraction of that.
    private func releaseFreedMemory() {
        // glibc's malloc_trim is not in the Glibc module; found at run time, it is skipped
        // on a C library without it.
        typealias Trim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
    }

    /// Handles one event; a non-nil result ends the process with that status.
    func handle(_ event: DaemonEvent) -> Int32? {
        if case .transport(.payload(_, let bodySize)) = event, bodySize >= Daemon.largeMessageSize {
            freedLargeMessage = true
        }
        switch event {
        case .transport(.payload(.single(let message), _)):
            return handle(message, batch: nil, slot: 0)
        case .transport(.payload(.batch(let messages), _)):
            return handle(batch: messages)
        case .transport(.payload(.unusable(let error), _)), .transport(.framingError(let error)):
            logger.warning("\(error.message)")
            transport.send(.response(id: .null, result: .failure(error)))
        case .transport(.endOfInput(let midFrame)):
            if midFrame {
                transport.send(.response(id: .null, result: .failure(ResponseError(
                    code: ErrorCode.parseError, message: "Parse error: input ended in the middle of a message"))))
            }
            logger.info("end of input; exiting")
            return terminate()
        case .transport(.outputFailed(let code)):
            logger.error("stdout is closed (errno \(code)); exiting")
            return terminate()
        case .delayElapsed(let token, let milliseconds):
            finish(token, .success(["delayMilliseconds": JSON(milliseconds)]))
        case .loaded(let id, let result):
            loader.complete(id: id, result)
        }
        return nil
    }

    private func handle(batch messages: [Message]) -> Int32? {
        let answered = messages.filter {
            switch $0 {
            case .request, .invalid: return true
            case .notification, .response: return false
            }
        }.count
        let batch = answered > 0 ? pending.beginBatch(expecting: answered) : nil
        var slot = 0
        for message in messages {
            if let status = handle(message, batch: batch, slot: slot) { return status }
            if case .request = message { slot += 1 } else if case .invalid = message { slot += 1 }
        }
        return nil
    }

    private func handle(_ message: Message, batch: Int?, slot: Int) -> Int32? {
        switch message {
        case .request(let request):
            handle(request, batch: batch, slot: slot)
        case .notification(let notification):
            return handle(notification)
        case .invalid(let id, let error):
            logger.warning("\(error.message)")
            let response = Outgoing.response(id: id, result: .failure(error))
            if let batch {
                if let complete = pending.fill(batch: batch, slot: slot, with: response) { transport.send(complete) }
            } else {
                transport.send(response)
            }
        case .response(let id):
            logger.debug("ignoring a response from the client", metadata: ["id": "\(id)"])
        }
        return nil
    }

    private func handle(_ request: Request, batch: Int?, slot: Int) {
        let token = pending.begin(id: request.id, batch: batch, slot: slot)
        logger.trace("request", metadata: ["method": "\(request.method)", "id": "\(request.id)"])
        do {
            switch try dispatch(request, token) {
            case .result(let result): finish(token, .success(result))
            case .deferred: break
            }
        } catch let error as ResponseError {
            finish(token, .failure(error))
        } catch {
            logger.error("\(request.method) failed: \(error)")
            finish(token, .failure(.internalError("\(request.method) failed: \(error)")))
        }
    }

    private func dispatch(_ request: Request, _ token: RequestToken) throws -> Reply {
        switch lifecycle {
        case .uninitialized where request.method != "initialize":
            throw ResponseError(code: ErrorCode.serverNotInitialized,
                                message: "Server not initialized: send \"initialize\" first",
                                data: ["method": JSON(request.method)])
        case .shutDown:
            throw ResponseError.invalidRequest("the server is shut down; only the \"exit\" notification is accepted",
                                  data: ["method": JSON(request.method)])
        default:
            break
        }
        guard let handler = methods[request.method] else { throw ResponseError.methodNotFound(request.method) }
        return try handler(self, request, token)
    }

    private func handle(_ notification: Notification) -> Int32? {
        switch notification.method {
        case "exit":
            logger.info("exit", metadata: ["afterShutdown": "\(lifecycle == .shutDown)"])
            terminateWork()
            return lifecycle == .shutDown ? 0 : 1
        case "$/cancelRequest":
            guard let id = notification.params?["id"], [.string, .integer, .real].contains(id.kind) else {
                logger.warning("$/cancelRequest without a string or number \"id\"; ignored")
                return nil
            }
            if let token = pending.oldest(withID: id) {
                finish(token, .failure(ResponseError(code: ErrorCode.requestCancelled,
                                                     message: "Request cancelled", data: ["id": id])))
            } else {
                logger.debug("$/cancelRequest for an unknown or answered id; ignored", metadata: ["id": "\(id)"])
            }
        case "initialized":
            logger.debug("client initialized")
        default:
            // Unknown notifications, `$/` or not, are ignored, as in LSP.
            logger.debug("ignoring notification", metadata: ["method": "\(notification.method)"])
        }
        return nil
    }

    /// Answers a request; does nothing when it was already answered (cancelled).
    func finish(_ token: RequestToken, _ result: Result<JSON, ResponseError>) {
        if let response = pending.finish(token, result) { transport.send(response) }
    }

    func send(_ notification: Notification) {
        transport.send(.notification(notification))
    }

    /// Stops the network work in flight before exiting; requests still waiting are left
    /// unanswered (nobody is listening).
    private func terminateWork() {
        loader.shutdown()
    }

    private func terminate() -> Int32 {
        terminateWork()
        return lifecycle == .shutDown ? 0 : 1
    }
}
