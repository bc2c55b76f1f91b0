@testable import DataSources
import Testing

@Suite struct LinkHeaderTests {
    @Test func readsGitHubsHeader() {
        let value =
            #"<https://api.github.com/repositories/1/issues?page=2>; rel="next", <https://api.github.com/repositories/1/issues?page=5>; rel="last""#
        #expect(LinkHeader.target("next", in: [value]) == "https://api.github.com/repositories/1/issues?page=2")
        #expect(LinkHeader.target("last", in: [value]) == "https://api.github.com/repositories/1/issues?page=5")
        #expect(LinkHeader.target("prev", in: [value]) == nil)
    }

    @Test func severalRelationTypesQuotedParametersAndSeveralHeaders() {
        let links = LinkHeader.parse([#"</a>; rel="prev first"; title="a, b; c", </b>;rel=next"#, #"</c>; rel="NEXT""#])
        #expect(links.map(\.target) == ["/a", "/b", "/c"])
        #expect(links[0].relations == ["prev", "first"])
        #expect(links[0].parameters["title"] == "a, b; c", "a quoted comma or semicolon is part of the value")
        #expect(links[1].relations == ["next"], "an unquoted token value")
        #expect(LinkHeader.target("next", in: [#"</a>; rel="prev first"; title="a, b; c", </b>;rel=next"#, #"</c>; rel="NEXT""#]) == "/b")
        #expect(LinkHeader.target("next", in: [#"</c>; rel="NEXT""#]) == "/c", "relation types compare case-insensitively")
    }

    @Test func escapesAndTheFirstRelWin() {
        let links = LinkHeader.parse([#"</x>; title="say \"hi\""; rel="next"; rel="prev""#])
        #expect(links.first?.parameters["title"] == #"say "hi""#)
        #expect(links.first?.relations == ["next"], "RFC 8288: occurrences after the first rel are ignored")
    }

    @Test func malformedPartsAreSkippedNotTrusted() {
        #expect(LinkHeader.parse(["garbage, </ok>; rel=next"]).map(\.target) == ["/ok"])
        #expect(LinkHeader.parse(["<unterminated; rel=next"]).isEmpty)
        #expect(LinkHeader.parse([""]).isEmpty)
        #expect(LinkHeader.target("next", in: ["</no-rel>"]) == nil)
    }

    /// Pathological values: the links found, and the work, counted as bytes read, linear in the
    /// value's length (no timing: speed is the benchmarks'). `<a,` repeated was quadratic: each
    /// `<` read the rest of the value looking for its `>`.
    @Test func pathologicalValuesCostLinearWork() throws {
        let link = { (target: String, relations: [String], parameters: [String: String]) in
            LinkHeader.Link(target: target, relations: relations, parameters: parameters)
        }
        // Each shape, repeated n times, and the links expected.
        let shapes: [(String, (Int) -> [LinkHeader.Link])] = [
            ("<a,", { _ in [] }),
            (",<", { _ in [] }),
            ("<a>;x=\"", { n in Array(repeating: link("a", [], ["x": "<a>;x="]), count: n / 2) }),  // n even
            (";", { _ in [] }),
            (";;<a>", { _ in [] }),
            ("\"", { _ in [] }),
            ("<a>;", { _ in [link("a", [], ["<a>": ""])] }),
            ("<a>;;;;;;;;;;;;", { _ in [link("a", [], ["<a>": ""])] }),
            ("<>;=,", { n in Array(repeating: link("", [], [:]), count: n) }),
            ("<a>; rel=next, ", { n in Array(repeating: link("a", ["next"], [:]), count: n) }),
        ]
        for (shape, expected) in shapes {
            // A few kilobytes first: before the fix, the megabytes would have taken minutes.
            for bytes in [4096, 1 << 20] {
                let n = bytes / shape.utf8.count / 2 * 2
                var visits = 0, doubledVisits = 0
                let links = LinkHeader.parse([String(repeating: shape, count: n)], visits: &visits)
                let doubled = LinkHeader.parse([String(repeating: shape, count: 2 * n)], visits: &doubledVisits)
                try #require(
                    doubledVisits <= 2 * visits + 16 && visits <= 8 * n * shape.utf8.count,
                    "\(shape) × \(n): \(visits) bytes read, × \(2 * n): \(doubledVisits)")
                #expect(links == expected(n), "\(shape) × \(n)")
                #expect(doubled == expected(2 * n), "\(shape) × \(2 * n)")
            }
        }
        // Each value is read on its own: 3 MB of unclosed links in three headers, then a link.
        var visits = 0
        let unclosed = String(repeating: "<a,", count: 1 << 18)
        let links = LinkHeader.parse([unclosed, unclosed, unclosed, "</ok>; rel=next"], visits: &visits)
        #expect(links == [link("/ok", ["next"], [:])])
        #expect(visits <= 8 * (3 * unclosed.utf8.count + 15), "\(visits)")
    }

    @Test func retryAfterInSecondsOrAsADate() {
        #expect(RetryAfter.seconds("120", now: 0) == 120)
        #expect(RetryAfter.seconds(" 0 ", now: 0) == 0)
        // Sun, 06 Nov 1994 08:49:37 GMT is 784111777 seconds after 1970.
        #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:49:37 GMT", now: 784_111_700) == 77)
        #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:49:37 GMT", now: 784_111_800) == 0, "a date in the past: no wait")
        #expect(RetryAfter.seconds("soon", now: 0) == nil)
        #expect(RetryAfter.seconds("99999999999999999999", now: 0) == nil, "no overflow on a huge number")
        #expect(RetryAfter.seconds("-5", now: 0) == nil)
    }
}
