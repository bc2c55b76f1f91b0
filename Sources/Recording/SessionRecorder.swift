import Daemon
import DataSources
import JSONKit
import JSONRPC
import Synchronization

/// Writes a session down as a transcript while the daemon serves it (`--record FILE`): every
/// message received (a `send` step) and sent (an `expect` step), and every HTTP exchange (a
/// fixture route, held by the fixture server until a `release` step says the response
/// arrived), so `datasourced replay FILE` runs the session again offline, in the same order.
///
/// The file is rewritten (a new file renamed over the old one) after every event the daemon
/// handles, so at any moment it is a complete transcript of the events handled so far.
public final class SessionRecorder: DaemonObserver, Sendable {
    private let file: TranscriptFile
    private let daemonArguments: [String]
    private let state: Mutex<RecordedSession>
    /// Held while an HTTP completion is noted and handed to the daemon's mailbox, so the
    /// order of noted completions is the order the main loop will handle them in.
    private let delivery = Mutex(())

    /// Starts a recording at `path` (written at once: an empty session). `redacting` adds
    /// header and query parameter names whose values are never written.
    public init(path: String, daemonArguments: [String], redacting names: [String], warn: @escaping @Sendable (String) -> Void) throws {
        file = TranscriptFile(path: path, warn: warn)
        self.daemonArguments = daemonArguments
        state = Mutex(RecordedSession(rendering: Rendering(secrets: Secrets(extraNames: names))))
        try file.writeOrThrow(render())
    }

    /// The fetcher the daemon should use: `fetcher`, with its exchanges recorded.
    public func recording(_ fetcher: HTTPFetching) -> HTTPFetching {
        RecordingFetcher(wrapping: fetcher, recorder: self)
    }

    // MARK: The daemon's main loop

    public func daemonWillHandle(_ event: DaemonEvent) {
        state.withLock { $0.willHandle(event) }
    }

    public func daemonWillSend(_ outgoing: Outgoing) {
        state.withLock { $0.willSend(outgoing) }
    }

    public func daemonDidHandle(_ event: DaemonEvent) {
        file.write(render())
    }

    /// The daemon ended with `status`: the transcript expects that exit.
    public func finish(exitStatus: Int32) {
        state.withLock { $0.ended(status: exitStatus) }
        file.write(render())
    }

    // MARK: HTTP, from the fetcher's threads

    func exchangeStarted(_ request: RemoteRequest) -> Int {
        state.withLock { $0.startExchange(request) }
    }

    /// Notes the outcome, then hands it on with `deliver` (which posts it to the mailbox).
    func exchangeCompleted(_ number: Int, _ result: Result<RemoteResponse, FetchError>, deliver: () -> Void) {
        delivery.withLock { _ in
            state.withLock { $0.completeExchange(number, result) }
            deliver()
        }
    }

    func exchangeCancelled(_ number: Int) {
        state.withLock { $0.cancelExchange(number) }
    }

    private func render() -> String {
        state.withLock { $0.transcriptText(daemonArguments: daemonArguments) }
    }
}

/// One GET the daemon made, and what became of it.
struct Exchange {
    enum Outcome {
        case inFlight
        case response(RemoteResponse)
        case failure(FetchError)
    }

    let request: RemoteRequest
    var outcome = Outcome.inFlight
    /// The daemon cancelled it (cancelFetch, a newer fetch, shutdown): replay never answers it.
    var cancelledByDaemon = false
}

/// What the recording holds so far; every change happens under the recorder's lock.
struct RecordedSession {
    enum Entry {
        case send(JSON)
        case expect(JSON, method: String?)
        /// The daemon made this request here.
        case requested(exchange: Int)
        /// The response to this exchange arrived here.
        case release(exchange: Int)
        case sendRaw(String)
        case closeInput
        case expectExit(Int32)
        case comment(String)
    }

    var rendering: Rendering
    var entries: [Entry] = []
    var exchanges: [Exchange] = []
    /// Completed exchanges in the order their completions entered the daemon's mailbox.
    var completions: [Int] = []
    /// The methods of requests not answered yet, by id: an `initialize` answer is matched loosely.
    var methodsByID: [JSON: [String]] = [:]
    /// The event being handled came in a form no `send` step can reproduce (bytes that are
    /// not a message): what the daemon answers is kept as comments.
    var replayable = true
    var clientGone = false
    var longestWaitMilliseconds = 0
    /// Rendered steps and routes; emptied when a newly learned secret or origin changes them.
    var renderedSteps: [String] = []
    var renderedRoutes: [Int: String] = [:]

