import Basics
import Testing

@Suite struct HTTPTextTests {
    @Test func trimsSpacesAndTabsOnly() {
        #expect(" \t gzip \t".trimmingSpaces() == "gzip")
        #expect("a b".trimmingSpaces() == "a b")
        #expect(" \t ".trimmingSpaces() == "")
        #expect("\nx\n".trimmingSpaces() == "\nx\n")
        #expect("  x ".dropFirst().trimmingSpaces() == "x")
    }

    @Test func headerNamesCompareCaseInsensitively() {
        let headers: [(name: String, value: String)] = [("Link", "a"), ("ETag", "\"1\""), ("link", "b"), ("Links", "c")]
        #expect(headers.values(ofHeader: "LINK") == ["a", "b"])
        #expect(headers.values(ofHeader: "etag") == ["\"1\""])
        #expect(headers.contains(header: "eTaG"))
        #expect(!headers.contains(header: "Lin"))
        #expect(headers.values(ofHeader: "age").isEmpty)
    }

    @Test func readsIMFFixdates() {
        #expect(HTTPDate.seconds("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(HTTPDate.seconds("Thu, 01 Jan 1970 00:00:00 GMT") == 0)
        #expect(HTTPDate.seconds("Tue, 29 Feb 2000 23:59:60 GMT") == 951_868_800)
        #expect(HTTPDate.seconds("Sun, 06 Nov 1994 08:49:37 UTC") == nil)
        #expect(HTTPDate.seconds("Sun, 06 Foo 1994 08:49:37 GMT") == nil)
        #expect(HTTPDate.seconds("Sun, 32 Nov 1994 08:49:37 GMT") == nil)
        #expect(HTTPDate.seconds("Sun, 06 Nov 1994 24:00:00 GMT") == nil)
        #expect(HTTPDate.seconds("Sunday, 06-Nov-94 08:49:37 GMT") == nil)
        #expect(HTTPDate.seconds("784111777") == nil)
    }
}
