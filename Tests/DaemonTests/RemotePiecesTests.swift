@testable import Daemon
@testable import DataSources
@testable import JSONKit
@testable import WireSchema
import Testing

@Suite struct URLResolutionTests {
    /// RFC 3986 §5.4.1 and §5.4.2, against the base "http://a/b/c/d;p?q".
    @Test(arguments: [
        ("g:h", "g:h"), ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"),
        ("/g", "http://a/g"), ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"),
        ("#s", "http://a/b/c/d;p?q#s"), ("g#s", "http://a/b/c/g#s"), ("g?y#s", "http://a/b/c/g?y#s"), (";x", "http://a/b/c/;x"),
        ("g;x", "http://a/b/c/g;x"), ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"), ("./", "http://a/b/c/"),
        ("..", "http://a/b/"), ("../", "http://a/b/"), ("../g", "http://a/b/g"), ("../..", "http://a/"), ("../../g", "http://a/g"),
        ("../../../g", "http://a/g"), ("/./g", "http://a/g"), ("/../g", "http://a/g"), ("g.", "http://a/b/c/g."), (".g", "http://a/b/c/.g"),
        ("./../g", "http://a/b/g"), ("./g/.", "http://a/b/c/g/"), ("g/./h", "http://a/b/c/g/h"), ("g/../h", "http://a/b/c/h"),
    ])
    func rfc3986Examples(reference: String, expected: String) {
        #expect(URLResolution.resolve(reference, against: "http://a/b/c/d;p?q") == expected)
    }

    @Test func apiPathsAsInstantCocoaResolvedThem() {
        let base = "https://api.example.invalid/v2"
        #expect(URLResolution.requestURL(baseURL: base, apiPath: "items", query: []) == "https://api.example.invalid/v2/items")
        #expect(URLResolution.requestURL(baseURL: base + "/", apiPath: "items", query: []) == "https://api.example.invalid/v2/items")
        #expect(URLResolution.requestURL(baseURL: base, apiPath: "/items", query: []) == "https://api.example.invalid/items")
        #expect(URLResolution.requestURL(baseURL: base, apiPath: "http://other.invalid/x", query: []) == "http://other.invalid/x")
        #expect(URLResolution.requestURL(baseURL: "http://h.invalid", apiPath: "items", query: []) == "http://h.invalid/items")
    }

    @Test func queryParametersAreEncodedAndReplaceTheirNamesakes() {
        let url = URLResolution.requestURL(
            baseURL: "http://h.invalid", apiPath: "/s?q=old&keep=1",
            query: [("q", "a b&c"), ("page", "2"), ("ü", "✓")])
        #expect(url == "http://h.invalid/s?keep=1&q=a%20b%26c&page=2&%C3%BC=%E2%9C%93")
    }

    /// RFC 3986's own percent-encoding examples: §2.1 ("%20" is a space; hex digits in either
    /// case), §2.5 (UTF-8: "%C3%80" is À, "%E3%82%A2" is katakana A), §6.2.2 ("%63" is c,
    /// "%7b"/"%7B" are braces) and §6.2.2.2 / §6.2.3 ("%7Esmith" is "~smith").
    @Test(arguments: [
        ("%20", " "), ("a%2fb", "a/b"), ("a%2Fb", "a/b"), ("%C3%80", "À"), ("%E3%82%A2", "\u{30A2}"),
        ("/b/%63/%7bfoo%7d", "/b/c/{foo}"), ("%7Bfoo%7D", "{foo}"), ("/%7Esmith/home.html", "/~smith/home.html"),
        ("%41%61", "Aa"), ("", ""), ("plain", "plain"), ("a+b", "a+b"),
    ])
    func percentDecodingFollowsRFC3986(encoded: String, decoded: String) {
        #expect(URLResolution.percentDecoded(encoded) == decoded)
    }

    /// A `%` without two hex digits after it is not an escape: it and what follows are kept.
    @Test(arguments: [
        ("%zz", "%zz"), ("a%zzb", "a%zzb"), ("100%", "100%"), ("%4", "%4"), ("x%4", "x%4"), ("%%41", "%A"),
        ("%g1%41", "%g1A"), ("%4g", "%4g"), ("%", "%"),
    ])
    func malformedEscapesArePassedThrough(encoded: String, decoded: String) {
        #expect(URLResolution.percentDecoded(encoded) == decoded)
    }

    @Test func formEncodingReadsPlusAsASpace() {
        #expect(URLResolution.percentDecoded("a+b%2Bc", formEncoded: true) == "a b+c")
        #expect(URLResolution.percentDecoded("a+b%2Bc") == "a+b+c")
        // A query parameter whose name is a malformed escape is still recognised and replaced.
        #expect(
            URLResolution.requestURL(baseURL: "http://h.invalid", apiPath: "/s?%zz=1&k=2", query: [("%zz", "3")])
                == "http://h.invalid/s?k=2&%25zz=3")
    }

    @Test func credentialsAreRedacted() {
        #expect(URLResolution.redacted("https://user:secret@h.invalid:8443/x?y=1") == "https://h.invalid:8443/x?y=1")
        #expect(URLResolution.redacted("http://h.invalid/x") == "http://h.invalid/x")
    }
}

