import Foundation
import JSONKit
import Replay
import Testing
import TranscriptFormat

/// The transcript's description of why `text` is refused, or nil when it decodes.
private func refusal(_ text: String) throws -> String? {
    let json = try JSON.parse(text)
    do {
        _ = try Transcript(parsing: json)
        return nil
    } catch {
        return error.description
    }
}

private func steps(_ steps: String) -> String { #"{"steps": [\#(steps)]}"# }
private func route(_ members: String) -> String { #"{"fixtures": [{"path": "/items", \#(members)}], "steps": []}"# }

/// Transcripts and fixture files are input like the wire (issue 27, defects 8 and 9): every
/// number is range-checked where it is decoded, and a refusal names the field and the range.
@Suite struct TranscriptDecodingTests {
    @Test func anExitStatusIsAByte() throws {
        // Both used to trap converting to Int32.
        #expect(
            try refusal(steps(#"{"expectExit": 1099511627776}"#))
                == #""steps[0].expectExit" must be an integer in 0...255, got 1099511627776"#)
        #expect(
            try refusal(steps(#"{"comment": "x"}, {"expectExit": -9223372036854775808}"#))
                == #""steps[1].expectExit" must be an integer in 0...255, got -9223372036854775808"#)
        #expect(try refusal(steps(#"{"expectExit": 256}"#)) == #""steps[0].expectExit" must be an integer in 0...255, got 256"#)
        #expect(try refusal(steps(#"{"expectExit": 1.0}"#)) == #""steps[0].expectExit" must be an integer in 0...255, got a number"#)
        let transcript = try Transcript(parsing: JSON.parse(steps(#"{"expectExit": 255}"#)))
        guard case .expectExit(255) = transcript.steps[0] else {
            Issue.record("decoded as \(transcript.steps[0])")
            return
        }
    }

    @Test func aRawRepeatIsBoundedByTheBytesItWrites() throws {
        // 2^62 used to overflow multiplying by the text's length; 2^63-1 to fail allocating.
        #expect(
            try refusal(steps(#"{"sendRaw": "ab", "repeat": 4611686018427387904}"#))
                == #""steps[0].repeat" must be an integer in 1...134217728, got 4611686018427387904 ("sendRaw" writes at most 268435456 bytes in all; its text is 2 bytes)"#
        )
        #expect(
            try refusal(steps(#"{"sendRaw": "x", "repeat": 9223372036854775807}"#))?
                .hasPrefix(#""steps[0].repeat" must be an integer in 1...268435456, got 9223372036854775807"#) == true)
        #expect(
            try refusal(steps(#"{"sendRaw": "x", "repeat": 0}"#))?.hasPrefix(
                #""steps[0].repeat" must be an integer in 1...268435456, got 0"#) == true)
        #expect(
            try refusal(steps(#"{"sendRaw": "x", "repeat": "3"}"#))?.hasPrefix(
                #""steps[0].repeat" must be an integer in 1...268435456, got a string"#) == true)
        // The largest repeat is kept as text and count: nothing is multiplied out in memory.
        let transcript = try Transcript(parsing: JSON.parse(steps(#"{"sendRaw": "ab", "repeat": 134217728}"#)))
        guard case .sendRaw(let bytes, let times) = transcript.steps[0] else {
            Issue.record("decoded as \(transcript.steps[0])")
            return
        }
        #expect(bytes == Array("ab".utf8))
        #expect(times == 134_217_728)
    }

    @Test func allTheRawStepsTogetherAreBounded() throws {
        let step = #"{"sendRaw": "x", "repeat": 268435456}"#
        #expect(try refusal(steps(Array(repeating: step, count: 4).joined(separator: ","))) == nil)
        #expect(
            try refusal(steps(Array(repeating: step, count: 5).joined(separator: ",")))
                == #""steps[4].sendRaw": the transcript's sendRaw steps write more than 1073741824 bytes in all (1342177280 up to this one)"#
        )
    }

    @Test func theTimeoutIsBounded() throws {
        #expect(
            try refusal(#"{"timeoutMilliseconds": 0, "steps": []}"#) == #""timeoutMilliseconds" must be an integer in 1...172800000, got 0"#
        )
        #expect(
            try refusal(#"{"timeoutMilliseconds": 9223372036854775807, "steps": []}"#)
                == #""timeoutMilliseconds" must be an integer in 1...172800000, got 9223372036854775807"#)
        #expect(try Transcript(parsing: JSON.parse(#"{"timeoutMilliseconds": 172800000, "steps": []}"#)).timeoutMilliseconds == 172_800_000)
    }

    @Test func aStepIsOneKnownKindWithOnlyItsOwnMembers() throws {
        #expect(try refusal(steps(#"{"sned": {}}"#)) == #"unknown member "steps[0].sned"; did you mean "steps[0].send"?"#)
        #expect(
            try refusal(steps(#"{"sendRaw": "x", "repaet": 2}"#)) == #"unknown member "steps[0].repaet"; did you mean "steps[0].repeat"?"#)
        #expect(try refusal(steps(#"{"expect": {}, "repeat": 2}"#))?.hasPrefix(#"unknown member "steps[0].repeat""#) == true)
        #expect(try refusal(steps(#"{"send": 1, "expect": 2}"#)) == #""steps[0]" must be a step of one kind, got "send" and "expect""#)
        #expect(
            try refusal(steps("{}"))
                == #"missing "steps[0]": expected a step: an object with one of comment, send, sendBody, sendRaw, expect, expectUnordered, expectRequests, expectRequestHeaders, requested, release, closeInput, expectExit, restart"#
        )
        #expect(try refusal(steps("[]")) == #""steps[0]" must be a step, an object such as {"send": MESSAGE}, got an array"#)
        #expect(try refusal(steps(#"{"closeInput": false}"#)) == #""steps[0].closeInput" must be true, got false"#)
        #expect(try refusal(steps(#"{"expectRequests": ["/a", 2]}"#)) == #""steps[0].expectRequests[1]" must be a string, got an integer"#)
        #expect(
            try refusal(steps(#"{"expectRequestHeaders": [{"path": "/a"}]}"#))
                == #"missing "steps[0].expectRequestHeaders[0].headers": expected an object of header patterns"#)
    }

    @Test func theTranscriptHasOnlyKnownMembers() throws {
        #expect(
            try refusal(#"{"timeoutMiliseconds": 100, "steps": []}"#)
                == #"unknown member "timeoutMiliseconds"; did you mean "timeoutMilliseconds"?"#)
        #expect(try refusal(#"{"description": "no steps"}"#) == #"missing "steps": expected an array of steps"#)
        #expect(
            try refusal(#"{"daemonArguments": ["--no-cache", 1], "steps": []}"#)
                == #""daemonArguments[1]" must be a string, got an integer"#)
        #expect(try refusal("[]") == "a transcript is a JSON object, got an array")
        // Tests/TranscriptsThatFail say why they fail in a member of their own.
        #expect(try refusal(#"{"expectedFailure": "text", "steps": []}"#) == nil)
    }

    @Test func everyNumberOfARouteIsRangeChecked() throws {
        // status -1 made NIOHTTP1 trap, dripChunks 2^63-1 overflowed, padToBytes 2^40 allocated a terabyte.
        #expect(try refusal(route(#""status": -1"#)) == #""fixtures[0].status" must be an integer in 100...599, got -1"#)
        #expect(try refusal(route(#""status": 600"#)) == #""fixtures[0].status" must be an integer in 100...599, got 600"#)
        #expect(
            try refusal(route(#""dripChunks": 9223372036854775807"#))
                == #""fixtures[0].dripChunks" must be an integer in 1...100000, got 9223372036854775807"#)
        #expect(try refusal(route(#""dripChunks": 0"#)) == #""fixtures[0].dripChunks" must be an integer in 1...100000, got 0"#)
        #expect(
            try refusal(route(#""padToBytes": 1099511627776"#))
                == #""fixtures[0].padToBytes" must be an integer in 0...1073741825, got 1099511627776"#)
        #expect(try refusal(route(#""padToBytes": -1"#)) == #""fixtures[0].padToBytes" must be an integer in 0...1073741825, got -1"#)
        #expect(
            try refusal(route(#""delayMilliseconds": 9223372036854775807"#))
                == #""fixtures[0].delayMilliseconds" must be an integer in 0...86400000, got 9223372036854775807"#)
        #expect(
            try refusal(route(#""dripMilliseconds": -5"#)) == #""fixtures[0].dripMilliseconds" must be an integer in 0...60000, got -5"#)
        #expect(try refusal(route(#""times": 0"#)) == #""fixtures[0].times" must be a positive integer, got 0"#)
        #expect(try refusal(route(#""reset": 1"#)) == #""fixtures[0].reset" must be a boolean, got an integer"#)
    }

    @Test func aRoutesMethodAndRequestBodyAreChecked() throws {
        #expect(
            try refusal(route(#""method": "HEAD""#))
                == #""fixtures[0].method" must be one of "GET", "POST", "PUT", "PATCH", "DELETE", got "HEAD""#)
        #expect(
            try refusal(route(#""method": 1"#)) == #""fixtures[0].method" must be one of "GET", "POST", "PUT", "PATCH", "DELETE", got 1"#)
        // An action's methods, with or without a body to match.
        #expect(try refusal(route(#""method": "PATCH", "requestBody": {"title": "x"}"#)) == nil)
        #expect(try refusal(route(#""method": "DELETE", "status": 204"#)) == nil)
        #expect(
            try refusal(route(#""method": "GET", "requestBody": {}"#))
                == #""fixtures[0]" has "requestBody" with "method": "GET": the daemon sends no body with GET"#)
        #expect(try refusal(route(#""method": "POST", "requestBody": {"query": "q"}, "body": {"data": null}"#)) == nil)
        #expect(try refusal(route(#""requestBody": [1, {"a": null}]"#)) == nil)
        let large = #""requestBody": ""# + String(repeating: "x", count: TranscriptLimits.maximumRequestBodyBytes) + #"""#
        #expect(
            try refusal(route(large))
                == #""fixtures[0].requestBody" must be at most 67108864 bytes as compact JSON, got 67108866"#)
    }

    @Test func aRouteSendsOnlyWellFormedHeaders() throws {
        #expect(
            try refusal(route(#""headers": {"X Y": "1"}"#))
                == #""fixtures[0].headers.X Y": "X Y" is not a header name (letters, digits and !#$%&'*+-.^_`|~)"#)
        #expect(
            try refusal(route(#""headers": {"X": "1\r\nSet-Cookie: a=b"}"#))?
                .hasPrefix(#""fixtures[0].headers.X" must be a header value (no CR, LF or NUL), got "1"#) == true)
        // strptime stops at a NUL: the date parsed, and the rest would have been sent.
        #expect(
            try refusal(route(#""lastModified": "Wed, 21 Oct 2015 07:28:00 GMT\u0000\r\nX: 1""#))?
                .hasPrefix(#""fixtures[0].lastModified" must be a header value (no CR, LF or NUL)"#) == true)
        #expect(try refusal(route(#""redirectTo": "/a\nb""#))?.hasPrefix(#""fixtures[0].redirectTo" must be a header value"#) == true)
        #expect(
            try refusal(route(#""body": 1, "bodyText": "1""#)) == #""fixtures[0]" has both "body" and "bodyText": a route sends one body"#)
        #expect(try refusal(route(#""stauts": 500"#)) == #"unknown member "fixtures[0].stauts"; did you mean "fixtures[0].status"?"#)
        #expect(
            try refusal(#"{"fixtures": [{"path": "items"}], "steps": []}"#)
                == #""fixtures[0].path" must be a path starting with /, got "items""#)
    }

    /// Every step kind and route member at its bound (the fuzz-transcript seed of that name).
    @Test func valuesAtTheBoundsAreAccepted() throws {
        let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Corpus/transcript/every-member").path
        let transcript = try Transcript(parsing: JSON.parse(readFileBytes(seed)))
        #expect(
            transcript.steps.map(\.label) == [
                "comment", "send", "sendBody", "sendRaw", "expect", "expectUnordered", "expectRequests",
                "expectRequestHeaders", "requested", "release", "closeInput", "expectExit", "restart",
            ])
        #expect(transcript.timeoutMilliseconds == 172_800_000)
        let routes = try #require(transcript.fixtures)
        #expect(routes.map(\.response.status) == [599, 200, 307, 200, 200])
        #expect(routes[0].response.length == 1_073_741_825)
        #expect(routes[0].response.dripChunks == 100_000)
        #expect(routes[1].etag == "W/\"a,b\"")
        #expect(routes[2].etag == "\"v1\"")
        #expect(routes.map { $0.method?.rawValue } == [nil, nil, nil, "POST", "GET"])
        #expect(routes[3].requestBody == ["variables": ["after": "c1", "first": 2], "query": "q"])
    }

    @Test func aFileLargerThanTheLimitIsNotReadWhole() throws {
        let directory = try #require(TemporaryDirectory(prefix: "datasourced-limit"))
        defer { directory.remove() }
        let path = directory.path + "/t.json"
        try writeFileBytes(path, Array(repeating: 32, count: 100_000))
        #expect(try readFileBytes(path, atMost: 100_000).count == 100_000)
        #expect(throws: (any Error).self) { try readFileBytes(path, atMost: 99_999) }
    }

    @Test func aPaddedRouteHoldsOnlyItsBody() throws {
        let routes = try FixtureRoute.routes(parsing: JSON.parse(#"[{"path": "/big", "body": [1], "padToBytes": 1073741825}]"#))
        // The spaces are made as they are sent (FixtureServerTests sends them), not held.
        #expect(routes.first?.response.body == Array("[1]".utf8))
        #expect(routes.first?.response.paddingBytes == 1_073_741_822)
        #expect(routes.first?.response.length == 1_073_741_825)
    }
}
