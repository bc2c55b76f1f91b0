import Daemon
import DataSources
import JSONKit
import JSONRPC
import Basics

/// Writes a session down as a transcript while the daemon serves it (`--record FILE`): every
/// message received (a `send` step) and sent (an `expect` step), and every HTTP exchange (a
/// fixture route, held by the fixture server until a `release` step says the response
/// arrived), so `datasourced replay FILE` runs the session again offline, in the same order.
///
/// After every event the daemon handles, the file gets what the event added, at a cost of the
/// event's size (`TranscriptFile` says how): at any moment it is a transcript of the events
/// handled so far. A write that fails (a full disk, a file-size limit) ends the recording with
/// one warning; the file keeps the session up to there, and the daemon goes on serving.
package final class SessionRecorder: DaemonObserver, Sendable {
    private let daemonArguments: [String]
    private let recording: LockedValue<Recording>
    /// Held while an HTTP completion is noted and handed to the daemon's mailbox, so the
    /// order of noted completions is the order the main loop will handle them in.
    private let delivery = Lock()
    private let warn: @Sendable (String) -> Void

    /// Starts a recording at `path` (written at once: an empty session). `redacting` adds
    /// header and query parameter names whose values are never written.
    package init(path: String, daemonArguments: [String], redacting names: [String], warn: @escaping @Sendable (String) -> Void) throws {
        var recording = Recording(
            session: RecordedSession(rendering: Rendering(secrets: Secrets(extraNames: names))),
            file: TranscriptFile(path: path))
        try recording.writeWhole(daemonArguments: daemonArguments)
        self.recording = LockedValue(recording)
        self.daemonArguments = daemonArguments
        self.warn = warn
    }

    /// The fetcher the daemon should use: `fetcher`, with its exchanges recorded.
    package func recording(_ fetcher: HTTPFetching) -> HTTPFetching {
        RecordingFetcher(wrapping: fetcher, recorder: self)
    }

    /// Bytes handed to the file so far, written whole or in place.
    var bytesWritten: Int {
        recording.withLock { $0.file.bytesWritten }
    }

    // MARK: The daemon's main loop

    package func daemonWillHandle(_ event: DaemonEvent) {
        recording.withLock { if $0.isRecording { $0.session.willHandle(event) } }
    }

    package func daemonWillSend(_ outgoing: Outgoing) {
        recording.withLock { if $0.isRecording { $0.session.willSend(outgoing) } }
    }

    package func daemonDidHandle(_ event: DaemonEvent) {
        recording.withLock { $0.writeEvent(daemonArguments: daemonArguments, warn: warn) }
    }

    /// The daemon ended with `status`: the transcript expects that exit, and is written whole
    /// once more, one step per line, without the room it was recorded with.
    package func finish(exitStatus: Int32) {
        recording.withLock { recording in
            guard recording.isRecording else { return }
            recording.session.ended(status: exitStatus)
            recording.writeEvent(daemonArguments: daemonArguments, warn: warn)
            recording.writeFinal(daemonArguments: daemonArguments, warn: warn)
        }
    }

    // MARK: HTTP, from the fetcher's threads

    /// The exchange's number, or -1 once the recording has stopped.
    func exchangeStarted(_ request: RemoteRequest) -> Int {
        recording.withLock { $0.isRecording ? $0.session.startExchange(request) : -1 }
    }

    /// Notes the outcome, then hands it on with `deliver` (which posts it to the mailbox).
    func exchangeCompleted(_ number: Int, _ result: Result<RemoteResponse, FetchError>, deliver: () -> Void) {
        delivery.withLock {
            recording.withLock { if $0.isRecording, number >= 0 { $0.session.completeExchange(number, result) } }
            deliver()
        }
    }

    func exchangeCancelled(_ number: Int) {
        recording.withLock { if $0.isRecording, number >= 0 { $0.session.cancelExchange(number) } }
    }
}

/// The session and its file, under one lock: the file is written from the main loop, while
/// the fetcher's threads note exchanges.
struct Recording {
    var session: RecordedSession
    var file: TranscriptFile
    /// False once a write failed: what was written stays, nothing more is.
    private(set) var isRecording = true