@Suite struct ResponseDecodingTests {
    private func response(_ body: String, status: Int = 200, type: String? = "application/json; charset=utf-8") -> RemoteResponse {
        RemoteResponse(url: "http://h.invalid/x", status: status, contentType: type, body: Array(body.utf8))
    }

    private func objects(
        _ body: String, keyPath: String? = "items", status: Int = 200, type: String? = "application/json"
    ) -> Result<[JSON], FetchError> {
        ResponseDecoding.document(response(body, status: status, type: type), maximumDepth: 8).flatMap {
            ResponseDecoding.objects(in: $0, keyPath: keyPath.map(JSONKeyPath.init), mapping: nil, url: "u", status: status)
        }
    }

    @Test func extractsTheListAtTheKeyPath() throws {
        #expect(try objects(#"{"items": [1, 2]}"#).get() == [1, 2])
        #expect(try objects(#"{"data": {"list": [3]}}"#, keyPath: "data.list").get() == [3])
        #expect(try objects(#"[4, 5]"#, keyPath: nil).get() == [4, 5])
        #expect(try objects(#"{"items": {"id": 1}}"#).get() == [["id": 1]], "a single object is a one-element list")
        #expect(try objects("  ", type: nil).get() == [], "an empty body is an empty list")
        #expect(try objects(#"{"items": [{"id": 1}, "x"]}"#).get().allSatisfy { $0.isPacked }, "rows arrive packed")
    }

