import JSONKit

/// A recorded session: what a client sends and what it expects back, in order.
/// The file format is specified in Protocol.md ("Transcripts").
public struct Transcript {
    public enum Step {
        /// One message, framed by the replayer (an array is sent as a batch).
        case send(JSON)
        /// A body sent as given inside one frame: for bodies that are not valid JSON.
        case sendBody(String)
        /// Bytes written as given, no framing added: for framing edge cases.
        case sendRaw([UInt8])
        /// The next message must match the pattern.
        case expect(JSON)
        /// The next messages, as many as patterns, must match them in some order.
        case expectUnordered([JSON])
        /// Closes the daemon's stdin (end of input).
        case closeInput
        /// The daemon must exit with this status.
        case expectExit(Int32)
        /// Does nothing; says why the next steps are there (shown with --verbose).
        case comment(String)
        /// The fixture server received exactly these request targets since the last check.
        case expectRequests([String])
        /// Lets the fixture routes held under this name answer (a recorded HTTP response arriving).
        case release(String)
        /// Waits until the daemon has requested the fixture route held under this name.
        case requested(String)
        /// As `expectRequests`, and each request's headers (names in lower case) match a pattern
        /// that lists some of them.
        case expectRequestHeaders([(target: String, headers: JSON)])
        /// Starts the daemon again (same command, arguments and cache file) once the last one
        /// has exited: what a list looks like after a restart.
        case restart

        var label: String {
            switch self {
            case .send: return "send"
            case .sendBody: return "sendBody"
            case .sendRaw: return "sendRaw"
            case .expect: return "expect"
            case .expectUnordered: return "expectUnordered"
            case .closeInput: return "closeInput"
            case .expectExit: return "expectExit"
            case .comment: return "comment"
            case .expectRequests: return "expectRequests"
            case .release: return "release"
            case .requested: return "requested"
            case .expectRequestHeaders: return "expectRequestHeaders"
            case .restart: return "restart"
            }
        }
    }

    public var description: String
    public var daemonArguments: [String]
    public var timeoutMilliseconds: Int
    public var steps: [Step]
    /// HTTP routes served on loopback while the transcript runs (Protocol.md, "Fixtures").
    public var fixtures: JSON?

    public struct FormatError: Error, CustomStringConvertible {
        public let description: String
    }

    public init(parsing json: JSON) throws(FormatError) {
        guard json.isObject else { throw FormatError(description: "a transcript is a JSON object") }
        description = json["description"]?.stringValue ?? ""
        daemonArguments = try (json["daemonArguments"]?.arrayValue ?? []).enumerated().map { (index, argument) throws(FormatError) in
            guard let text = argument.stringValue else {
                throw FormatError(description: "daemonArguments[\(index)] must be a string")
            }
            return text
        }
        timeoutMilliseconds = json["timeoutMilliseconds"]?.integerValue ?? 5000
        fixtures = json["fixtures"]
        guard let steps = json["steps"]?.arrayValue else {
            throw FormatError(description: "\"steps\" must be an array")
        }
        self.steps = try steps.enumerated().map { (index, step) throws(FormatError) in
            try Transcript.step(step, index: index)
        }
    }

    private static func step(_ step: JSON, index: Int) throws(FormatError) -> Step {
        func fail(_ message: String) -> FormatError { FormatError(description: "steps[\(index)]: \(message)") }
        if let message = step["send"] { return .send(message) }
        if let body = step["sendBody"] {
            guard let text = body.stringValue else { throw fail("\"sendBody\" must be a string") }
            return .sendBody(text)
        }
        if let raw = step["sendRaw"] {
            guard let text = raw.stringValue else { throw fail("\"sendRaw\" must be a string") }
            let times = step["repeat"]?.integerValue ?? 1
            guard times >= 1 else { throw fail("\"repeat\" must be a positive integer") }
            let bytes = Array(text.utf8)
            var repeated: [UInt8] = []
            repeated.reserveCapacity(bytes.count * times)
            for _ in 0..<times { repeated.append(contentsOf: bytes) }
            return .sendRaw(repeated)
        }
        if let pattern = step["expect"] { return .expect(pattern) }
        if let patterns = step["expectUnordered"] {
            guard let list = patterns.arrayValue else { throw fail("\"expectUnordered\" must be an array of patterns") }
            return .expectUnordered(list)
        }
        if step["closeInput"] != nil { return .closeInput }
        if let status = step["expectExit"] {
            guard let code = status.integerValue else { throw fail("\"expectExit\" must be an integer") }
            return .expectExit(Int32(code))
        }
        if let text = step["comment"]?.stringValue { return .comment(text) }
        if let targets = step["expectRequests"] {
            guard let list = targets.arrayValue?.compactMap(\.stringValue), list.count == targets.count else {
                throw fail("\"expectRequests\" must be an array of request targets such as \"/items?page=1\"")
            }
            return .expectRequests(list)
        }
        if let requests = step["expectRequestHeaders"] {
            let format = "\"expectRequestHeaders\" must be an array of {\"path\": \"/items?page=1\", \"headers\": {...}}"
            guard let list = requests.arrayValue else { throw fail(format) }
            return .expectRequestHeaders(try list.map { (request) throws(FormatError) in
                guard let target = request["path"]?.stringValue, let headers = request["headers"], headers.isObject else { throw fail(format) }
                return (target, headers)
            })
        }
        if step["restart"]?.boolValue == true { return .restart }
        if let name = step["release"] {
            guard let text = name.stringValue else { throw fail("\"release\" must be the name of a fixture route's \"hold\"") }
            return .release(text)
        }
        if let name = step["requested"] {
            guard let text = name.stringValue else { throw fail("\"requested\" must be the name of a fixture route's \"hold\"") }
            return .requested(text)
        }
        throw fail("expected one of comment, expectRequests, expectRequestHeaders, release, requested, restart, send, sendBody, sendRaw, expect, expectUnordered, closeInput, expectExit; got \(step)")
    }
}