    /// Writes what the last event added: the routes that changed, the timeout if it grew, and
    /// the event's steps as one line.
    mutating func writeEvent(daemonArguments: [String], warn: (String) -> Void) {
        guard isRecording else { return }
        do throws(TranscriptFile.WriteError) {
            if session.needsWholeWrite { return try writeWhole(daemonArguments: daemonArguments) }
            if let first = session.firstChangedRoute {
                let routes = (first..<session.exchanges.count).map { session.routeText($0) }
                guard try file.writeRoutes(from: first, routes) else { return try writeWhole(daemonArguments: daemonArguments) }
                session.wroteRoutes(from: first, routes)
            }
            let timeout = session.timeoutMilliseconds
            if timeout != file.timeoutMilliseconds { try file.writeTimeout(timeout) }
            if session.writtenSteps < session.entries.count {
                session.renderSteps()
                try file.appendStepLine(session.renderedSteps[session.writtenSteps...].joined(separator: ", "))
                session.writtenSteps = session.renderedSteps.count
            }
        } catch {
            stop(
                warn,
                """
                recording: \(error). The recording stops here: \(file.path) holds the session's first \(session.writtenSteps) \
                steps (`datasourced replay` runs them); the daemon goes on serving
                """)
        }
    }

    /// Writes the file whole, with room after the routes once there are any (a quarter of the
    /// file, so that running out of room costs O(1) per byte recorded).
    mutating func writeWhole(daemonArguments: [String]) throws(TranscriptFile.WriteError) {
        let layout = session.layout(daemonArguments: daemonArguments)
        let size = layout.routes.reduce(0) { $0 + $1.utf8.count + 6 } + layout.stepLines.reduce(0) { $0 + $1.utf8.count + 6 }
        try file.replace(with: layout, room: session.exchanges.isEmpty ? 0 : max(16 << 10, size / 4))
        session.wroteWhole(routes: layout.routes)
    }

    /// The recording as a person would lay it out: one route and one step per line, no room.
    mutating func writeFinal(daemonArguments: [String], warn: (String) -> Void) {
        guard isRecording else { return }
        do throws(TranscriptFile.WriteError) {
            try file.replace(with: session.layout(daemonArguments: daemonArguments), room: 0, final: true)
            file.close()
            isRecording = false
        } catch {
            stop(warn, "recording: \(error); \(file.path) holds the whole session, laid out as it was recorded")
        }
    }

    private mutating func stop(_ warn: (String) -> Void, _ message: String) {
        warn(message)
        isRecording = false
        file.close()
        // Nothing more is written: what the session held is let go.
        session = RecordedSession(rendering: Rendering(secrets: Secrets(extraNames: [])))
    }
}

