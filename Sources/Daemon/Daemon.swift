#if canImport(Glibc)
import Glibc
#endif
import Basics
import DataSources
import Dispatch
import JSONKit
import JSONRPC
import WireSchema
import Logging

/// Everything the main loop reacts to, in the order it arrived.
package enum DaemonEvent: Sendable {
    case transport(TransportEvent)
    /// A `ping` with a delay is due.
    case delayElapsed(RequestToken, milliseconds: Int)
    /// An HTTP load for a remote source ended.
    case loaded(id: Int, Result<DecodedResponse, FetchError>)
    /// A live list's refresh timer fired.
    case refreshDue(source: String, generation: Int)
    /// An `updateSource`'s debounce elapsed with no update after it.
    case updateDue(source: String, generation: Int)
    /// Work a source deferred until the events before it were handled (`HTTPLoader.later`).
    case deferred(id: Int)
}

package struct DaemonOptions: Sendable {
    package var maximumMessageSize: Int
    /// Where `allowCredential` writes, and what it wrote (CredentialAllowances.swift); nil:
    /// `allowCredential` is refused.
    package var credentialAllowances: CredentialAllowances?
    /// Whether a value read from the environment or a file goes only to origins allowed in
    /// `credentialAllowances`; false (`--allow-credentials-from-config`): to the source's own
    /// origin, as its configuration says.
    package var requiresCredentialAllowance: Bool

    package init(
        maximumMessageSize: Int = 64 << 20, credentialAllowances: CredentialAllowances? = nil, requiresCredentialAllowance: Bool = false
    ) {
        self.maximumMessageSize = maximumMessageSize
        self.credentialAllowances = credentialAllowances
        self.requiresCredentialAllowance = requiresCredentialAllowance
    }

    /// What remote and paginated sources check their credentials against.
    var credentialPolicy: (any CredentialPolicy)? {
        requiresCredentialAllowance ? credentialAllowances ?? CredentialAllowances(path: nil) : nil
    }
}

