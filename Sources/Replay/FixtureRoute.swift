import CSystemShims
import JSONKit

/// What a route sends, and how.
struct FixtureResponse: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]
    var delayMilliseconds = 0
    /// Send the body in this many pieces, `dripMilliseconds` apart.
    var dripChunks = 1
    var dripMilliseconds = 0
    /// Send the head and half the body, then reset the connection.
    var reset = false
    /// Send no Content-Length: the body ends when the connection closes.
    var omitContentLength = false
    /// Sent only once a `release` step names this (a recorded session's exchange).
    var hold: String? = nil
}

/// One entry of a fixture table (Protocol.md, "Fixtures").
struct FixtureRoute: Sendable {
    struct FormatError: Error, CustomStringConvertible { let description: String }

    let path: String
    /// Query parameters that must be present with these values (others may be present too).
    let query: [(String, String)]
    /// Matches only this many requests, then lets later routes answer.
    let times: Int?
    /// Entity tag sent as `ETag`; a request whose `If-None-Match` names it gets 304.
    let etag: String?
    /// Sent as `Last-Modified`; a request whose `If-Modified-Since` is no earlier gets 304.
    let lastModified: (text: String, seconds: Int)?
    let response: FixtureResponse

    init(_ json: JSON) throws(FormatError) {
        guard json.isObject, let path = json["path"]?.stringValue, path.hasPrefix("/") else {
            throw FormatError(description: "a route needs \"path\", a string starting with /")
        }
        self.path = path
        var query: [(String, String)] = []
        if let given = json["query"] {
            guard let members = given.objectMembers else { throw FormatError(description: "\"query\" must be an object") }
            for (name, value) in members { query.append((name, value.stringValue ?? value.description)) }
        }
        self.query = query
        times = json["times"]?.integerValue
        var headers: [(String, String)] = []
        for (name, value) in json["headers"]?.objectMembers ?? [] { headers.append((name, value.stringValue ?? value.description)) }
        var body: [UInt8] = []
        if let text = json["bodyText"]?.stringValue {
            body = Array(text.utf8)
        } else if let value = json["body"] {
            body = value.encoded()
            if !headers.contains(where: { $0.0.lowercased() == "content-type" }) { headers.append(("Content-Type", "application/json")) }
        }
        if let padding = json["padToBytes"]?.integerValue, body.count < padding {
            // A large body that is still JSON: the value, then spaces.
            body += [UInt8](repeating: 32, count: padding - body.count)
        }
        if let given = json["etag"] {
            guard let tag = given.stringValue, !tag.isEmpty else { throw FormatError(description: "\"etag\" must be a non-empty string") }
            // An entity tag is quoted on the wire (RFC 9110 §8.8.3); a bare word is quoted for you.
            let quoted = tag.hasPrefix("\"") || tag.hasPrefix("W/\"") ? tag : "\"\(tag)\""
            etag = quoted
            headers.append(("ETag", quoted))
        } else {
            etag = nil
        }
        if let given = json["lastModified"] {
            guard let text = given.stringValue, let seconds = HTTPDate.seconds(text) else {
                throw FormatError(description: "\"lastModified\" must be an HTTP date such as \"Wed, 21 Oct 2015 07:28:00 GMT\"")
            }
            lastModified = (text, seconds)
            headers.append(("Last-Modified", text))
        } else {
            lastModified = nil
        }
        var status = json["status"]?.integerValue ?? 200
        if let given = json["redirectTo"] {
            guard let location = given.stringValue, !location.isEmpty else {
                throw FormatError(description: "\"redirectTo\" must be a path or a URL")
            }
            status = json["status"]?.integerValue ?? 302
            headers.append(("Location", location))
        }
        response = FixtureResponse(status: status, headers: headers, body: body,
                                   delayMilliseconds: json["delayMilliseconds"]?.integerValue ?? 0,
                                   dripChunks: max(1, json["dripChunks"]?.integerValue ?? 1),
                                   dripMilliseconds: json["dripMilliseconds"]?.integerValue ?? 0,
                                   reset: json["reset"]?.boolValue ?? false,
                                   omitContentLength: json["omitContentLength"]?.boolValue ?? false,
                                   hold: json["hold"]?.stringValue)
    }

    func matches(path: String, query: [(String, String)]) -> Bool {
        self.path == path && self.query.allSatisfy { wanted in query.contains { $0 == wanted } }
    }

    /// The route's response, or 304 when the request's validators say the client's copy is current.
    func response(toRequestHeaders headers: [(name: String, value: String)]) -> FixtureResponse {
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
            let listed = ifNoneMatch.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters() }
            return listed.contains { $0 == "*" || FixtureRoute.opaqueTag($0) == FixtureRoute.opaqueTag(etag) }
        }
        guard let lastModified, let since = headers.first(where: { $0.name == "if-modified-since" }),
              let sinceSeconds = HTTPDate.seconds(since.value) else { return false }
        return lastModified.seconds <= sinceSeconds
    }

    private static func opaqueTag(_ tag: Substring) -> Substring { tag.hasPrefix("W/") ? tag.dropFirst(2) : tag }
    private static func opaqueTag(_ tag: String) -> Substring { opaqueTag(Substring(tag)) }
}

/// IMF-fixdate (RFC 9110 §5.6.7), the one HTTP date format servers send.
enum HTTPDate {
    /// Seconds since 1970 for "Sun, 06 Nov 1994 08:49:37 GMT", or nil.
    static func seconds(_ text: String) -> Int? {
        var seconds: Int64 = 0
        return cshims_parse_http_date(text, &seconds) == 1 ? Int(seconds) : nil
    }
}

extension Substring {
    func trimmingCharacters() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result.removeFirst() }
        while let last = result.last, last == " " || last == "\t" { result.removeLast() }
        return result
    }
}