/// One request the daemon made (a GET, or a POST with its body), and what became of it.
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
    /// Rendered steps and routes; emptied when a newly learned secret or origin is in what was
    /// written (which is then written whole again).
    var renderedSteps: [String] = []
    var renderedRoutes: [Int: String] = [:]
    /// How many steps the file holds, and its routes as it holds them.
    var writtenSteps = 0
    var writtenRoutes: [String] = []
    /// The first route the file holds in an older form, or lacks.
    var firstChangedRoute: Int?
    var needsWholeWrite = false

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
        case .delayElapsed, .refreshDue, .updateDue, .deferred:
            // Timers and deferred work: the replayed daemon's own come again.
            break
        case .loaded:
            guard !completions.isEmpty else { return }
            let number = completions.removeFirst()
            let exchange = exchanges[number]
            if exchange.cancelledByDaemon { return }
            switch exchange.outcome {
            case .failure(let failure) where failure.kind == .timeout:
                // The replayed daemon times out by itself: the route is never answered.
                longestWaitMilliseconds = max(longestWaitMilliseconds, RecordedSession.milliseconds(exchange.request.timeoutSeconds))
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
        let number = exchanges.count - 1
        entries.append(.requested(exchange: number))
        let before = rendering.secrets
        var origins: [String] = []
        if let origin = URLRewriting.origin(of: request.url), rendering.urls.origins.insert(origin).inserted {
            origins.append(origin)
        }
        for header in request.headers where rendering.secrets.isSecret(name: header.name) {
            rendering.secrets.learn(header.value)
        }
        // Values read from the environment or files are secret whatever their header's name.
        for value in request.secretValues { rendering.secrets.learn(value) }
        // A body's secret-named members (a GraphQL `variables.token`), scrubbed everywhere.
        if let body = RecordedSession.requestBody(request) {
            for value in Rendering.secretMemberValues(body, isSecret: rendering.secrets.isSecret(name:)) { rendering.secrets.learn(value) }
        }
        _ = rendering.learn(fromText: request.url)
        learned(since: before, origins: origins)
        routeChanged(number)
        return number
    }

    mutating func completeExchange(_ number: Int, _ result: Result<RemoteResponse, FetchError>) {
        switch result {
        case .success(let response):
            exchanges[number].outcome = .response(response)
            let before = rendering.secrets
            for header in response.headers where rendering.secrets.isSecret(name: header.name) {
                rendering.secrets.learn(header.value)
            }
            learned(since: before, origins: [])
        case .failure(let failure):
            exchanges[number].outcome = .failure(failure)
        }
        completions.append(number)
        renderedRoutes[number] = nil
        routeChanged(number)
    }

    mutating func cancelExchange(_ number: Int) {
        exchanges[number].cancelledByDaemon = true
    }

    /// The file holds every step rendered, and `routes`.
    mutating func wroteWhole(routes: [String]) {
        writtenSteps = renderedSteps.count
        writtenRoutes = routes
        firstChangedRoute = nil
        needsWholeWrite = false
    }

    /// The file holds `routes` from route `first` on.
    mutating func wroteRoutes(from first: Int, _ routes: [String]) {
        writtenRoutes.removeSubrange(first...)
        writtenRoutes += routes
        firstChangedRoute = nil
    }

    private mutating func routeChanged(_ number: Int) {
        firstChangedRoute = min(firstChangedRoute ?? number, number)
    }

    private mutating func append(_ entry: Entry, learning value: JSON) {
        let before = rendering.secrets
        _ = rendering.learn(from: value)
        // The base URLs of remote sources are the fixture server's in the replay.
        var origins: [String] = []
        for url in RecordedSession.baseURLs(in: value) {
            if let origin = URLRewriting.origin(of: url), rendering.urls.origins.insert(origin).inserted {
                origins.append(origin)
            }
        }
        if case .send(let message) = entry, message["method"]?.stringValue == "ping",
            let delay = message["params"]?["delayMilliseconds"]?.integerValue
        {
            longestWaitMilliseconds = max(longestWaitMilliseconds, delay)
        }
        learned(since: before, origins: origins)
        entries.append(entry)
    }

    /// What is not written yet is rendered with what was just learned. What is written is
    /// written whole again only if it holds a new secret (as it stood, or as it was partly
    /// scrubbed by the secrets known before) or a new origin: a check that reads the
    /// recording's text in memory, and no file.
    private mutating func learned(since before: Secrets, origins: [String]) {
        let secrets = rendering.secrets.learnedInOrder[before.learnedInOrder.count...]
        guard !needsWholeWrite, !secrets.isEmpty || !origins.isEmpty else { return }
        var needles: Set<[UInt8]> = []
        for secret in secrets {
            for form in [secret, before.scrubbed(secret)] where form != Secrets.placeholder {
                needles.insert(Array(form.utf8))
                // As a JSON string holds it (quotes, backslashes and control characters escaped).
                needles.insert(Array(JSON(form).text().utf8.dropFirst().dropLast()))
            }
        }
        let written = renderedSteps[..<writtenSteps] + writtenRoutes
        let holdsOne = written.contains { text in
            needles.contains { TextSearch.contains(text, $0, ignoringASCIICase: false) }
                || origins.contains { TextSearch.contains(text, Array($0.utf8), ignoringASCIICase: true) }
        }
        if holdsOne {
            needsWholeWrite = true
            renderedSteps.removeAll()
            renderedRoutes.removeAll()
        }
    }

    /// `seconds` as whole milliseconds, saturating (a request's timeout, checked by the daemon, but
    /// no arithmetic here may trap).
    static func milliseconds(_ seconds: Double) -> Int {
        let value = (seconds * 1000).rounded(.up)
        guard value.isFinite, value > 0 else { return 0 }
        return value >= Double(Int.max) ? Int.max : Int(value)
    }

    private mutating func unrecordable(_ reason: String) {
        replayable = false
        entries.append(.comment("not replayable: \(reason)"))
    }

    private mutating func noteRequest(_ message: Message) {
        if case .request(let request) = message { methodsByID[request.id, default: []].append(request.method) }
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

/// Byte search in a recording's text.
enum TextSearch {
    static func contains(_ text: String, _ needle: [UInt8], ignoringASCIICase: Bool) -> Bool {
        guard !needle.isEmpty else { return false }
        var text = text
        return text.withUTF8 { haystack in
            guard haystack.count >= needle.count else { return false }
            let first = needle[0]
            for start in 0...(haystack.count - needle.count) {
                guard equal(haystack[start], first, ignoringASCIICase) else { continue }
                var index = 1
                while index < needle.count, equal(haystack[start + index], needle[index], ignoringASCIICase) { index += 1 }
                if index == needle.count { return true }
            }
            return false
        }
    }

    private static func equal(_ a: UInt8, _ b: UInt8, _ ignoringASCIICase: Bool) -> Bool {
        guard ignoringASCIICase else { return a == b }
        func lower(_ byte: UInt8) -> UInt8 { (65...90).contains(byte) ? byte + 32 : byte }
        return lower(a) == lower(b)
    }
}
