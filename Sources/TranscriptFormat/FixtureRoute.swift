import Basics
import WireSchema
import DataSources
import JSONKit

/// What a route sends, and how.
package struct FixtureResponse: Sendable {
    package var status: Int
    package var headers: [(String, String)]
    package var body: [UInt8]
    /// Spaces sent after `body` (`padToBytes`), made as they are sent: a large padded body
    /// costs no memory until then, and then only a piece at a time.
    package var paddingBytes = 0
    package var delayMilliseconds = 0
    /// Send the body in this many pieces, `dripMilliseconds` apart.
    package var dripChunks = 1
    package var dripMilliseconds = 0
    /// Send the head and half the body, then reset the connection.
    package var reset = false
    /// Send no Content-Length: the body ends when the connection closes.
    package var omitContentLength = false
    /// Sent only once a `release` step names this (a recorded session's exchange).
    package var hold: String? = nil

    package init(status: Int, headers: [(String, String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The body's length on the wire, padding included.
    package var length: Int { body.count + paddingBytes }
}

/// One entry of a fixture table (Protocol.md, "Fixtures"). Fixture files are input like the
/// wire: decoded with the daemon's reader, every number range-checked (`TranscriptLimits`).
package struct FixtureRoute: Sendable {
    package let path: String
    /// Query parameters that must be present with these values (others may be present too).
    package let query: [(String, String)]
    /// The request's method (`method`); nil matches any, as routes did before requests had
    /// bodies, so every older transcript replays unchanged.
    package let method: HTTPMethod?
    /// The request's JSON body (`requestBody`), compared as a value: object members in any
    /// order, numbers as JSON compares them. nil matches any body, or none. (`body` is the
    /// response's.)
    package let requestBody: JSON?
    /// Matches only this many requests, then lets later routes answer.
    package let times: Int?
    /// Entity tag sent as `ETag`; a request whose `If-None-Match` names it gets 304.
    package let etag: String?
    /// Sent as `Last-Modified`; a request whose `If-Modified-Since` is no earlier gets 304.
    package let lastModified: (text: String, seconds: Double)?
    package let response: FixtureResponse

    /// The routes of a `fixtures` array, as found at `field` of a file (`fixtures`).
    package static func routes(parsing value: JSON, field: String = "fixtures") throws(Transcript.FormatError) -> [FixtureRoute] {
        do throws(FieldError) {
            return try routes(value, field: field)
        } catch {
            throw Transcript.FormatError(error)
        }
    }

    static func routes(_ value: JSON, field: String) throws(FieldError) -> [FixtureRoute] {
        try Decode.array(value, field, expected: "an array of routes").enumerated().map { index, route throws(FieldError) in
            try FixtureRoute(route, field: "\(field)[\(index)]")
        }
    }

    init(_ json: JSON, field: String) throws(FieldError) {
        var reader = try ObjectReader(json, field: field, expected: "a route, an object with \"path\"")
        path = try reader.string("path")
        guard path.hasPrefix("/") else { throw .invalid(reader.path("path"), expected: "a path starting with /", got: JSON(path)) }
        query =
            try reader.optional("query") { value, field throws(FieldError) -> [(String, String)] in
                guard let members = value.objectMembers else {
                    throw .mistyped(field, expected: "an object of query parameters", got: value)
                }
                return members.map { name, value in (name, value.stringValue ?? value.description) }
            } ?? []
        method = try reader.optional("method") { value, field throws(FieldError) -> HTTPMethod in
            guard let name = value.stringValue, let method = HTTPMethod(rawValue: name) else {
                throw .invalid(field, expected: "one of \"GET\", \"POST\", \"PUT\", \"PATCH\", \"DELETE\"", got: value)
            }
            return method
        }
        requestBody = reader.value("requestBody")
        if let requestBody {
            // A larger body is refused by the fixture server unread: such a route never matches.
            let size = requestBody.encoded().count
            let limit = TranscriptLimits.maximumRequestBodyBytes
            guard size <= limit else {
                throw FieldError(
                    field: reader.path("requestBody"), expected: "at most \(limit) bytes", got: JSON(size),
                    message: "\"\(reader.path("requestBody"))\" must be at most \(limit) bytes as compact JSON, got \(size)")
            }
        }
        if requestBody != nil, method == .get {
            throw FieldError(
                field: reader.path("requestBody"), expected: "no request body with GET", got: "GET",
                message: "\"\(field)\" has \"requestBody\" with \"method\": \"GET\": the daemon sends no body with GET")
        }
        times = try reader.optionalInteger("times", in: 1...Int.max)
        var headers =
            try reader.optional("headers") { value, field throws(FieldError) -> [(String, String)] in
                guard let members = value.objectMembers else { throw .mistyped(field, expected: "an object of header values", got: value) }
                return try members.map { name, value throws(FieldError) -> (String, String) in
                    let memberField = "\(field).\(name)"
                    guard FixtureRoute.isToken(name) else {
                        throw FieldError(
                            field: memberField, expected: "a header name (an RFC 9110 token)", got: JSON(name),
                            message: "\"\(memberField)\": \(JSON(name).text()) is not a header name (letters, digits and !#$%&'*+-.^_`|~)")
                    }
                    return (name, try FixtureRoute.headerValue(value.stringValue.map { JSON($0) } ?? JSON(value.description), memberField))
                }
            } ?? []
        var body: [UInt8] = []
        let bodyText = try reader.optionalString("bodyText")
        if let value = reader.value("body") {
            guard bodyText == nil else {
                throw FieldError(
                    field: reader.path("body"), expected: "either body or bodyText", got: "both",
                    message: "\"\(field)\" has both \"body\" and \"bodyText\": a route sends one body")
            }
            body = value.encoded()
            if !headers.contains(where: { $0.0.lowercased() == "content-type" }) { headers.append(("Content-Type", "application/json")) }
        } else if let bodyText {
            body = Array(bodyText.utf8)
        }
        // A large body that is still JSON: the value, then spaces.
        let padding = try reader.optionalInteger("padToBytes", in: TranscriptLimits.padToBytes).map { max(0, $0 - body.count) } ?? 0
        if let tag = try reader.optionalString("etag", nonEmpty: true) {
            // An entity tag is quoted on the wire (RFC 9110 §8.8.3); a bare word is quoted for you.
            let quoted = tag.hasPrefix("\"") || tag.hasPrefix("W/\"") ? tag : "\"\(tag)\""
            guard FixtureRoute.isEntityTag(quoted) else {
                throw .invalid(
                    reader.path("etag"), expected: "an entity tag: a word, \"a quoted one\" or W/\"a weak one\" (RFC 9110 §8.8.3)",
                    got: JSON(tag))
            }
            etag = quoted
            headers.append(("ETag", quoted))
        } else {
            etag = nil
        }
        if let given = reader.value("lastModified") {
            let expected = "an HTTP date such as \"Wed, 21 Oct 2015 07:28:00 GMT\""
            let field = reader.path("lastModified")
            let text = try FixtureRoute.headerValue(JSON(try Decode.string(given, field)), field)
            guard let seconds = HTTPDate.seconds(text) else { throw .invalid(field, expected: expected, got: given) }
            lastModified = (text, seconds)
            headers.append(("Last-Modified", text))
        } else {
            lastModified = nil
        }
        var status = try reader.optionalInteger("status", in: TranscriptLimits.status)
        if let location = try reader.optionalString("redirectTo", nonEmpty: true) {
            status = status ?? 302
            headers.append(("Location", try FixtureRoute.headerValue(JSON(location), reader.path("redirectTo"))))
        }
        var response = FixtureResponse(status: status ?? 200, headers: headers, body: body)
        response.paddingBytes = padding
        response.delayMilliseconds = try reader.optionalInteger("delayMilliseconds", in: TranscriptLimits.delayMilliseconds) ?? 0
        response.dripChunks = try reader.optionalInteger("dripChunks", in: TranscriptLimits.dripChunks) ?? 1
        response.dripMilliseconds = try reader.optionalInteger("dripMilliseconds", in: TranscriptLimits.dripMilliseconds) ?? 0
        response.reset = try reader.optionalBool("reset") ?? false
        response.omitContentLength = try reader.optionalBool("omitContentLength") ?? false
        response.hold = try reader.optionalString("hold")
        self.response = response
        try reader.finish()
    }

    /// RFC 9110 §5.6.2: `tchar`, one or more.
    static func isToken(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
                    true
                default: tokenSymbols.contains(byte)
                }
            }
    }

    private static let tokenSymbols = Set("!#$%&'*+-.^_`|~".utf8)

    /// RFC 9110 §8.8.3: `[W/]"…"`, the quoted part `!`, `#`…`~` or any byte from 0x80.
    static func isEntityTag(_ tag: String) -> Bool {
        var bytes = tag.utf8[...]
        if bytes.starts(with: "W/".utf8) { bytes = bytes.dropFirst(2) }
        guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else { return false }
        return bytes.dropFirst().dropLast().allSatisfy { $0 == 0x21 || (0x23...0x7e).contains($0) || $0 >= 0x80 }
    }

    /// A header value as sent: no CR, LF or NUL (RFC 9110 §5.5), which would end the header
    /// early and start another.
    static func headerValue(_ value: JSON, _ field: String) throws(FieldError) -> String {
        let text = try Decode.string(value, field)
        guard !text.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else {
            throw .invalid(field, expected: "a header value (no CR, LF or NUL)", got: value)
        }
        return text
    }

    package func matches(path: String, query: [(String, String)]) -> Bool {
        self.path == path && self.query.allSatisfy { wanted in query.contains { $0 == wanted } }
    }

    /// `body` is the request's, parsed (nil: none, or not JSON, which no `requestBody` matches).
    package func matches(method: String, path: String, query: [(String, String)], body: JSON?) -> Bool {
        guard matches(path: path, query: query) else { return false }
        if let wanted = self.method, wanted.rawValue != method { return false }
        guard let requestBody else { return true }
        return body == requestBody
    }

    /// The route's response, or 304 when the request's validators say the client's copy is current.
    package func response(toRequestHeaders headers: [(name: String, value: String)]) -> FixtureResponse {
        guard isNotModified(headers) else { return response }
        var notModified = FixtureResponse(status: 304, headers: [], body: [])
        notModified.headers = response.headers.filter { ["etag", "last-modified"].contains($0.0.lowercased()) }
        notModified.delayMilliseconds = response.delayMilliseconds
        // A held route holds its 304 too: a transcript decides when a revalidation is answered.
        notModified.hold = response.hold
        return notModified
    }

    /// RFC 9110 §13.2.2: If-None-Match decides when present (weak comparison, `*` matches any
    /// tag), and If-Modified-Since is then ignored; an unparseable date is ignored too.
    private func isNotModified(_ headers: [(name: String, value: String)]) -> Bool {
        let ifNoneMatch = headers.filter { $0.name == "if-none-match" }.map(\.value)
        if !ifNoneMatch.isEmpty {
            guard let etag else { return false }
            let opaque = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
            return ifNoneMatch.flatMap(FixtureRoute.listedTags).contains { $0 == "*" || $0 == opaque }
        }
        guard let lastModified, let since = headers.first(where: { $0.name == "if-modified-since" }),
            let sinceSeconds = HTTPDate.seconds(since.value)
        else { return false }
        return lastModified.seconds <= sinceSeconds
    }

    /// What an If-None-Match value lists (RFC 9110 §13.1.2): `*`, and entity tags with their
    /// weak prefix dropped (weak comparison). A tag may hold a comma: the list is read tag by
    /// tag, not split at commas; anything else is skipped up to the next comma.
    static func listedTags(_ value: String) -> [String] {
        let bytes = Array(value.utf8)
        let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ",")
        var tags: [String] = []
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), comma:
                index += 1
            case UInt8(ascii: "*"):
                tags.append("*")
                index += 1
            default:
                let start = bytes[index...].starts(with: "W/".utf8) ? index + 2 : index
                if start < bytes.count, bytes[start] == quote, let close = bytes[(start + 1)...].firstIndex(of: quote) {
                    tags.append(String(decoding: bytes[start...close], as: UTF8.self))
                    index = close + 1
                } else {
                    index = bytes[index...].firstIndex(of: comma) ?? bytes.count
                }
            }
        }
        return tags
    }
}
