#if canImport(Glibc)
import Glibc
#endif
import Basics
import JSONKit
import JSONRPC
import Replay
import Testing

/// A response as it came off the socket.
private struct RawResponse {
    var statusLine = ""
    var headers: [(name: String, value: String)] = []
    var body: [UInt8] = []
    /// The connection was reset rather than closed.
    var reset = false
    /// Milliseconds from the request to the end of the response.
    var elapsed = 0

    var status: Int { Int(statusLine.split(separator: " ").dropFirst().first ?? "") ?? 0 }
    func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name.lowercased() }?.value }
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// One request (a GET unless told) over a plain socket: nothing between the test and the
/// bytes the server sends.
private func get(
    _ server: FixtureServer, _ target: String, headers: [(String, String)] = [], method: String = "GET", body: String? = nil
) throws -> RawResponse {
    struct SocketError: Error {
        let step: String
        let code: Int32
    }
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(descriptor) }
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(server.port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { throw SocketError(step: "connect", code: errno) }
    var request = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n"
    for (name, value) in headers { request += "\(name): \(value)\r\n" }
    if let body { request += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
    request += "\r\n" + (body ?? "")
    let start = MonotonicClock.milliseconds()
    guard Array(request.utf8).withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == request.utf8.count else {
        throw SocketError(step: "write", code: errno)
    }
    var received: [UInt8] = []
    var response = RawResponse()
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count > 0 {
            received.append(contentsOf: chunk[..<count])
            continue
        }
        if count < 0, errno == EINTR { continue }
        if count < 0, errno == ECONNRESET {
            response.reset = true
            break
        }
        if count < 0 { throw SocketError(step: "read", code: errno) }
        break
    }
    response.elapsed = MonotonicClock.milliseconds() - start
    let blank = Array("\r\n\r\n".utf8)
    guard let end = (0..<max(0, received.count - 3)).first(where: { received[$0..<$0 + 4].elementsEqual(blank) }) else {
        return response
    }
    let lines = String(decoding: received[..<end], as: UTF8.self).components(separatedByCRLF: ())
    response.statusLine = lines.first ?? ""
    response.headers = lines.dropFirst().compactMap { line in
        guard let colon = line.firstIndex(of: ":") else { return nil }
        return (String(line[..<colon]), String(line[line.index(after: colon)...].drop { $0 == " " }))
    }
    response.body = Array(received[(end + 4)...])
    return response
}

private extension String {
    func components(separatedByCRLF: ()) -> [String] {
        var lines: [String] = []
        var rest = Substring(self)
        while let range = rest.firstRange(of: "\r\n") {
            lines.append(String(rest[..<range.lowerBound]))
            rest = rest[range.upperBound...]
        }
        lines.append(String(rest))
        return lines
    }
}

private func server(_ fixtures: String) throws -> FixtureServer {
    try FixtureServer(fixtures: try JSON.parse(fixtures))
}

