import Daemon
import DataSources
import JSONKit

/// The recorded session as a transcript (Protocol.md, "Transcripts"): one fixture route per
/// HTTP exchange and one step per line, so a recording reads and diffs well.
extension RecordedSession {
    /// Response headers that describe the connection rather than the answer.
    static let connectionHeaders: Set = ["content-length", "transfer-encoding", "connection", "keep-alive"]
    /// How long replay waits for a message when nothing recorded took longer.
    static let defaultTimeoutMilliseconds = 5000

    static let description = """
        Recorded by datasourced \(DaemonInfo.version) (--record). `datasourced replay FILE` runs this session \
        again offline: each HTTP exchange is a fixture route held until its "release" step. To turn a bug into \
        a test, change the expectation that shows it into what should have been said; \
        `datasourced transcript trim FILE --through-step N` cuts the session after step N.
        """

    /// How long replay waits for a message: past the longest wait recorded.
    var timeoutMilliseconds: Int {
        let (sum, overflow) = longestWaitMilliseconds.addingReportingOverflow(RecordedSession.defaultTimeoutMilliseconds)
        return longestWaitMilliseconds > 0 ? (overflow ? Int.max : sum) : RecordedSession.defaultTimeoutMilliseconds
    }

    /// The whole recording, one step per line.
    mutating func layout(daemonArguments: [String]) -> TranscriptLayout {
        renderSteps()
        return TranscriptLayout(
            headerMembers: [
                ("description", JSON(RecordedSession.description).text()),
                ("daemonArguments", JSON.array(daemonArguments.map { JSON($0) }).text()),
            ],
            timeoutMilliseconds: timeoutMilliseconds,
            routes: exchanges.indices.map { routeText($0) },
            stepLines: renderedSteps)
    }

    /// Renders the entries not rendered yet.
    mutating func renderSteps() {
        for index in renderedSteps.count..<entries.count { renderedSteps.append(step(entries[index]).text()) }
    }

    /// The exchange's route as the file should hold it now (rendered once per change).
    mutating func routeText(_ number: Int) -> String {
        if let text = renderedRoutes[number] { return text }
        let text = route(number).text()
        renderedRoutes[number] = text
        return text
    }

    static func holdName(_ number: Int) -> String { "exchange-\(number + 1)" }

    private func step(_ entry: Entry) -> JSON {
        switch entry {
        case .send(let message):
            return ["send": rendering.render(message, role: .sent)]
        case .expect(let message, let method):
            var pattern = rendering.render(message, role: .expected)
            if method == "initialize", let result = pattern["result"], result.isObject {
                // What the daemon offers grows with its versions; the session needs only this.
                pattern = pattern.setting(
                    "result",
                    to: [
                        "$partial": true, "protocolVersion": "$string",
                        "serverInfo": ["name": JSON(DaemonInfo.name), "version": "$string"],
                    ])
            }
            return ["expect": pattern]
        case .requested(let number):
            return ["requested": JSON(RecordedSession.holdName(number))]
        case .release(let number):
            return ["release": JSON(RecordedSession.holdName(number))]
        case .sendRaw(let text):
            return ["sendRaw": JSON(text)]
        case .closeInput:
            return ["closeInput": true]
        case .expectExit(let status):
            return ["expectExit": JSON(Int(status))]
        case .comment(let text):
            return ["comment": JSON(rendering.secrets.scrubbed(text))]
        }
    }

    /// The exchange as a fixture route that answers once, when released.
    private func route(_ number: Int) -> JSON {
        let exchange = exchanges[number]
        var target = rendering.render(JSON(exchange.request.url), role: .sent).stringValue ?? "/"
        if target.hasPrefix("${fixtures}") { target.removeFirst("${fixtures}".count) }
        let (path, query) = RecordedSession.split(target)
        var members: [(String, JSON)] = [("path", JSON(path))]
        if !query.isEmpty { members.append(("query", .object(query.map { ($0.0, JSON($0.1)) }))) }
        // A GET's route stays as it always was; a POST's names its method and body, so routes
        // that differ only by body (pages of a GraphQL connection) each answer their own.
        if exchange.request.method != .get {
            members.append(("method", JSON(exchange.request.method.rawValue)))
            if let body = RecordedSession.requestBody(exchange.request) {
                members.append(("requestBody", rendering.renderRequestBody(body)))
            }
        }
        members += [("times", 1), ("hold", JSON(RecordedSession.holdName(number)))]
        switch exchange.outcome {
        case .response(let response):
            members += responseMembers(response)
        case .failure(let failure) where failure.kind == .transport:
            // Reproduced as a connection reset halfway through the body.
            members += [("bodyText", "{}"), ("reset", true)]
        case .failure(let failure) where failure.kind == .tooLarge:
            members += [("bodyText", ""), ("padToBytes", JSON(exchange.request.maximumBodySize + 1))]
        case .failure, .inFlight:
            break  // never released: the replayed daemon times out or cancels, as recorded
        }
        return .object(members)
    }

    private func responseMembers(_ response: RemoteResponse) -> [(String, JSON)] {
        var members: [(String, JSON)] = [("status", JSON(response.status))]
        let headers = response.headers.filter { !RecordedSession.connectionHeaders.contains($0.name.lowercased()) }
        if !headers.isEmpty {
            // Rendered as a "headers" member, where secret names are redacted by name.
            let wrapped: JSON = ["headers": .object(headers.map { ($0.name, JSON($0.value)) })]
            members.append(("headers", rendering.render(wrapped, role: .responseBody)["headers"] ?? .object([])))
        }
        guard !response.body.isEmpty else { return members }
        let text = String(decoding: response.body, as: UTF8.self)
        // `body` when the fixture server sends back the same bytes (compact JSON, declared
        // as JSON), else the exact text: a parse error's line and column must not move.
        if response.contentType != nil, let value = try? JSON.parse(response.body), value.encoded() == response.body {
            members.append(("body", rendering.render(value, role: .responseBody)))
        } else {
            members.append(("bodyText", JSON(rendering.renderBodyText(text))))
        }
        return members
    }

    /// The request's JSON body, parsed; nil without one (a body that is not JSON, which the
    /// daemon never sends, is recorded as no body: the route then matches any).
    static func requestBody(_ request: RemoteRequest) -> JSON? {
        guard let bytes = request.body, !bytes.isEmpty else { return nil }
        return try? JSON.parse(bytes)
    }

    /// `/path?a=1&b=2` as the fixture server reads it: the path as written, query values decoded.
    static func split(_ target: String) -> (path: String, query: [(String, String)]) {
        let withoutFragment = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let parts = withoutFragment.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let path = parts.first.map(String.init) ?? ""
        var query: [(String, String)] = []
        if parts.count > 1 {
            for pair in parts[1].split(separator: "&") {
                let halves = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                query.append(
                    (
                        URLRewriting.percentDecoded(String(halves[0])),
                        halves.count > 1 ? URLRewriting.percentDecoded(String(halves[1])) : ""
                    ))
            }
        }
        return (path.isEmpty ? "/" : path, query)
    }
}