    mutating func willHandle(_ event: DaemonEvent) {
        replayable = true
        switch event {
        case .transport(.payload(.single(let message), _)):
            guard let json = RecordedSession.json(of: message) else {
                unrecordable("the client sent an invalid message (\(RecordedSession.reason(message)))")
                return
            }
            noteRequest(message)
            append(.send(json), learning: json)
        case .transport(.payload(.batch(let messages), _)):
            let elements = messages.compactMap(RecordedSession.json(of:))
            guard elements.count == messages.count else {
                unrecordable("the client sent a batch holding invalid messages")
                return
            }
            messages.forEach { noteRequest($0) }
            let batch = JSON.array(elements)
            append(.send(batch), learning: batch)
        case .transport(.payload(.unusable(let error), _)), .transport(.framingError(let error)):
            unrecordable("the client sent bytes that are not a message: \(error.message)")
        case .transport(.payload(.ignored(let reason), _)):
            unrecordable("the client sent a message the daemon ignored: \(reason)")
        case .transport(.endOfInput(let midFrame)):
            if midFrame { entries.append(.sendRaw("Content-Length: 2\r\n\r\n{")) }
            entries.append(.closeInput)
        case .transport(.outputFailed):
            clientGone = true
            entries.append(.comment("the client stopped reading (its end of the daemon's stdout closed)"))
        case .delayElapsed, .refreshDue:
            // Timers: the replayed daemon's own fire again.
            break
        case .loaded:
            guard !completions.isEmpty else { return }
            let number = completions.removeFirst()
            let exchange = exchanges[number]
            if exchange.cancelledByDaemon { return }
            switch exchange.outcome {
            case .failure(let failure) where failure.kind == .timeout:
                // The replayed daemon times out by itself: the route is never answered.
                longestWaitMilliseconds = max(longestWaitMilliseconds, Int(exchange.request.timeoutSeconds * 1000))
            case .failure(let failure) where failure.kind == .cancelled:
                break
            default:
                entries.append(.release(exchange: number))
            }
        }
    }

    mutating func willSend(_ outgoing: Outgoing) {
        let json = outgoing.json
        guard replayable else {
            entries.append(.comment("the daemon answered: \(json.text())"))
            return
        }
        var method: String?
        if case .response(let id, _) = outgoing, var methods = methodsByID[id], !methods.isEmpty {
            method = methods.removeFirst()
            methodsByID[id] = methods.isEmpty ? nil : methods
        }
        append(.expect(json, method: method), learning: json)
    }

    mutating func ended(status: Int32) {
        // A client that went away cannot be replayed going away; the rest still can.
        if !clientGone { entries.append(.expectExit(status)) }
    }

    mutating func startExchange(_ request: RemoteRequest) -> Int {
        exchanges.append(Exchange(request: request))
        entries.append(.requested(exchange: exchanges.count - 1))
        var changed = false
        if let origin = URLRewriting.origin(of: request.url), !rendering.urls.origins.contains(origin) {
            rendering.urls.origins.insert(origin)
            changed = true
        }
        for header in request.headers where rendering.secrets.isSecret(name: header.name) {
            changed = rendering.secrets.learn(header.value) || changed
        }
        // Values read from the environment or files are secret whatever their header's name.
        for value in request.secretValues { changed = rendering.secrets.learn(value) || changed }
        changed = rendering.learn(fromText: request.url) || changed
        if changed { forgetRendered() }
        return exchanges.count - 1
    }

    mutating func completeExchange(_ number: Int, _ result: Result<RemoteResponse, FetchError>) {
        switch result {
        case .success(let response):
            exchanges[number].outcome = .response(response)
            var learned = false
            for header in response.headers where rendering.secrets.isSecret(name: header.name) {
                learned = rendering.secrets.learn(header.value) || learned
            }
            if learned { forgetRendered() }
        case .failure(let failure):
            exchanges[number].outcome = .failure(failure)
        }
        completions.append(number)
        renderedRoutes[number] = nil
    }

    mutating func cancelExchange(_ number: Int) {
        exchanges[number].cancelledByDaemon = true
    }

    private mutating func append(_ entry: Entry, learning value: JSON) {
        var changed = rendering.learn(from: value)
        // The base URLs of remote sources are the fixture server's in the replay.
        for url in RecordedSession.baseURLs(in: value) {
            if let origin = URLRewriting.origin(of: url), !rendering.urls.origins.contains(origin) {
                rendering.urls.origins.insert(origin)
                changed = true
            }
        }
        if case .send(let message) = entry, message["method"]?.stringValue == "ping",
           let delay = message["params"]?["delayMilliseconds"]?.integerValue {
            longestWaitMilliseconds = max(longestWaitMilliseconds, delay)
        }
        if changed { forgetRendered() }
        entries.append(entry)
    }

    private mutating func unrecordable(_ reason: String) {
        replayable = false
        entries.append(.comment("not replayable: \(reason)"))
    }

    private mutating func noteRequest(_ message: Message) {
        if case .request(let request) = message { methodsByID[request.id, default: []].append(request.method) }
    }

    private mutating func forgetRendered() {
        renderedSteps.removeAll()
        renderedRoutes.removeAll()
    }

    private static func json(of message: Message) -> JSON? {
        switch message {
        case .request(let request):
            var members: [(String, JSON)] = [("jsonrpc", "2.0"), ("id", request.id), ("method", JSON(request.method))]
            if let params = request.params { members.append(("params", params)) }
            return .object(members)
        case .notification(let notification):
            return notification.json
        case .response(let id):
            return ["jsonrpc": "2.0", "id": id, "result": .null]
        case .invalid:
            return nil
        }
    }

    private static func reason(_ message: Message) -> String {
        if case .invalid(_, let error) = message { return error.message }
        return "unknown"
    }

    /// Every `baseURL` member in a message (`remoteConfiguration.baseURL` of createSource).
    private static func baseURLs(in value: JSON) -> [String] {
        if let members = value.objectMembers {
            return members.flatMap { key, member in
                key == "baseURL" ? member.stringValue.map { [$0] } ?? [] : baseURLs(in: member)
            }
        }
        return value.arrayValue?.flatMap(baseURLs(in:)) ?? []
    }
}
