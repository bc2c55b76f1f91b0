import WireSchema
import DataSources
import JSONKit

/// A recorded session: what a client sends and what it expects back, in order.
/// The file format, and the bounds its numbers are held to, are specified in Protocol.md
/// ("Transcripts"). A transcript is input like the wire (it comes with bug reports, from
/// strangers): it is decoded with the daemon's own reader, every number range-checked.
package struct Transcript: Sendable {
    package enum Step: Sendable {
        /// One message, framed by the replayer (an array is sent as a batch).
        case send(JSON)
        /// A body sent as given inside one frame: for bodies that are not valid JSON.
        case sendBody(String)
        /// Bytes written as given, `repeat` times, no framing added: for framing edge cases.
        /// Kept once and written repeatedly, never multiplied out in memory.
        case sendRaw([UInt8], repeat: Int)
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

        package var label: String {
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

        /// The member that names a step's kind; a step has exactly one.
        static let kinds = [
            "comment", "send", "sendBody", "sendRaw", "expect", "expectUnordered", "expectRequests",
            "expectRequestHeaders", "requested", "release", "closeInput", "expectExit", "restart",
        ]
    }

    package var description: String
    package var daemonArguments: [String]
    package var timeoutMilliseconds: Int
    package var steps: [Step]
    /// HTTP routes served on loopback while the transcript runs (Protocol.md, "Fixtures").
    package var fixtures: [FixtureRoute]?

    /// Why a transcript or fixture file is refused: the field, as a path from the top of the
    /// file (`steps[3].repeat`, `fixtures[0].status`), and what it must be.
    package struct FormatError: Error, CustomStringConvertible, Sendable {
        package let description: String
        /// The path of the member refused; empty for the file as a whole.
        package let field: String

        init(_ error: FieldError) {
            description = error.message
            field = error.field
        }

        init(field: String, description: String) {
            self.field = field
            self.description = description
        }
    }

    package static let defaultTimeoutMilliseconds = 5000

    package init(parsing json: JSON) throws(FormatError) {
        guard json.isObject else {
            throw FormatError(field: "", description: "a transcript is a JSON object, got \(json.kindDescription)")
        }
        do throws(FieldError) {
            var reader = try ObjectReader(json, field: "")
            description = try reader.optionalString("description") ?? ""
            daemonArguments =
                try reader.optional("daemonArguments") { value, field throws(FieldError) in
                    try Decode.array(value, field, expected: "an array of strings").enumerated().map { index, argument throws(FieldError) in
                        try Decode.string(argument, "\(field)[\(index)]")
                    }
                } ?? []
            timeoutMilliseconds =
                try reader.optionalInteger("timeoutMilliseconds", in: TranscriptLimits.timeoutMilliseconds)
                ?? Transcript.defaultTimeoutMilliseconds
            fixtures = try reader.optional("fixtures") { value, field throws(FieldError) in try FixtureRoute.routes(value, field: field) }
            var rawBytes = 0
            steps = try reader.required(
                "steps",
                { value, field throws(FieldError) in
                    try Decode.array(value, field, expected: "an array of steps").enumerated().map { index, step throws(FieldError) in
                        try Transcript.step(step, field: "\(field)[\(index)]", rawBytes: &rawBytes)
                    }
                }, expected: "an array of steps")
            // Tests/TranscriptsThatFail: text the failure report must contain (FailingTranscriptTests).
            _ = try reader.optionalString("expectedFailure")
            try reader.finish()
        } catch {
            throw FormatError(error)
        }
    }

    /// `rawBytes` counts what the `sendRaw` steps so far write, repeats included.
    private static func step(_ step: JSON, field: String, rawBytes: inout Int) throws(FieldError) -> Step {
        var reader = try ObjectReader(step, field: field, expected: "a step, an object such as {\"send\": MESSAGE}")
        // Reading every kind marks them all as known: a misspelt one is then refused with
        // the closest kind named.
        let present = Step.kinds.compactMap { kind in reader.rawValue(kind).map { (kind, $0) } }
        guard let (kind, value) = present.first else {
            try reader.finish()
            throw .missing(field, expected: "a step: an object with one of \(Step.kinds.joined(separator: ", "))")
        }
        guard present.count == 1 else {
            let names = present.map { "\"\($0.0)\"" }.joined(separator: " and ")
            throw FieldError(
                field: field, expected: "a step of one kind", got: JSON(present.map(\.0).joined(separator: ", ")),
                message: "\"\(field)\" must be a step of one kind, got \(names)")
        }
        let path = reader.path(kind)
        let decoded: Step
        switch kind {
        case "send":
            decoded = .send(value)
        case "sendBody":
            decoded = .sendBody(try Decode.string(value, path))
        case "sendRaw":
            let bytes = Array(try Decode.string(value, path).utf8)
            let limit = TranscriptLimits.maximumRawBytesPerStep
            guard bytes.count <= limit else {
                throw FieldError(
                    field: path, expected: "at most \(limit) bytes", got: JSON(bytes.count),
                    message: "\"\(path)\" must be at most \(limit) bytes, got \(bytes.count)")
            }
            // `limit / count` repeats at most, so the product never exceeds the limit (nor overflows).
            let mostRepeats = limit / max(1, bytes.count)
            let times =
                try reader.optional("repeat") { value, field throws(FieldError) in
                    do throws(FieldError) {
                        return try Decode.integer(value, field, in: 1...mostRepeats)
                    } catch {
                        throw FieldError(
                            field: field, expected: error.expected, got: value,
                            message: "\(error.message) (\"sendRaw\" writes at most \(limit) bytes in all; its text is \(bytes.count) bytes)"
                        )
                    }
                } ?? 1
            rawBytes += bytes.count * times
            let total = TranscriptLimits.maximumRawBytes
            guard rawBytes <= total else {
                throw FieldError(
                    field: path, expected: "at most \(total) bytes written by sendRaw steps in all", got: JSON(rawBytes),
                    message:
                        "\"\(path)\": the transcript's sendRaw steps write more than \(total) bytes in all (\(rawBytes) up to this one)")
            }
            decoded = .sendRaw(bytes, repeat: times)
        case "expect":
            decoded = .expect(value)
        case "expectUnordered":
            decoded = .expectUnordered(try Decode.array(value, path, expected: "an array of patterns"))
        case "closeInput":
            try requireTrue(value, path)
            decoded = .closeInput
        case "expectExit":
            // An exit status is a byte (what waitpid reports; 128 + N for a signal).
            decoded = .expectExit(Int32(try Decode.integer(value, path, in: 0...255)))
        case "comment":
            decoded = .comment(try Decode.string(value, path))
        case "expectRequests":
            let expected = "an array of request targets such as \"/items?page=1\""
            decoded = .expectRequests(
                try Decode.array(value, path, expected: expected).enumerated().map { index, target throws(FieldError) in
                    try Decode.string(target, "\(path)[\(index)]")
                })
        case "expectRequestHeaders":
            let expected = "an array of {\"path\": \"/items?page=1\", \"headers\": {...}}"
            decoded = .expectRequestHeaders(
                try Decode.array(value, path, expected: expected).enumerated().map { index, request throws(FieldError) in
                    var request = try ObjectReader(
                        request, field: "\(path)[\(index)]", expected: "an object {\"path\": \"/items?page=1\", \"headers\": {...}}")
                    let target = try request.string("path")
                    let headers = try request.required(
                        "headers",
                        { value, field throws(FieldError) in
                            guard value.isObject else { throw .mistyped(field, expected: "an object of header patterns", got: value) }
                            return value
                        }, expected: "an object of header patterns")
                    try request.finish()
                    return (target, headers)
                })
        case "requested":
            decoded = .requested(try Decode.string(value, path))
        case "release":
            decoded = .release(try Decode.string(value, path))
        default:  // "restart"
            try requireTrue(value, path)
            decoded = .restart
        }
        try reader.finish()
        return decoded
    }

    private static func requireTrue(_ value: JSON, _ field: String) throws(FieldError) {
        guard try Decode.bool(value, field) else { throw .invalid(field, expected: "true", got: value) }
    }
}

/// The bounds a transcript or fixture file is held to (Protocol.md, "Transcripts" and
/// "Fixtures"). Together they bound what replaying a file can make the replayer hold: the
/// file itself (read whole, at most `maximumFileBytes`) and what is decoded from it; repeats
/// and padding are produced as they are written, never held multiplied out.
package enum TranscriptLimits {
    /// Read whole and parsed: jansson holds a few times this while parsing.
    package static let maximumFileBytes = 256 << 20
    /// Two days: a recording waits past its longest request timeout, which is at most a day.
    package static let timeoutMilliseconds = 1...(2 * 86_400_000)
    /// What one `sendRaw` step writes, repeats included: four times the daemon's default
    /// message size limit, so a frame over any limit can be sent.
    package static let maximumRawBytesPerStep = 256 << 20
    /// What all the `sendRaw` steps of a transcript write together.
    package static let maximumRawBytes = 1 << 30
    /// RFC 9110 §15: every valid status code is in 100...599.
    package static let status = 100...599
    /// A day, the longest `timeoutSeconds` a source may set: a longer delay tests nothing more.
    package static let delayMilliseconds = 0...86_400_000
    package static let dripChunks = 1...100_000
    package static let dripMilliseconds = 0...60_000
    /// One byte over the largest `limits.maxBodyBytes` a source may set (1 GiB): what a recording
    /// of a body that was too large holds. The spaces are made as they are sent.
    package static let padToBytes = 0...(RemoteConfiguration.maximumBodySizeLimit + 1)
    /// The largest request body a route matches, and the fixture server keeps: 64 MiB, the
    /// daemon's default message size limit, which bounds the bodies its sources send.
    package static let maximumRequestBodyBytes = 64 << 20
}