    /// A page is parsed, mapped and dropped in the decoding thread's scratch arena; what the
    /// main loop is handed keeps none of it, so the next page is carved from the same memory.
    /// With a nested key path the document is handed on whole, and takes its arena with it.
    @Test(.enabled(if: JSON.arenasAreOn, "arenas are off (DATASOURCED_JSON_ARENAS=0, as under AddressSanitizer)"))
    func aDecodedPageHoldsNoArena() throws {
        let configuration = RemoteConfiguration(baseURL: "http://h.invalid", apiPath: "/x", keyPath: JSONKeyPath("items"))
        let body = #"{"items": [{"id": 1, "t": "a"}, {"id": 2, "t": "b"}], "page": 1, "next": "c2"}"#
        let decoded = try ResponseDecoding.decode(response(body), configuration: configuration, url: "u").get()
        let scratch = try #require(JSON.scratchArenaSerialOnThisThread, "the page was decoded in a scratch arena")
        #expect(decoded.objects == [["id": 1, "t": "a"], ["id": 2, "t": "b"]])
        #expect(decoded.document == ["page": 1, "next": "c2"] && decoded.document?.isPacked == true)
        _ = try ResponseDecoding.decode(response(body), configuration: configuration, url: "u").get()
        #expect(JSON.scratchArenaSerialOnThisThread == scratch, "nothing was kept: the next page used the same arena")

        let nested = RemoteConfiguration(baseURL: "http://h.invalid", apiPath: "/x", keyPath: JSONKeyPath("data.items"))
        let whole = try ResponseDecoding.decode(response(#"{"data": {"items": [{"id": 3}]}, "page": 2}"#), configuration: nested, url: "u")
            .get()
        #expect(whole.objects == [["id": 3]] && whole.document?["page"] == 2)
        #expect(whole.document?.arenaSerial == scratch && JSON.arenaIsAlive(scratch), "the document kept its arena")
        #expect(JSON.scratchArenaSerialOnThisThread == nil, "the thread makes a new scratch arena next time")
        _ = consume whole
        #expect(!JSON.arenaIsAlive(scratch), "freed with the document")
    }

    /// A document over `JSON.largestArenaDocument` bytes is not decoded in the scratch arena:
    /// handed on whole (no key path), it would hold the arena, and every slot it took, as long
    /// as the main loop keeps it.
    @Test(.enabled(if: JSON.arenasAreOn, "arenas are off (DATASOURCED_JSON_ARENAS=0, as under AddressSanitizer)"))
    func aDocumentTooLargeForAnArenaIsParsedNodeByNode() throws {
        let configuration = RemoteConfiguration(baseURL: "http://h.invalid", apiPath: "/x", keyPath: nil)
        let padding = String(repeating: "x", count: JSON.largestArenaDocument)
        let decoded = try ResponseDecoding.decode(
            response(#"{"items": [], "padding": "\#(padding)"}"#), configuration: configuration, url: "u"
        ).get()
        #expect(decoded.document?["items"] == [] && decoded.document?.arenaSerial == nil)
        let small = try ResponseDecoding.decode(response(#"{"items": []}"#), configuration: configuration, url: "u").get()
        #expect(small.document?.arenaSerial != nil, "a document handed on whole keeps the arena it was decoded in")
    }

    @Test func failuresAreClassified() {
        func kind(_ result: Result<[JSON], FetchError>) -> FetchError.Kind? {
            if case .failure(let error) = result { return error.kind }
            return nil
        }
        #expect(kind(objects(#"{"results": []}"#)) == .keyPath, "a missing key path is an error, not an empty list")
        #expect(kind(objects(#"{"items": null}"#)) == .keyPath)
        #expect(kind(objects(#"{"items": [1,"#)) == .decode)
        #expect(kind(objects(#"{"items": []}"#, type: "text/html")) == .decode)
        #expect(kind(objects(#"{"items": []}"#, status: 503)) == .http)
        #expect(kind(objects(#"{"items": [[[[[[[[[[1]]]]]]]]]]}"#)) == .tooLarge)
        #expect(kind(objects(#"{"items": [], "note": "[[[[[[[[[[[[ in a string ]]]"}"#)) == nil, "brackets in strings do not count")
        #expect(kind(objects(#"{"items": []}"#, type: "application/vnd.api+json")) == nil)
    }
}

@Suite struct PaginationTests {
    @Test func metadataEndsPaginationWithoutAWastedRequest() {
        let metadata = PageMetadata(pageSize: 10, currentPage: 3, numberOfPages: 3, numberOfTotalResults: 25)
        #expect(!metadata.hasMorePages(after: 3, firstPage: 1, received: 5, loaded: 25))
        #expect(PageMetadata(numberOfPages: 3).hasMorePages(after: 2, firstPage: 1, received: 10, loaded: 20))
        #expect(
            !PageMetadata(numberOfPages: 3).hasMorePages(after: 2, firstPage: 0, received: 10, loaded: 30), "pages counted from firstPage")
        #expect(!PageMetadata(numberOfTotalResults: 20).hasMorePages(after: 2, firstPage: 1, received: 10, loaded: 20))
        #expect(
            PageMetadata().hasMorePages(after: 7, firstPage: 1, received: 1, loaded: 61), "without metadata, only an empty page ends it")
        #expect(!PageMetadata().hasMorePages(after: 8, firstPage: 1, received: 0, loaded: 61))
    }

    @Test func readsMetadataWhereConfiguredAndSendsTheConfiguredKeys() throws {
        let paginator = try Self.paginator([
            "paginatorKeys": ["currentPage": "current", "numberOfPages": "pages"],
            "requestKeys": ["currentPage": "p"], "pageSize": 5, "metadataKeyPath": "meta", "firstPage": 0,
        ])
        #expect(paginator.queryParameters(forPage: 2).map { "\($0.name)=\($0.value)" } == ["p=2", "page_size=5"])
        let metadata = paginator.metadata(in: ["meta": ["current": 2, "pages": "4", "total_count": 9]])
        #expect(metadata == PageMetadata(currentPage: 2, numberOfPages: 4, numberOfTotalResults: 9))
        #expect(paginator.firstPage == 0)
    }

    @Test func refusesMalformedPaginatorSettings() {
        #expect(throws: FieldError.self) { try Self.paginator(["paginatorKeys": ["pageSize": 3]]) }
        #expect(throws: FieldError.self) { try Self.paginator(["firstPage": -1]) }
        #expect(throws: FieldError.self) { try Self.paginator(["firstPage": 9_223_372_036_854_775_807]) }
        #expect(throws: FieldError.self) { try Self.paginator(["metadataKeyPath": 1]) }
        #expect(throws: FieldError.self) { try Self.paginator(["paginatorKeys": ["pagesize": "n"]]) }
    }

    /// The paginated members of `createSource` params, decoded as the daemon does.
    static func paginator(_ params: JSON) throws -> PaginatorConfiguration {
        var reader = try ObjectReader(params, field: "")
        let paging = try RemoteConfigurationDecoding.pagingMembers.decode(&reader)
        let paginator = try paging.settled(paging.paginator)
        try reader.finish()
        return paginator
    }

    @Test func secretHeadersAreRecognised() {
        for name in ["Authorization", "cookie", "X-Api-Key", "X-Auth-Token", "client_secret", "X-Session-Id"] {
            #expect(RemoteConfiguration.isSecretHeader(name), "\(name)")
        }
        for name in ["Accept", "User-Agent", "X-Client", "", "tok", "X-Toke"] {
            #expect(!RemoteConfiguration.isSecretHeader(name), "\(name)")
        }
        // Lowered as Unicode first (the Kelvin sign is a "k"), then searched byte by byte: an
        // accent after a fragment's last letter does not hide it.
        for name in ["X-API\u{212A}ey", "PASSWORD", "x-token\u{301}", "Token"] {
            #expect(RemoteConfiguration.isSecretHeader(name), "\(name)")
        }
    }
}
