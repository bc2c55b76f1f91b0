import DataSources
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