@Suite struct FixtureServerTests {
    @Test func answersARouteWithItsBodyAndLength() throws {
        let fixtures = try server(#"[{"path": "/items", "body": {"items": [1, 2]}, "headers": {"X-Test": "yes"}}]"#)
        defer { fixtures.stop() }
        let response = try get(fixtures, "/items")
        #expect(response.statusLine == "HTTP/1.0 200 OK")
        #expect(response.text == #"{"items":[1,2]}"#)
        #expect(response.header("Content-Length") == "15")
        #expect(response.header("Content-Type") == "application/json")
        #expect(response.header("X-Test") == "yes")
        #expect(response.header("Connection") == "close")
    }

    @Test func matchesQueryParametersDecoded() throws {
        let fixtures = try server(
            """
            [{"path": "/s", "query": {"q": "a b", "odd": "%zz"}, "bodyText": "first"},
             {"path": "/s", "bodyText": "fallback"}]
            """)
        defer { fixtures.stop() }
        #expect(try get(fixtures, "/s?q=a%20b&odd=%zz&other=1").text == "first")
        #expect(try get(fixtures, "/s?q=a+b&odd=%25zz").text == "first")
        #expect(try get(fixtures, "/s?q=a").text == "fallback")
        let missing = try get(fixtures, "/nothing?x=1")
        #expect(missing.status == 404)
        #expect(missing.text == #"{"error":"no fixture for /nothing?x=1"}"#)
        #expect(fixtures.takeRequests() == ["/s?q=a%20b&odd=%zz&other=1", "/s?q=a+b&odd=%25zz", "/s?q=a", "/nothing?x=1"])
        #expect(fixtures.takeRequests() == [])
    }

    @Test func aRouteWithTimesStepsAsideWhenUsedUp() throws {
        let fixtures = try server(#"[{"path": "/p", "status": 503, "bodyText": "busy", "times": 2}, {"path": "/p", "bodyText": "ok"}]"#)
        defer { fixtures.stop() }
        #expect(try get(fixtures, "/p").status == 503)
        #expect(try get(fixtures, "/p").status == 503)
        let third = try get(fixtures, "/p")
        #expect(third.status == 200)
        #expect(third.text == "ok")
    }

    @Test func echoesRequestHeadersAndRecordsThem() throws {
        let fixtures = try server("[]")
        defer { fixtures.stop() }
        let response = try get(fixtures, "/_echo/headers", headers: [("X-One", "1"), ("Accept", "text/plain")])
        let echoed = try JSON.parse(response.body)
        #expect(echoed["x-one"]?.stringValue == "1")
        #expect(echoed["accept"]?.stringValue == "text/plain")
        #expect(echoed["host"]?.stringValue == "127.0.0.1:\(fixtures.port)")
        let recorded = fixtures.takeReceivedRequests()
        #expect(recorded.map(\.target) == ["/_echo/headers"])
        #expect(recorded.first?.headersObject == echoed)
    }

    @Test func padsDelaysAndDrips() throws {
        let fixtures = try server(
            """
            [{"path": "/pad", "body": [1], "padToBytes": 5000},
             {"path": "/slow", "bodyText": "late", "delayMilliseconds": 300},
             {"path": "/drip", "bodyText": "0123456789", "dripChunks": 5, "dripMilliseconds": 100}]
            """)
        defer { fixtures.stop() }
        let padded = try get(fixtures, "/pad")
        #expect(padded.body.count == 5000)
        #expect(padded.text.hasPrefix("[1]    "))
        #expect((try? JSON.parse(padded.body)) == [1])
        let slow = try get(fixtures, "/slow")
        #expect(slow.text == "late")
        #expect(slow.elapsed >= 300)
        let drip = try get(fixtures, "/drip")
        #expect(drip.text == "0123456789")
        #expect(drip.header("Content-Length") == "10")
        #expect(drip.elapsed >= 400, "five pieces 100 ms apart took \(drip.elapsed) ms")
    }

    /// Padding is made as it is sent, a piece at a time (issue 27, defect 8: padToBytes used
    /// to be allocated whole), in drips and before a reset too.
    @Test func padsLargeBodiesPieceByPiece() throws {
        let size = 3 * 65536 + 17  // more than three of the pieces the sender writes at once
        let fixtures = try server(
            """
            [{"path": "/big", "body": {"a": 1}, "padToBytes": \(size), "dripChunks": 3},
             {"path": "/cut", "bodyText": "x", "padToBytes": \(size), "reset": true}]
            """)
        defer { fixtures.stop() }
        let big = try get(fixtures, "/big")
        #expect(big.header("Content-Length") == "\(size)")
        #expect(big.body.count == size)
        #expect(big.text.hasPrefix(#"{"a":1}  "#))
        #expect(big.body.dropFirst(7).allSatisfy { $0 == 32 })
        let cut = try get(fixtures, "/cut")
        #expect(cut.header("Content-Length") == "\(size)")
        #expect(cut.body.count <= size / 2, "a reset response sends half its body: \(cut.body.count) of \(size) bytes")
    }

    /// Issue 27, defect 12: a port over 65535 was taken modulo 65536 (70000 served on 4464).
    @Test func refusesAPortOutOfRange() {
        for port in [70000, 65536, -1] {
            #expect(throws: FixtureServer.FormatError.self) { try FixtureServer(fixtures: [], port: port) }
        }
    }

    @Test func resetsAndOmitsContentLength() throws {
        let fixtures = try server(
            """
            [{"path": "/reset", "bodyText": "0123456789", "reset": true},
             {"path": "/open", "bodyText": "until close", "omitContentLength": true}]
            """)
        defer { fixtures.stop() }
        let reset = try get(fixtures, "/reset")
        #expect(reset.reset || reset.body.count < 10, "a reset response must not arrive whole: \(reset)")
        let open = try get(fixtures, "/open")
        #expect(open.header("Content-Length") == nil)
        #expect(open.header("Transfer-Encoding") == nil)
        #expect(open.text == "until close")
    }

    @Test func anETagAnswersIfNoneMatchWith304() throws {
        let fixtures = try server(#"[{"path": "/e", "etag": "v1", "body": {"a": 1}}]"#)
        defer { fixtures.stop() }
        let first = try get(fixtures, "/e")
        #expect(first.status == 200)
        #expect(first.header("ETag") == "\"v1\"")
        for matching in ["\"v1\"", "W/\"v1\"", "\"v0\", \"v1\"", "*"] {
            let again = try get(fixtures, "/e", headers: [("If-None-Match", matching)])
            #expect(again.status == 304, "If-None-Match: \(matching)")
            #expect(again.body.isEmpty)
            #expect(again.header("ETag") == "\"v1\"")
        }
        let stale = try get(fixtures, "/e", headers: [("If-None-Match", "\"v0\"")])
        #expect(stale.status == 200)
        #expect(stale.text == #"{"a":1}"#)
    }

    /// An entity tag may hold a comma (RFC 9110 §8.8.3): If-None-Match is read tag by tag, not
    /// split at commas (seen writing fuzz-transcript's check of 304s); a malformed tag is refused.
    @Test func anETagHoldingACommaIsMatchedWhole() throws {
        let fixtures = try server(#"[{"path": "/e", "etag": "\"a,b\"", "bodyText": "x"}]"#)
        defer { fixtures.stop() }
        #expect(try get(fixtures, "/e", headers: [("If-None-Match", "\"a,b\"")]).status == 304)
        #expect(try get(fixtures, "/e", headers: [("If-None-Match", "W/\"x\", W/\"a,b\"")]).status == 304)
        #expect(try get(fixtures, "/e", headers: [("If-None-Match", "\"a\", \"b\"")]).status == 200)
        #expect(throws: FixtureServer.FormatError.self) { try server(#"[{"path": "/e", "etag": "\"open"}]"#) }
        #expect(throws: FixtureServer.FormatError.self) { try server(#"[{"path": "/e", "etag": "two words"}]"#) }
    }

    @Test func lastModifiedAnswersIfModifiedSinceWith304() throws {
        let fixtures = try server(#"[{"path": "/m", "lastModified": "Wed, 21 Oct 2015 07:28:00 GMT", "etag": "\"t\"", "bodyText": "x"}]"#)
        defer { fixtures.stop() }
        #expect(try get(fixtures, "/m").header("Last-Modified") == "Wed, 21 Oct 2015 07:28:00 GMT")
        #expect(try get(fixtures, "/m", headers: [("If-Modified-Since", "Wed, 21 Oct 2015 07:28:00 GMT")]).status == 304)
        #expect(try get(fixtures, "/m", headers: [("If-Modified-Since", "Thu, 22 Oct 2015 00:00:00 GMT")]).status == 304)
        #expect(try get(fixtures, "/m", headers: [("If-Modified-Since", "Tue, 20 Oct 2015 07:28:00 GMT")]).status == 200)
        #expect(try get(fixtures, "/m", headers: [("If-Modified-Since", "yesterday")]).status == 200)
        // If-None-Match decides alone when present.
        #expect(
            try get(
                fixtures, "/m",
                headers: [
                    ("If-None-Match", "\"other\""),
                    ("If-Modified-Since", "Thu, 22 Oct 2015 00:00:00 GMT"),
                ]
            ).status == 200)
        #expect(throws: FixtureServer.FormatError.self) { try server(#"[{"path": "/m", "lastModified": "2015-10-21"}]"#) }
    }

    @Test func redirects() throws {
        let fixtures = try server(
            """
            [{"path": "/old", "redirectTo": "/new"},
             {"path": "/moved", "redirectTo": "http://example.invalid/x", "status": 301},
             {"path": "/by-hand", "status": 307, "headers": {"Location": "/new"}}]
            """)
        defer { fixtures.stop() }
        let found = try get(fixtures, "/old")
        #expect(found.status == 302)
        #expect(found.header("Location") == "/new")
        let moved = try get(fixtures, "/moved")
        #expect(moved.status == 301)
        #expect(moved.header("Location") == "http://example.invalid/x")
        let byHand = try get(fixtures, "/by-hand")
        #expect(byHand.status == 307)
        #expect(byHand.header("Location") == "/new")
    }

    @Test func matchesMethodAndBodyAsJSONValues() throws {
        let fixtures = try server(
            """
            [{"path": "/graphql", "method": "POST", "requestBody": {"query": "q", "variables": {"first": 2, "after": "c1"}}, "bodyText": "second page"},
             {"path": "/graphql", "method": "POST", "requestBody": {"query": "q", "variables": {"first": 2}}, "bodyText": "first page"},
             {"path": "/any", "bodyText": "any method, any body"},
             {"path": "/get", "method": "GET", "bodyText": "got"}]
            """)
        defer { fixtures.stop() }
        // Member order and spacing differ from the route's: the bodies are compared as values.
        let second = try get(fixtures, "/graphql", method: "POST", body: #"{"variables": {"after": "c1", "first": 2}, "query": "q"}"#)
        #expect(second.text == "second page")
        #expect(try get(fixtures, "/graphql", method: "POST", body: #"{ "variables":{"first":2},"query":"q" }"#).text == "first page")
        #expect(try get(fixtures, "/any", method: "POST", body: "[1]").text == "any method, any body")
        #expect(try get(fixtures, "/get").text == "got")
        #expect(try get(fixtures, "/get", method: "POST", body: "{}").status == 404)
        // An integer never equals a real (JSON's structural equality), nor a string its digits.
        let real = try get(fixtures, "/graphql", method: "POST", body: #"{"query": "q", "variables": {"first": 2.0}}"#)
        #expect(real.status == 404)
        #expect(real.text == #"{"error":"no fixture for POST /graphql with body {\"query\": \"q\", \"variables\": {\"first\": 2.0}}"}"#)
        #expect(try get(fixtures, "/graphql", method: "POST").text == #"{"error":"no fixture for POST /graphql with no body"}"#)
        let received = fixtures.takeReceivedRequests()
        #expect(received.map(\.method) == ["POST", "POST", "POST", "GET", "POST", "POST", "POST"])
        #expect(String(decoding: received[0].body, as: UTF8.self) == #"{"variables": {"after": "c1", "first": 2}, "query": "q"}"#)
    }

    @Test func aLongUnmatchedBodyIsShortenedInTheAnswer() throws {
        let fixtures = try server("[]")
        defer { fixtures.stop() }
        let body = #"{"query": ""# + String(repeating: "x", count: 500) + #""}"#
        let answer = try JSON.parse(try get(fixtures, "/graphql", method: "POST", body: body).body)
        let words = try #require(answer["error"]?.stringValue)
        #expect(words.hasPrefix(#"no fixture for POST /graphql with body {"query": "xxx"#))
        #expect(words.hasSuffix("... (513 bytes)"))
        #expect(words.count < 300)
    }

    @Test func refusesMalformedRoutes() {
        #expect(throws: FixtureServer.FormatError.self) { try server(#"[{"path": "items"}]"#) }
        #expect(throws: FixtureServer.FormatError.self) { try server(#"[{"path": "/s", "status": -1}]"#) }
        #expect(throws: FixtureServer.FormatError.self) { try server(#"[{"path": "/d", "dripChunks": 9223372036854775807}]"#) }
        #expect(throws: FixtureServer.FormatError.self) { try server(#"[{"path": "/e", "etag": 1}]"#) }
        #expect(throws: FixtureServer.FormatError.self) { try server(#"{"path": "/e"}"#) }
    }
}
