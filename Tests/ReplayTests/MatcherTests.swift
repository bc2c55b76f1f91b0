import JSONKit
import Replay
import Testing

private func mismatch(_ pattern: String, _ actual: String?) throws -> String? {
    Matcher.mismatch(expected: try JSON.parse(pattern), actual: try actual.map { try JSON.parse($0) })
}

/// The matcher decides every transcript's verdict: each rule is checked both ways, and a
/// mismatch must say where it is.
@Suite struct MatcherTests {
    @Test func literalValuesMatchOnlyThemselves() throws {
        #expect(try mismatch(#"{"a": 1, "b": [true, null, "x"]}"#, #"{"b": [true, null, "x"], "a": 1}"#) == nil)
        #expect(try mismatch("1", "2") == "at $: expected 1, got 2")
        #expect(try mismatch(#""x""#, #""y""#) == #"at $: expected "x", got "y""#)
        #expect(try mismatch("null", "false") != nil)
        #expect(try mismatch("true", "1") != nil)
    }

    @Test func anIntegerNeverMatchesAReal() throws {
        #expect(try mismatch("0", "0.0") == "at $: expected 0, got 0.0")
        #expect(try mismatch("0.0", "0") == "at $: expected 0.0, got 0")
        #expect(try mismatch("1.5", "1.5") == nil)
    }

    @Test func objectsNeedTheSameMembers() throws {
        #expect(try mismatch(#"{"a": 1}"#, #"{"a": 1, "b": 2}"#) == "at $.b: unexpected member 2")
        #expect(try mismatch(#"{"a": 1, "b": 2}"#, #"{"a": 1}"#) == "at $.b: expected 2, got nothing")
        #expect(try mismatch(#"{"a": {"b": {"c": 1}}}"#, #"{"a": {"b": {"c": 2}}}"#) == "at $.a.b.c: expected 1, got 2")
        #expect(try mismatch(#"{"a": 1}"#, "[1]") == #"at $: expected {"a":1}, got [1]"#)
    }

    @Test func partialObjectsNeedOnlyTheListedMembers() throws {
        #expect(try mismatch(#"{"$partial": true, "a": 1}"#, #"{"a": 1, "b": 2}"#) == nil)
        #expect(try mismatch(#"{"$partial": true, "a": 1}"#, #"{"b": 2}"#) == "at $.a: expected 1, got nothing")
        #expect(try mismatch(#"{"$partial": true, "a": 1}"#, #"{"a": 3, "b": 2}"#) == "at $.a: expected 1, got 3")
        #expect(try mismatch(#"{"$partial": false, "a": 1}"#, #"{"a": 1, "b": 2}"#) == "at $.b: unexpected member 2")
        // Partial applies to its own object, not to the objects inside it.
        #expect(try mismatch(#"{"$partial": true, "a": {"x": 1}}"#, #"{"a": {"x": 1, "y": 2}}"#) == "at $.a.y: unexpected member 2")
    }

    @Test func arraysMatchInOrderAndLength() throws {
        #expect(try mismatch("[1, 2]", "[1, 2]") == nil)
        #expect(try mismatch("[1, 2]", "[2, 1]") == "at $[0]: expected 1, got 2")
        #expect(try mismatch("[1, 2]", "[1, 2, 3]") == "at $: expected an array of 2 elements, got 3: [1,2,3]")
        #expect(try mismatch("[]", "{}") == "at $: expected [], got {}")
        #expect(try mismatch(#"[{"a": "$string"}]"#, #"[{"a": 1}]"#) == "at $[0].a: expected $string, got 1")
    }

    @Test(arguments: [
        ("$any", ["1", "\"s\"", "null", "[]", "{}", "true", "1.5"], [String]()),
        ("$string", ["\"\"", "\"s\""], ["1", "null", "[]"]),
        ("$number", ["1", "1.5", "-3"], ["\"1\"", "null", "true"]),
        ("$integer", ["1", "-3", "0"], ["1.5", "0.0", "\"1\""]),
        ("$boolean", ["true", "false"], ["0", "null", "\"true\""]),
        ("$object", ["{}", "{\"a\": 1}"], ["[]", "null"]),
        ("$array", ["[]", "[1]"], ["{}", "\"[]\""]),
    ])
    func placeholdersMatchTheirKindOnly(placeholder: String, matching: [String], notMatching: [String]) throws {
        for text in matching {
            #expect(try mismatch("\"\(placeholder)\"", text) == nil, "\(placeholder) should match \(text)")
        }
        for text in notMatching {
            #expect(try mismatch("\"\(placeholder)\"", text) == "at $: expected \(placeholder), got \(try JSON.parse(text))")
        }
    }

    @Test func aPlaceholderStillNeedsTheMember() throws {
        #expect(try mismatch(#"{"a": "$any"}"#, "{}") == "at $.a: expected $any, got nothing")
        #expect(try mismatch("\"$any\"", nil) == "at $: expected $any, got nothing")
    }

    @Test func absentMeansTheMemberIsNotThere() throws {
        #expect(try mismatch(#"{"a": 1, "b": "$absent"}"#, #"{"a": 1}"#) == nil)
        #expect(try mismatch(#"{"a": 1, "b": "$absent"}"#, #"{"a": 1, "b": null}"#) == "at $.b: expected no member, got null")
        #expect(try mismatch(#"{"$partial": true, "b": "$absent"}"#, #"{"a": 1}"#) == nil)
    }

    @Test func containsLooksInsideStrings() throws {
        #expect(try mismatch(#"{"$contains": "needle"}"#, #""haystack with a needle in it""#) == nil)
        #expect(
            try mismatch(#"{"$contains": "needle"}"#, #""haystack""#) == #"at $: expected a string containing "needle", got "haystack""#)
        #expect(try mismatch(#"{"$contains": "1"}"#, "1") == #"at $: expected a string containing "1", got 1"#)
        // With another member it is an ordinary object pattern.
        #expect(try mismatch(#"{"$contains": "x", "b": 1}"#, #"{"$contains": "x", "b": 1}"#) == nil)
    }

    @Test func doubleDollarIsALiteralDollarString() throws {
        #expect(try mismatch("\"$$any\"", "\"$any\"") == nil)
        #expect(try mismatch("\"$$any\"", "1") == #"at $: expected "$$any", got 1"#)
        #expect(try mismatch("\"$$any\"", "\"$$any\"") != nil)
    }

    @Test func anUnknownPlaceholderIsAnErrorInTheTranscript() throws {
        let problem = try mismatch("\"$strnig\"", "\"s\"")
        #expect(problem?.contains("unknown placeholder $strnig") == true)
    }

    @Test func theReportedPathStartsWhereTheCallerSays() throws {
        let problem = Matcher.mismatch(expected: try JSON.parse(#"{"a": 1}"#), actual: try JSON.parse(#"{"a": 2}"#), path: "request[3]")
        #expect(problem == "at request[3].a: expected 1, got 2")
    }
}