/// The daemon: events from one mailbox, each handled to the end before the next by the one
/// thread that holds the mailbox's role (the main loop, or the stdin reader), so all state
/// is touched by one thread at a time and the order of events on the wire is the order
/// they were handled in. Not `Sendable`: once `run` starts, the daemon is reached only
/// through its `RoleMailbox`, whose role one thread holds at a time.
///
/// The path of a message: transport (frame + parse, reader thread) → `handleEvent` (on the
/// reader thread when the main loop is idle, else on the main loop) →
/// `handleRequest` → lifecycle gate → method table (`Wire/MethodTable.swift`: decode params →
/// the method's handler in `Methods/<Name>.swift` → encode result) → `finish` → transport
/// (encode + write on this thread when the pipe takes it at once, else the writer thread's).
package final class Daemon {
    enum Lifecycle {
        case uninitialized, running, shutDown
    }

    let options: DaemonOptions
    let logger: Logger
    let transport: StdioTransport
    /// What the daemon sends goes out through this, on the thread that holds the role.
    let sender: TransportSender
    let mailbox: Mailbox<DaemonEvent>
    var lifecycle = Lifecycle.uninitialized
    var pending = PendingRequests()
    let methods: MethodTable
    let registry: SourceRegistry
    let loader: HTTPLoader
    /// The persisted page cache; nil with `--no-cache`.
    let cache: PageCacheStore?
    lazy var refreshTimers = SourceTimers(mailbox: mailbox, due: { .refreshDue(source: $0, generation: $1) })
    /// `updateSource` with `debounceMilliseconds`: the new query's load, when no update follows.
    lazy var debounceTimers = SourceTimers(mailbox: mailbox, due: { .updateDue(source: $0, generation: $1) })
    /// Each remote or paginated source's `createSource` params as `updateSource` last left
    /// them: an update is decoded as those params with its members in place.
    var sourceParams: [String: JSON] = [:]
    /// `fetchData {wait: true}` requests, answered by their source's final event.
    var fetchWaiters: [ObjectIdentifier: [FetchWaiter]] = [:]
    /// Delayed `ping`s; a cancelled one is stopped.
    var delayTimers: [RequestToken: DispatchSourceTimer] = [:]
    /// The most bytes of row values a `didChange` carries (the client's `changeValues`); nil: none.
    var changeValuesLimit: Int?
    /// Whether `dataSource/didChangeLoadState` is sent (the client's `loadStates` capability):
    /// a client that did not ask sees the seed's events only, as before protocol 1.5.
    var sendsLoadStates = false
    /// Whether the client asked for runs of rows as `[section, item, count]` in change sets.
    var sendsChangeRanges = false
    /// Sees every event handled and every message written (`--record`); set before `run()`.
    package var observer: DaemonObserver?

    /// `fetcher` performs the GETs of remote and paginated sources; `cache` keeps the pages
    /// of those that opt in across restarts.
    package convenience init(
        options: DaemonOptions, logger: Logger, fetcher: HTTPFetching, cache: PageCacheStore? = nil,
        input: Int32 = 0, output: Int32 = 1
    ) {
        self.init(
            options: options, logger: logger, fetcher: fetcher, cache: cache, input: input, output: output, additionalMethods: { _ in })
    }

    /// `additionalMethods` lets tests add handlers (for failures no client can provoke).
    init(
        options: DaemonOptions, logger: Logger, fetcher: HTTPFetching, cache: PageCacheStore? = nil, input: Int32, output: Int32,
        additionalMethods: (inout MethodTable) -> Void, roleSteps: (@Sendable (Mailbox<DaemonEvent>.RoleStep) -> Void)? = nil
    ) {
        JSON.seedHashing()
        let mailbox = Mailbox<DaemonEvent>(roleSteps: roleSteps)
        self.mailbox = mailbox
        self.cache = cache
        self.options = options
        self.logger = logger
        let transport = StdioTransport(input: input, output: output, maximumMessageSize: options.maximumMessageSize)
        self.transport = transport
        self.sender = TransportSender(transport)
        var methods = Daemon.methodTable()
        additionalMethods(&methods)
        self.methods = methods
        let loader = HTTPLoader(fetcher: fetcher, mailbox: mailbox)
        self.loader = loader
        let credentialPolicy = options.credentialPolicy
        self.registry = SourceRegistry { name, identity, kind in
            let source: RemoteCollection
            switch kind {
            case .paginated(let configuration, let paginator):
                source = PaginatedDataSource(
                    name: name, identity: identity, configuration: configuration, paginator: paginator,
                    loader: loader)
            case .remote(let configuration):
                source = RemoteDataSource(name: name, identity: identity, configuration: configuration, loader: loader)
            case .simple, .sectioned, .multi, .filtered:
                preconditionFailure("the registry builds local kinds itself")
            }
            source.credentialPolicy = credentialPolicy
            return source
        }
    }

    static func methodTable() -> MethodTable {
        var table = MethodTable()
        for method in ProtocolMethods.all { table.register(method) }
        return table
    }

    /// Serves until `exit`, end of input or a dead stdout; returns the exit status once the
    /// transport's threads have ended.
    ///
    /// Events are handled one batch at a time by whichever thread holds the mailbox's role:
    /// this one, or the stdin reader when it finds the role free. A request then is read,
    /// handled and answered on the thread that read it, as a C server would, with no
    /// wake-up of another thread (issue 33); timers and network completions are still
    /// posted and handled here. Taking the role and the queued events in one step keeps the
    /// order of events, whoever handles them.
    ///
    /// From here on the daemon is reached only through `roles`, by the thread that holds the
    /// role: the reader's closure holds `roles`, never the daemon, and `roles` lets go of the
    /// daemon when the run ends, so a daemon that has served is freed when its caller lets go.
    package func run() -> Int32 {
        logger.info("serving JSON-RPC on stdio", metadata: ["maxMessageSize": "\(options.maximumMessageSize)"])
        let roles = RoleMailbox(mailbox, owner: self)
        let mailbox = self.mailbox, transport = self.transport
        transport.start { events in
            let events = events.map(DaemonEvent.transport)
            // A burst of pipelined requests goes to this thread instead: the reader then
            // reads and parses the next burst while this one is handled, on the other core.
            guard events.count <= Daemon.eventsHandledByTheReader else {
                mailbox.post(contentsOf: events)
                return
            }
            // An event that ends the daemon wakes the main loop to return its status.
            roles.claimOrPost(contentsOf: events) { daemon, claimed in
                daemon.stoppedStatus == nil && daemon.handleClaimed(claimed) != nil
            }
        }
        var status: Int32 = 0
        while true {
            let ended = roles.claimAll { daemon, events in
                guard let stopped = daemon.stoppedStatus ?? daemon.handleClaimed(events) else { return false }
                // The role stays with this thread: no event is handled after this one.
                status = stopped
                daemon.sender.flush(waitingAtMost: 500)
                // Nothing is sent from now on; the writer thread ends once it has written
                // what was sent.
                daemon.sender.stopWriting()
                return true
            }
            if ended { break }
        }
        // The reader stops waiting for input, the writer for a client that stopped reading.
        transport.join()
        return status
    }

    /// The most events one read of stdin brings that the reader handles itself (when the
    /// role is free): one request at a time is answered without a hop; a burst is handed over.
    static let eventsHandledByTheReader = 4

    /// Set, with the mailbox's role held, once an event ended the daemon: no event is
    /// handled after it.
    private var stoppedStatus: Int32?

    /// Handles `events` with the mailbox's role held; what they send goes out in one write
    /// once they are handled. The status when one of them ended the daemon.
    private func handleClaimed(_ events: [DaemonEvent]) -> Int32? {
        // Deferred work (a reopened list's turns) goes after the other events claimed with it,
        // and their answers are written first: a request waits for no turn but one under way.
        var deferred: [DaemonEvent] = []
        let others = events.filter {
            guard case .deferred = $0 else { return true }
            deferred.append($0)
            return false
        }
        for batch in [others, deferred] where !batch.isEmpty {
            if let status = sender.holdingWrites({ handleEvents(batch) }) {
                stoppedStatus = status
                return status
            }
        }
        // The events handled, and the parsed trees of their messages, are freed by now.
        if freedLargeMessage {
            freedLargeMessage = false
            releaseFreedMemory()
        }
        return nil
    }

    private func handleEvents(_ events: [DaemonEvent]) -> Int32? {
        for event in events {
            if let status = handleEvent(event) { return status }
        }
        return nil
    }

    /// A message at least this large leaves its parsed tree to free: memory worth handing
    /// back once the message is gone (`freedLargeMessage`).
    static let largeMessageSize = 4 << 20
    /// Set when the events being handled free much memory (a large message's tree, a large
    /// source destroyed): it is handed back to the system once they are handled.
    var freedLargeMessage = false
    /// A source destroyed with at least this many rows frees memory worth handing back.
    static let largeSourceRows = 10_000

    /// Hands the pages freed by a large message's tree back to the kernel. malloc keeps
    /// freed memory for reuse, and a 60 MB createSource would otherwise keep the daemon
    /// at its peak size for good; the rows it created are a fraction of that.
    private func releaseFreedMemory() {
        MemoryRelease.trimMalloc()
    }

    /// Handles one event; a non-nil result ends the process with that status.
    func handleEvent(_ event: DaemonEvent) -> Int32? {
        observer?.daemonWillHandle(event)
        defer { observer?.daemonDidHandle(event) }
        if case .transport(.payload(_, let bodySize)) = event, bodySize >= Daemon.largeMessageSize {
            freedLargeMessage = true
        }
        switch event {
        case .transport(.payload(.single(let message), _)):
            return handleMessage(message, batch: nil, slot: 0)
        case .transport(.payload(.batch(let messages), _)):
            return handleBatch(messages)
        case .transport(.payload(.ignored(let reason), _)):
            logger.warning("ignored: \(reason)")
        case .transport(.payload(.unusable(let error), _)), .transport(.framingError(let error)):
            logger.warning("\(error.message)")
            emit(.response(id: .null, result: .failure(error)))
        case .transport(.endOfInput(let midFrame)):
            if midFrame {
                emit(
                    .response(
                        id: .null,
                        result: .failure(
                            ResponseError(
                                code: ErrorCode.parseError, message: "Parse error: input ended in the middle of a message"))))
            }
            logger.info("end of input; exiting")
            return terminate()
        case .transport(.outputFailed(let code)):
            logger.error("stdout is closed (errno \(code)); exiting")
            return terminate()
        case .delayElapsed(let token, let milliseconds):
            // A one-shot timer that fired is still a live source: cancelled, it is freed.
            delayTimers.removeValue(forKey: token)?.cancel()
            answer(PendingAnswer<PingResult>(token: token), with: PingResult(delayMilliseconds: milliseconds))
        case .loaded(let id, let result):
            loader.complete(id: id, result)
        case .refreshDue(let source, let generation):
            refreshDue(source, generation: generation)
        case .updateDue(let source, let generation):
            UpdateSourceRequest.debounceElapsed(self, source: source, generation: generation)
        case .deferred(let id):
            loader.runDeferred(id: id)
        }
        return nil
    }

    private func handleBatch(_ messages: [Message]) -> Int32? {
        let answered = messages.filter {
            switch $0 {
            case .request, .invalid: return true
            case .notification, .response: return false
            }
        }.count
        let batch = answered > 0 ? pending.beginBatch(expecting: answered) : nil
        var slot = 0
        for message in messages {
            if let status = handleMessage(message, batch: batch, slot: slot) { return status }
            if case .request = message { slot += 1 } else if case .invalid = message { slot += 1 }
        }
        return nil
    }

    private func handleMessage(_ message: Message, batch: Int?, slot: Int) -> Int32? {
        switch message {
        case .request(let request):
            handleRequest(request, batch: batch, slot: slot)
        case .notification(let notification):
            return handleNotification(notification)
        case .invalid(let id, let error):
            logger.warning("\(error.message)")
            let response = Outgoing.response(id: id, result: .failure(error))
            if let batch {
                if let complete = pending.fill(batch: batch, slot: slot, with: response) { emit(complete) }
            } else {
                emit(response)
            }
        case .response(let id):
            logger.debug("ignoring a response from the client", metadata: ["id": "\(id)"])
        }
        return nil
    }

    private func handleRequest(_ request: Request, batch: Int?, slot: Int) {
        let token = pending.begin(id: request.id, batch: batch, slot: slot)
        logger.trace("request", metadata: ["method": "\(request.method)", "id": "\(request.id)"])
        do {
            switch try dispatch(request, token) {
            case .answer(let result): finish(token, .success(result))
            case .deferred: break
            }
        } catch {
            if error.code == ErrorCode.internalError { logger.error("\(error.message)") }
            finish(token, .failure(error))
        }
    }

    private func dispatch(_ request: Request, _ token: RequestToken) throws(ResponseError) -> MethodTable.Outcome {
        switch lifecycle {
        case .uninitialized where request.method != "initialize":
            throw ResponseError(
                code: ErrorCode.serverNotInitialized,
                message: "Server not initialized: send \"initialize\" first",
                data: ["method": JSON(request.method)])
        case .shutDown:
            throw ResponseError.invalidRequest(
                "the server is shut down; only the \"exit\" notification is accepted",
                data: ["method": JSON(request.method)])
        default:
            break
        }
        guard let handler = methods[request.method] else {
            throw ResponseError.methodNotFound(String(request.method.prefix(FieldError.echoLimit)))
        }
        return try handler(self, request, token).get()
    }

    private func handleNotification(_ notification: Notification) -> Int32? {
        switch notification.method {
        case "exit":
            logger.info("exit", metadata: ["afterShutdown": "\(lifecycle == .shutDown)"])
            terminateWork()
            return lifecycle == .shutDown ? 0 : 1
        case "$/cancelRequest":
            let id: JSON
            do {
                id = try CancelRequestParams(notification.params).id
            } catch {
                // A notification is never answered, not even to refuse it.
                logger.warning("$/cancelRequest ignored: \(error.message)")
                return nil
            }
            if let token = pending.oldest(withID: id) {
                stopWork(of: token)
                finish(
                    token,
                    .failure(
                        ResponseError(
                            code: ErrorCode.requestCancelled,
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

    /// Stops what a cancelled request still had running: a delayed `ping`'s timer, a
    /// `fetchData` wait (the load itself goes on: `cancelFetch` stops loads).
    private func stopWork(of token: RequestToken) {
        delayTimers.removeValue(forKey: token)?.cancel()
        for (source, waiters) in fetchWaiters {
            let kept = waiters.filter { $0.answer.token != token }
            if kept.count != waiters.count { fetchWaiters[source] = kept.isEmpty ? nil : kept }
        }
    }

    /// Answers a request that a handler deferred, with the result type its method declares.
    func answer<R>(_ pending: PendingAnswer<R>, with result: R) {
        finish(pending.token, .success(result.json))
    }

    /// Answers a request; does nothing when it was already answered (cancelled).
    func finish(_ token: RequestToken, _ result: Result<JSON, ResponseError>) {
        if let response = pending.finish(token, result) { emit(response) }
    }

    func send(_ notification: Notification) {
        emit(.notification(notification))
    }

    /// Every message the daemon writes goes out here.
    private func emit(_ outgoing: Outgoing) {
        observer?.daemonWillSend(outgoing)
        sender.send(outgoing)
    }

    /// Stops the network work in flight before exiting; requests still waiting are left
    /// unanswered (nobody is listening).
    private func terminateWork() {
        for timer in delayTimers.values { timer.cancel() }
        delayTimers.removeAll()
        refreshTimers.disarmAll()
        debounceTimers.disarmAll()
        loader.shutdown()
        cache?.close()
    }

    private func terminate() -> Int32 {
        terminateWork()
        return lifecycle == .shutDown ? 0 : 1
    }
}
