@testable import Daemon
@testable import DataSources
import JSONKit
import WireSchema
import Testing

/// A persisted entry is input like a response (issue 27): every number range-checked, next
/// URLs held to the origin, no credentials written, a checksum; a bad entry is dropped and
/// the list refetched.
@Suite struct CacheEntryValidationTests {
    static let key = CacheAndRefreshTests.key

    /// A paginated source over `baseURL` with the cache on, attached to `store`.
    static func source(
        _ pagination: JSON = [:], baseURL: String = "http://api.invalid", headers: JSON = [:], extra: [(String, JSON)] = [],
        store: MemoryPageStore
    ) throws -> (PaginatedDataSource, FakeLoader, Recorder) {
        let loader = FakeLoader()
        let params = JSON.object(
            [
                ("name", "p"), ("kind", "paginated"), ("identityKey", "id"),
                ("remoteConfiguration", ["baseURL": JSON(baseURL), "headers": headers]), ("apiPath", "/items"),
                ("pageSize", 2), ("pagination", pagination), ("cache", ["enabled": true]),
            ] + extra)
        guard case .paginated(let configuration, let paginator) = try SourceSpec.decoding(createSourceParams: params).kind else {
            throw FieldError(field: "kind", expected: "paginated", got: nil, message: "not paginated")
        }
        let source = PaginatedDataSource(
            name: "p", identity: Identity(key: JSONKeyPath("id")), configuration: configuration,
            paginator: paginator, loader: loader)
        source.attachCache(store, key: key)
        return (source, loader, Recorder().observing(source))
    }

    static func rows(_ ids: [Int]) -> [JSON] { ids.map { ["id": JSON($0)] } }

    static func page(
        _ request: PaginatedDataSource.PageRequest, _ ids: [Int], received: Int? = nil,
        next: PaginatedDataSource.PageRequest?, etag: String? = "\"v1\""
    ) -> CachedPages.Page {
        CachedPages.Page(
            request: request, validators: Validators(etag: etag), rows: rows(ids), received: received ?? ids.count,
            next: next, metadata: PageMetadata())
    }

    /// Stores `pages` as this version writes an entry (checksum and all): what a person or
    /// another process that edits the file could write.
    static func store(_ pages: [CachedPages.Page], currentPage: Int? = nil, duplicatesDropped: Int = 0, in store: MemoryPageStore) {
        let entry = CachedPages(pages: pages, currentPage: currentPage ?? pages.count, duplicatesDropped: duplicatesDropped)
        store.entries[key] = entry.stored(at: WallClock.secondsSince1970())
    }

    static func ids(_ source: DataSource) -> [Int?] { source.allObjects.map { $0["id"]?.integerValue } }

    /// What a source does with an entry it refuses: shows nothing of it, asks for the first
    /// page unconditionally, and removes the entry.
    static func expectRefused(
        _ source: PaginatedDataSource, _ loader: FakeLoader, _ store: MemoryPageStore,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        source.fetchData()
        #expect(!source.isStale, sourceLocation: sourceLocation)
        #expect(source.allObjects == [Placeholder.loadingRow], sourceLocation: sourceLocation)
        #expect(loader.requestedURLs == ["http://api.invalid/items?page=1&page_size=2"], sourceLocation: sourceLocation)
        #expect(loader.header("If-None-Match", of: 0) == nil, sourceLocation: sourceLocation)
        #expect(store.entries[key] == nil, "the entry is dropped", sourceLocation: sourceLocation)
    }

    // MARK: Defect 3: no credentials in the file

    @Test func aNextURLIsStoredWithoutTheBaseURLsPasswordAndRestoredWithIt() throws {
        let store = MemoryPageStore()
        let base = "http://user:S3CRETPW@api.invalid"
        let (first, loader, _) = try Self.source(["strategy": "nextURL"], baseURL: base, extra: [("keyPath", "items")], store: store)
        first.fetchData()
        #expect(loader.requestedURLs == ["http://user:S3CRETPW@api.invalid/items?page_size=2"])
        loader.respond(0, json: ["items": .array(Self.rows([1, 2])), "next": "/items?page=2"], headers: CacheAndRefreshTests.etag)
        let stored = try #require(store.entries[Self.key])
        let payload = stored.payload + stored.pages.joined()
        #expect(!String(decoding: payload, as: UTF8.self).contains("S3CRETPW"), "the password never reaches the file")
        #expect(!String(decoding: payload, as: UTF8.self).contains("user:"))

        // Restored, the next page goes where the live source would have gone, credentials from the configuration.
        let (second, secondLoader, _) = try Self.source(["strategy": "nextURL"], baseURL: base, extra: [("keyPath", "items")], store: store)
        second.fetchData()
        #expect(second.isStale && Self.ids(second) == [1, 2, nil])
        secondLoader.respondNotModified(0)
        #expect(second.fetchNextPage())
        #expect(secondLoader.requestedURLs.last == "http://user:S3CRETPW@api.invalid/items?page=2")
    }

    // MARK: Defect 4: received near Int.max

    @Test func anEntryWhosePagesClaimIntMaxObjectsReceivedIsRefused() throws {
        let store = MemoryPageStore()
        Self.store(
            [
                Self.page(.first, [1, 2], received: Int.max, next: .page(2)),
                Self.page(.page(2), [3, 4], received: Int.max, next: .page(3)),
            ],
            currentPage: 2, in: store)
        let (source, loader, _) = try Self.source(store: store)
        Self.expectRefused(source, loader, store)
    }

    // MARK: Defect 5: a page number near Int.min

    @Test func anEntryWhoseNextPageIsIntMinIsRefused() throws {
        let store = MemoryPageStore()
        Self.store([Self.page(.first, [1, 2], next: .page(Int.min))], currentPage: 1, in: store)
        let (source, loader, _) = try Self.source(store: store)
        Self.expectRefused(source, loader, store)
        loader.respond(0, json: PaginatedStateMachineTests.page([1, 2]))
        #expect(source.fetchNextPage())
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=2&page_size=2")
    }

    // MARK: Defect 6: a restored next URL leaves the origin

    @Test func aRestoredNextURLToAnotherOriginIsRefusedAndNeverRequested() throws {
        let store = MemoryPageStore()
        Self.store([Self.page(.first, [1, 2], next: .url("http://evil.invalid/steal"))], in: store)
        let (source, loader, _) = try Self.source(
            ["strategy": "nextURL"], headers: ["Authorization": "Bearer TOKEN"],
            extra: [("keyPath", "items")], store: store)
        source.fetchData()
        #expect(!source.isStale, "the entry is not shown")
        #expect(store.entries[Self.key] == nil, "the entry is dropped")
        loader.respond(0, json: ["items": .array(Self.rows([1, 2]))])
        source.fetchNextPage()
        #expect(!loader.requestedURLs.contains { $0.contains("evil.invalid") })
    }

    // MARK: Defect 7: integrity

    @Test func aByteFlippedEntryIsDroppedAndRefetchedNotConfirmedByA304() throws {
        let store = MemoryPageStore()
        try CacheAndRefreshTests.seed(store)
        let stored = try #require(store.entries[Self.key])
        // Packed: the key "id" inline (its length 2, shifted, and odd), then the integer 3 (tag 3, zigzag 6).
        let id3: [UInt8] = [5] + Array("id".utf8) + [3, 6]
        // Row 3 is on the second page.
        var edited = try #require(stored.pages.count == 3 ? stored.pages[1] : nil)
        let at = try #require((0...(edited.count - id3.count)).first { edited[$0..<$0 + id3.count].elementsEqual(id3) })
        edited[at + id3.count - 1] = 18
        var pages = stored.pages
        pages[1] = edited
        store.entries[Self.key] = StoredPages(payload: stored.payload, pages: pages, storedAt: stored.storedAt)
        let (source, loader, _) = try Self.source(store: store)
        Self.expectRefused(source, loader, store)
        #expect(!Self.ids(source).contains(9), "a row the server never sent is never shown")
    }

    // MARK: Defect 16: a port that does not fit

    @Test func anAPIPathWhosePortIsOutsideOneTo65535IsRefusedAtCreation() throws {
        for port in ["18446744073709551617", "18446744073709551616", "65536", "0", "99999999999999999999999"] {
            let params: JSON = [
                "name": "r", "kind": "remote", "remoteConfiguration": ["baseURL": "http://127.0.0.1:8080"],
                "apiPath": JSON("http://127.0.0.1:\(port)/items"),
            ]
            let refusal = wireRefusal { _ = try SourceSpec.decoding(createSourceParams: params) }
            #expect(refusal?.data?["field"] == "apiPath", "port \(port)")
            #expect(refusal?.message.contains("1...65535") == true, "port \(port): \(refusal?.message ?? "accepted")")
        }
        for path in ["http://127.0.0.1:65535/items", "http://127.0.0.1:1/items", "/items", "items?x=1", "http://127.0.0.1:/items"] {
            let params: JSON = [
                "name": "r", "kind": "remote", "remoteConfiguration": ["baseURL": "http://127.0.0.1:8080"], "apiPath": JSON(path),
            ]
            #expect(wireRefusal { _ = try SourceSpec.decoding(createSourceParams: params) } == nil, "\(path)")
        }
    }

    @Test func aNextURLFromTheServerWhosePortDoesNotFitFailsTheFetch() throws {
        let (source, loader, recorder) = try PaginatedStateMachineTests.source(
            ["strategy": "nextURL", "allowCrossOrigin": true], extra: [("keyPath", "items")])
        source.fetchData()
        loader.respond(
            0, json: ["items": PaginatedStateMachineTests.page([1, 2]), "next": "http://api.invalid:18446744073709551617/items?page=2"])
        #expect(recorder.errors.last?["kind"] == "transport")
        #expect(recorder.errors.last?["message"]?.stringValue?.contains("1...65535") == true)
        #expect(!source.fetchNextPage())
        #expect(loader.requestedURLs.count == 1)
    }

    // MARK: The warning

    @Test func aDroppedEntryIsReportedWithItsLabelAndWhy() throws {
        let store = MemoryPageStore()
        Self.store([Self.page(.first, [1, 2], received: 1, next: nil)], in: store)
        let (source, _, _) = try Self.source(store: store)
        var warnings: [String] = []
        source.attachCache(store, key: Self.key, warn: { warnings.append($0) })
        source.fetchData()
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("dropped the cache entry for http://api.invalid/items (source \"p\")") == true, "\(warnings)")
        #expect(warnings.first?.contains("pages[0].received must be an integer in 2...33554432, got 1") == true, "\(warnings)")
        source.fetchData()
        #expect(warnings.count == 1, "a dropped entry is gone: nothing more to say")
    }

    // MARK: Every member checked

    /// An entry refused by a page-numbered source (or the one `pagination` makes), and why.
    static func refusal(
        _ pages: [CachedPages.Page], currentPage: Int? = nil, duplicatesDropped: Int = 0, pagination: JSON = [:],
        extra: [(String, JSON)] = [], payload: StoredPages? = nil, storedAt: Double? = nil
    ) throws -> String? {
        let store = MemoryPageStore()
        Self.store(pages, currentPage: currentPage, duplicatesDropped: duplicatesDropped, in: store)
        if let payload { store.entries[key] = payload }
        if let storedAt, let entry = store.entries[key] {
            store.entries[key] = StoredPages(payload: entry.payload, pages: entry.pages, storedAt: storedAt)
        }
        let (source, loader, _) = try Self.source(pagination, extra: extra, store: store)
        var warnings: [String] = []
        source.attachCache(store, key: key, warn: { warnings.append($0) })
        source.fetchData()
        if warnings.isEmpty {
            #expect(source.isStale && store.entries[key] != nil, "accepted: shown and kept")
            return nil
        }
        #expect(!source.isStale && store.entries[key] == nil && loader.header("If-None-Match", of: 0) == nil)
        #expect(source.allObjects == [Placeholder.loadingRow])
        return warnings.first
    }

    @Test func countsThatDoNotAddUpAreRefused() throws {
        let two = Self.page(.first, [1, 2], next: .page(2))
        #expect(
            try Self.refusal([Self.page(.first, [1, 2], received: 1, next: nil)])?.contains(
                "pages[0].received must be an integer in 2...33554432, got 1") == true)
        #expect(
            try Self.refusal([Self.page(.first, [1, 2], received: 33_554_433, next: nil)])?.contains("pages[0].received") == true,
            "more objects than limits.maxBodyBytes bytes")
        #expect(try Self.refusal([Self.page(.first, [1, 2], received: -1, next: nil)])?.contains("pages[0].received") == true)
        #expect(
            try Self.refusal([two], duplicatesDropped: -1)?.contains("duplicatesDropped must be a non-negative integer, got -1") == true)
        #expect(try Self.refusal([two], duplicatesDropped: 1)?.contains("duplicatesDropped must be at most 0") == true)
        #expect(
            try Self.refusal([Self.page(.first, [1, 2], received: 3, next: .page(2))], duplicatesDropped: 1) == nil, "one dropped, counted")
        #expect(try Self.refusal([two], currentPage: Int.max)?.contains("currentPage must be 1, got 9223372036854775807") == true)
        #expect(try Self.refusal([two], currentPage: Int.min)?.contains("currentPage must be 1") == true)
        #expect(
            try Self.refusal([Self.page(.first, [1, 2], received: 3, next: nil)], pagination: ["duplicates": "keep"])?
                .contains("pages[0].received must be 2, the rows kept (duplicates are kept), got 3") == true)
    }

    @Test func pageNumbersMustFollowFromTheFirstPage() throws {
        #expect(
            try Self.refusal([Self.page(.first, [1, 2], next: .page(2)), Self.page(.page(2), [3, 4], next: .page(3))], currentPage: 2)
                == nil)
        #expect(
            try Self.refusal([Self.page(.page(1), [1, 2], next: .page(2))])?.contains("pages[0].request must be {\"first\": true}") == true)
        #expect(
            try Self.refusal([Self.page(.first, [1, 2], next: .page(Int.max))])?.contains("pages[0].next must be {\"page\": 2}") == true)
        #expect(
            try Self.refusal([Self.page(.first, [1, 2], next: .page(2)), Self.page(.page(3), [3, 4], next: nil)], currentPage: 3)?
                .contains("pages[1].request is not the next request of pages[0]") == true)
        #expect(
            try Self.refusal([Self.page(.first, [1, 2], next: nil), Self.page(.page(2), [3, 4], next: nil)], currentPage: 2)?
                .contains("pages[1].request is not the next request of pages[0]") == true, "no page follows one that named none")
        // firstPage 0: the first page is 0 and the next 1.
        #expect(try Self.refusal([Self.page(.first, [1, 2], next: .page(1))], currentPage: 0, extra: [("firstPage", 0)]) == nil)
    }

    @Test func aRequestOfAnotherStrategyIsRefused() throws {
        #expect(
            try Self.refusal([Self.page(.first, [1, 2], next: .offset(2))])?
                .contains("pages[0].next is a offset request, which the pageNumber strategy never makes") == true)
        #expect(
            try Self.refusal([Self.page(.first, [1, 2], next: .cursor("c"))], pagination: ["strategy": "offset"])?
                .contains("which the offset strategy never makes") == true)
        #expect(
            try Self.refusal(
                [Self.page(.first, [1, 2], next: .url("http://api.invalid/items?page=2"))],
                pagination: ["strategy": "cursor", "cursorPath": "next"])?
                .contains("which the cursor strategy never makes") == true)
        #expect(
            try Self.refusal([Self.page(.first, [1, 2], next: .page(2))], pagination: ["strategy": "linkHeader"])?
                .contains("which the linkHeader strategy never makes") == true)
        #expect(
            try Self.refusal([Self.page(.first, [1, 2], next: .first)])?.contains("pages[0].next must be an object with one of") == true)
    }

    @Test func offsetsMustFollowFromTheObjectsReceivedUnlessTheServerGivesThem() throws {
        let offset: JSON = ["strategy": "offset"]
        #expect(
            try Self.refusal([Self.page(.first, [1, 2], received: 3, next: .offset(3))], duplicatesDropped: 1, pagination: offset) == nil)
        #expect(
            try Self.refusal([Self.page(.first, [1, 2], next: .offset(Int.max))], pagination: offset)?
                .contains("pages[0].next must be {\"offset\": 2}") == true)
        #expect(
            try Self.refusal([Self.page(.first, [1, 2], next: .offset(-2))], pagination: offset)?.contains(
                "pages[0].next must be an object") == true)
        // From the server: any offset it could send, Int.max included; the one after it is the end, not a trap.
        let store = MemoryPageStore()
        Self.store([Self.page(.first, [1], next: .offset(Int.max))], in: store)
        let (source, loader, recorder) = try Self.source(
            ["strategy": "offset", "nextOffsetPath": "next"], extra: [("keyPath", "items")], store: store)
        source.fetchData()
        #expect(source.isStale)
        loader.respondNotModified(0)
        #expect(source.fetchNextPage())
        #expect(loader.requestedURLs.last == "http://api.invalid/items?offset=9223372036854775807&limit=2")
        loader.respond(1, json: ["items": .array(Self.rows([2]))])
        #expect(recorder.events.last == "p.finished")
        #expect(source.nextPageRefusal == "there are no more pages")
        #expect(Self.ids(source) == [1, 2])
    }

    @Test func duplicateIdentitiesAreRefusedWhereTheyWouldHaveBeenDropped() throws {
        let pages = [Self.page(.first, [1, 2], next: .page(2)), Self.page(.page(2), [2, 3], next: .page(3))]
        #expect(
            try Self.refusal(pages, currentPage: 2)?.contains("pages[1].rows[0] has an identity already loaded (duplicates are dropped)")
                == true)
        #expect(try Self.refusal(pages, currentPage: 2, pagination: ["duplicates": "keep"]) == nil)
    }

    @Test func moreThanMaxPagesPagesAreRefused() throws {
        let pages = [
            Self.page(.first, [1], next: .page(2)), Self.page(.page(2), [2], next: .page(3)), Self.page(.page(3), [3], next: .page(4)),
        ]
        #expect(try Self.refusal(pages, currentPage: 3, pagination: ["maxPages": 3]) == nil)
        #expect(
            try Self.refusal(pages, currentPage: 3, pagination: ["maxPages": 2])?.contains(
                "it holds 3 pages, more than pagination.maxPages (2)") == true)
    }

    @Test func metadataCountsAreNonNegativeIntegersAndLargeOnesDoNotTrap() throws {
        func with(_ metadata: PageMetadata) -> [CachedPages.Page] {
            var page = Self.page(.first, [1, 2], next: .page(2))
            page.metadata = metadata
            return [page]
        }
        #expect(
            try Self.refusal(with(PageMetadata(pageSize: -1)))?.contains(
                "pages[0].metadata.pageSize must be a non-negative integer, got -1") == true)
        #expect(try Self.refusal(with(PageMetadata(numberOfPages: Int.min)))?.contains("pages[0].metadata.numberOfPages") == true)
        #expect(try Self.refusal(with(PageMetadata(numberOfTotalResults: -5)))?.contains("pages[0].metadata.numberOfTotalResults") == true)
        let huge = PageMetadata(pageSize: Int.max, currentPage: Int.max, numberOfPages: Int.max, numberOfTotalResults: Int.max)
        let store = MemoryPageStore()
        Self.store(with(huge), in: store)
        let (source, loader, recorder) = try Self.source(store: store)
        source.fetchData()
        #expect(source.isStale)
        loader.respondNotModified(0)
        #expect(source.fetchNextPage())
        loader.respond(1, json: PaginatedStateMachineTests.page([3, 4]))
        #expect(recorder.events.last == "p.finished")
        #expect(Self.ids(source) == [1, 2, 3, 4, nil])
    }

    @Test func validatorsMustBeHeaderValues() throws {
        var page = Self.page(.first, [1, 2], next: nil, etag: "\"v1\"\r\nX-Injected: 1")
        #expect(try Self.refusal([page])?.contains("pages[0].etag must be a header value") == true)
        page.validators = Validators(lastModified: String(repeating: "x", count: 90_000))
        #expect(try Self.refusal([page])?.contains("pages[0].lastModified must be a header value") == true)
    }

    @Test func cursorsAreNonEmpty() throws {
        #expect(
            try Self.refusal([Self.page(.first, [1, 2], next: .cursor(""))], pagination: ["strategy": "cursor", "cursorPath": "next"])?
                .contains("pages[0].next must be an object with one of") == true)
        #expect(
            try Self.refusal([Self.page(.first, [1, 2], next: .cursor("abc"))], pagination: ["strategy": "cursor", "cursorPath": "next"])
                == nil)
    }

    /// A run the cache keeps starts at the first page and goes forward: `{"before": …}`, the
    /// request of paging back, is read as a request but refused as a first page or a next.
    @Test func aRequestForThePageBeforeIsNeitherAFirstPageNorANext() throws {
        let cursor: JSON = ["strategy": "cursor", "cursorPath": "next", "prevCursorPath": "previous"]
        #expect(
            try Self.refusal([Self.page(.first, [1, 2], next: .before("abc"))], pagination: cursor)?
                .contains("pages[0].next is a request for the page before a cursor, which no page names as its next") == true)
        #expect(
            try Self.refusal([Self.page(.before("abc"), [1, 2], next: nil)], pagination: cursor)?
                .contains("pages[0].request must be {\"first\": true}") == true)
        #expect(
            try Self.refusal([Self.page(.first, [1, 2], next: .before(""))], pagination: cursor)?
                .contains("pages[0].next must be an object with one of") == true, "an empty cursor is no request")
        #expect(
            try Self.refusal(
                [Self.page(.first, [1, 2], next: .cursor("abc")), Self.page(.cursor("abc"), [3, 4], next: nil)], pagination: cursor)
                == nil, "the same run going forward is taken up")
    }

    @Test func mappedRowsHaveOnlyTheMappingsFields() throws {
        let mapping: (String, JSON) = ("mapping", ["id": ["type": "integer"], "title": "name"])
        var page = Self.page(.first, [1, 2], next: nil)
        page.rows = [["id": 1, "title": "a"], ["id": 2], 7]
        page.received = 3
        #expect(try Self.refusal([page], extra: [mapping]) == nil, "a field left out, an element passed through unmapped")
        page.rows = [["id": 1, "name": "a"]]
        page.received = 1
        #expect(
            try Self.refusal([page], extra: [mapping])?.contains("pages[0].rows[0] has a member \"name\" the mapping does not make") == true
        )
    }

    @Test func anEntryNestedDeeperThanAResponseMayBeIsRefused() throws {
        var deep: JSON = 1
        for _ in 0..<10 { deep = .array([deep]) }
        var page = Self.page(.first, [1], next: nil)
        page.rows = [["id": 1, "deep": deep]]
        #expect(try Self.refusal([page], extra: [("limits", ["maxDepth": 12])]) == nil)
        #expect(
            try Self.refusal([page], extra: [("limits", ["maxDepth": 11])])?.contains("it nests deeper than a response may (11 levels")
                == true)
    }

    @Test func aDepthLimitNearIntMaxFromALibraryCallerDoesNotTrap() throws {
        var limits = MemoryPageStore.limits
        limits.maximumDepth = Int.max
        let entry = CachedPages(pages: [Self.page(.first, [1], next: nil)], currentPage: 1, duplicatesDropped: 0)
        #expect(try CachedPages.decode(entry.stored(at: 0), limits: limits).get().pages.count == 1)
    }

    @Test func aTimeStoredThatIsNotATimeIsRefused() throws {
        let pages = [Self.page(.first, [1, 2], next: nil)]
        #expect(try Self.refusal(pages, storedAt: .nan)?.contains("its time stored is nan") == true)
        #expect(try Self.refusal(pages, storedAt: -.infinity)?.contains("its time stored") == true)
    }

    @Test func damagedOrForeignBytesAreRefused() throws {
        let pages = [Self.page(.first, [1, 2], next: nil)]
        let good = CachedPages(pages: pages, currentPage: 1, duplicatesDropped: 0).stored(at: WallClock.secondsSince1970())
        for (bytes, prefix) in [(good.payload, "datasourced-pages 4 fnv1a64w:"), (good.pages[0], "datasourced-page 4 fnv1a64w:")] {
            let header = String(decoding: bytes.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
            #expect(header.hasPrefix(prefix) && header.count == prefix.count + 16, "\(header)")
        }
        #expect(try Self.refusal(pages, payload: good) == nil)
        func head(_ bytes: [UInt8]) -> StoredPages { StoredPages(payload: bytes, pages: good.pages, storedAt: good.storedAt) }
        func page(_ bytes: [UInt8]) -> StoredPages { StoredPages(payload: good.payload, pages: [bytes], storedAt: good.storedAt) }
        func flipped(_ bytes: [UInt8]) -> [UInt8] { bytes.enumerated().map { $0.offset == bytes.count - 5 ? $0.element ^ 1 : $0.element } }
        let twoPagesSaid = CachedPages(pages: pages + pages, currentPage: 1, duplicatesDropped: 0).head()
        for (name, stored, reason) in [
            ("head truncated", head(Array(good.payload.dropLast(3))), "its checksum does not match"),
            ("head byte flipped", head(flipped(good.payload)), "its checksum does not match"),
            ("page truncated", page(Array(good.pages[0].dropLast(3))), "pages[0]: its checksum does not match"),
            ("page byte flipped", page(flipped(good.pages[0])), "pages[0]: its checksum does not match"),
            ("a head for a page", page(good.payload), "pages[0]: it does not start with the header \"datasourced-page \""),
            ("a page for a head", head(good.pages[0]), "it does not start with the header \"datasourced-pages \""),
            ("a page missing", head(twoPagesSaid), "its head says 2 pages, and page 1 is not stored"),
            ("format 1", head(Array(#"{"format":1,"pages":[]}"#.utf8)), "it is in format 1; this version reads format 4"),
            (
                "format 2 (JSON text)", head(Array("datasourced-pages 2 fnv1a64:0000000000000000\n{}".utf8)),
                "it is in format \"2\"; this version reads format 4"
            ),
            (
                "format 3 (one whole packed entry)", head(Array("datasourced-pages 3 fnv1a64w:0000000000000000\n{}".utf8)),
                "it is in format \"3\"; this version reads format 4"
            ),
            ("format 5", head(Array("datasourced-pages 5 fnv1a64:0000000000000000\n{}".utf8)), "it is in format \"5\""),
            ("no header", head(Array("garbage".utf8)), "it does not start with the header"),
            (
                "a header with no end", head(Array("datasourced-pages 4 ".utf8) + [UInt8](repeating: 65, count: 300)),
                "its header line does not end"
            ),
            ("a signed checksum", head(Array("datasourced-pages 4 fnv1a64w:+000000000000000\n{}".utf8)), "its header has no checksum"),
            ("empty", head([]), "it does not start with the header"),
        ] {
            #expect(try Self.refusal(pages, payload: stored)?.contains(reason) == true, "\(name)")
        }
    }

    /// Taken by words, the checksum still changes with any one bit of any byte: in a whole
    /// word, and among the last bytes short of one.
    @Test func theChecksumChangesWithEveryBitOfEveryByte() {
        let bytes = (0..<21).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        let original = FNV1a64.hash(bytes)
        for index in bytes.indices {
            for bit in 0..<8 {
                var changed = bytes
                changed[index] ^= 1 << bit
                #expect(FNV1a64.hash(changed) != original, "byte \(index), bit \(bit)")
            }
        }
        #expect(FNV1a64.hash(bytes.dropLast()) != original)
        #expect(FNV1a64.hash(bytes[...]) == original, "a slice hashes as the array")
        // The format's checksum, pinned: bytes 0 to 20 (two words, then five bytes).
        #expect(FNV1a64.hash((0..<21).map { UInt8($0) }) == 0x145c_79a6_638d_1e6f)
    }

    /// The packed document after a matching checksum is input too: cut short anywhere, it is
    /// refused; any one bit of it flipped, it is refused or read as an entry that then passes
    /// or fails the checks, and nothing traps.
    @Test func aPackedDocumentCutShortOrDamagedUnderAMatchingChecksumIsRefusedNotATrap() throws {
        let pages = [Self.page(.first, [1, 2], next: .page(2)), Self.page(.page(2), [3, 4], next: nil, etag: nil)]
        let entry = CachedPages(pages: pages, currentPage: 2, duplicatesDropped: 0).stored(at: WallClock.secondsSince1970())
        #expect(try Self.refusal([], payload: entry) == nil)
        /// The packed document after the header line of `bytes`, and `body` sealed again in its place.
        func body(_ bytes: [UInt8]) throws -> [UInt8] { Array(bytes[(try #require(bytes.firstIndex(of: UInt8(ascii: "\n"))) + 1)...]) }
        let headBody = try body(entry.payload), pageBody = try body(entry.pages[0])
        #expect(CachedPages.sealed(headBody) == entry.payload)
        #expect(CachedPages.sealed(pageBody, prefix: CachedPages.pageHeaderPrefix) == entry.pages[0])
        func withHead(_ body: [UInt8]) -> StoredPages {
            StoredPages(payload: CachedPages.sealed(body), pages: entry.pages, storedAt: entry.storedAt)
        }
        func withFirstPage(_ body: [UInt8]) -> StoredPages {
            StoredPages(
                payload: entry.payload, pages: [CachedPages.sealed(body, prefix: CachedPages.pageHeaderPrefix), entry.pages[1]],
                storedAt: entry.storedAt)
        }
        for (name, whole, made) in [("head", headBody, withHead), ("pages[0]", pageBody, withFirstPage)] {
            for length in 0..<whole.count {
                guard case .failure(let problem) = CachedPages.decode(made(Array(whole.prefix(length))), limits: MemoryPageStore.limits)
                else {
                    Issue.record("the first \(length) of \(whole.count) bytes of the \(name) were read as one")
                    continue
                }
                #expect(problem.reason.contains("its packed document is malformed"), "\(name), \(length) bytes: \(problem.reason)")
            }
        }
        var refused = 0
        for index in pageBody.indices {
            for bit in 0..<8 {
                var damaged = pageBody
                damaged[index] ^= 1 << bit
                // Through a source: whatever is read must also pass its checks to be shown.
                if try Self.refusal([], payload: withFirstPage(damaged)) != nil { refused += 1 }
            }
        }
        #expect(refused > pageBody.count)
    }

    @Test func aBodyThatIsNotAnEntryIsRefusedWithAValidChecksum() throws {
        /// The document `body` (JSON text, or bytes that are not one when nil) as an entry stores
        /// it: its "pages" each a page of its own, the rest the head (with the count of pages).
        func sealed(_ body: String) -> StoredPages {
            let now = WallClock.secondsSince1970()
            guard let document = try? JSON.parse(body) else { return StoredPages(payload: CachedPages.sealed([0, 5]), storedAt: now) }
            guard let members = document.objectMembers, let pages = document["pages"]?.arrayValue else {
                return StoredPages(payload: CachedPages.sealed(document.portablePacked()), storedAt: now)
            }
            let head = JSON.object(members.map { $0.key == "pages" ? ("pages", JSON(pages.count)) : $0 })
            return StoredPages(
                payload: CachedPages.sealed(head.portablePacked()),
                pages: pages.map { CachedPages.sealed($0.portablePacked(), prefix: CachedPages.pageHeaderPrefix) }, storedAt: now)
        }
        let page = #"{"request":{"first":true},"received":1,"rows":[{"id":1}],"metadata":{}}"#
        #expect(try Self.refusal([], payload: sealed(#"{"pages":[\#(page)],"currentPage":1,"duplicatesDropped":0}"#)) == nil)
        for (body, reason) in [
            ("[]", "its head is not a JSON object"),
            ("{", "its packed document is malformed"),
            (#"{"pages":[],"currentPage":1,"duplicatesDropped":0}"#, "pages must be a positive integer, got 0"),
            (#"{"pages":"1","currentPage":1,"duplicatesDropped":0}"#, "pages must be a positive integer"),
            (#"{"pages":[\#(page)],"currentPage":1.5,"duplicatesDropped":0}"#, "currentPage must be an integer"),
            (#"{"pages":[7],"currentPage":1,"duplicatesDropped":0}"#, "pages[0] must be an object, got 7"),
            (
                #"{"pages":[{"request":{"first":true,"page":2},"received":1,"rows":[],"metadata":{}}],"currentPage":1,"duplicatesDropped":0}"#,
                "pages[0].request must be"
            ),
            (
                #"{"pages":[{"request":{"first":false},"received":0,"rows":[],"metadata":{}}],"currentPage":1,"duplicatesDropped":0}"#,
                "pages[0].request must be"
            ),
            (
                #"{"pages":[{"request":{"first":true},"received":0,"rows":{},"metadata":{}}],"currentPage":1,"duplicatesDropped":0}"#,
                "pages[0].rows must be an array"
            ),
            (
                #"{"pages":[{"request":{"first":true},"received":0,"rows":[]}],"currentPage":1,"duplicatesDropped":0}"#,
                "pages[0].metadata must be an object, got nothing"
            ),
            (
                #"{"pages":[{"request":{"first":true},"received":0,"rows":[],"metadata":[]}],"currentPage":1,"duplicatesDropped":0}"#,
                "pages[0].metadata must be an object"
            ),
            (
                #"{"pages":[{"request":{"first":true},"received":"1","rows":[{"id":1}],"metadata":{}}],"currentPage":1,"duplicatesDropped":0}"#,
                "pages[0].received must be an integer"
            ),
            (
                #"{"pages":[{"request":{"first":true},"received":1,"rows":[{"id":1}],"metadata":{},"etag":5}],"currentPage":1,"duplicatesDropped":0}"#,
                "pages[0].etag must be a header value"
            ),
            (
                #"{"pages":[{"request":{"first":true},"received":1,"rows":[{"id":1}],"metadata":{},"next":{"url":"http://u:pw@api.invalid/x"}}],"currentPage":1,"duplicatesDropped":0}"#,
                "pages[0].next must be"
            ),
        ] {
            #expect(try Self.refusal([], payload: sealed(body))?.contains(reason) == true, "\(body)")
        }
    }

    @Test func aRemoteSourceReadsOnlyTheOnePageItWrites() throws {
        let params: JSON = [
            "name": "r", "kind": "remote", "identityKey": "id", "remoteConfiguration": ["baseURL": "http://api.invalid"],
            "apiPath": "/r", "cache": ["enabled": true],
        ]
        guard case .remote(let configuration) = try SourceSpec.decoding(createSourceParams: params).kind else {
            throw FieldError(field: "kind", expected: "remote", got: nil, message: "")
        }
        func refusal(_ entry: CachedPages) -> String? {
            let store = MemoryPageStore()
            store.entries[Self.key] = entry.stored(at: WallClock.secondsSince1970())
            let source = RemoteDataSource(
                name: "r", identity: Identity(key: JSONKeyPath("id")), configuration: configuration, loader: FakeLoader())
            var warnings: [String] = []
            source.attachCache(store, key: Self.key, warn: { warnings.append($0) })
            source.fetchData()
            #expect(source.isStale == warnings.isEmpty)
            return warnings.first
        }
        let one = Self.page(.first, [1, 2], next: nil)
        #expect(refusal(CachedPages(pages: [one], currentPage: 1, duplicatesDropped: 0)) == nil)
        #expect(
            refusal(CachedPages(pages: [one, one], currentPage: 1, duplicatesDropped: 0))?.contains(
                "a remote source's entry holds one page, not 2") == true)
        #expect(
            refusal(CachedPages(pages: [Self.page(.first, [1, 2], received: Int.max, next: nil)], currentPage: 1, duplicatesDropped: 0))?
                .contains("pages[0].received") == true)
        #expect(
            refusal(CachedPages(pages: [Self.page(.first, [1, 2], next: .page(2))], currentPage: 1, duplicatesDropped: 0))?.contains(
                "pages[0].next must be absent") == true)
        #expect(
            refusal(CachedPages(pages: [Self.page(.page(1), [1, 2], next: nil)], currentPage: 1, duplicatesDropped: 0))?.contains(
                "pages[0].request") == true)
        #expect(refusal(CachedPages(pages: [one], currentPage: Int.min, duplicatesDropped: 0))?.contains("currentPage must be 1") == true)
        #expect(refusal(CachedPages(pages: [one], currentPage: 1, duplicatesDropped: 3))?.contains("duplicatesDropped must be 0") == true)
    }

    // MARK: Next URLs

    @Test func restoredNextURLsGoThroughTheOriginCheck() throws {
        let link: JSON = ["strategy": "linkHeader"]
        #expect(try Self.refusal([Self.page(.first, [1, 2], next: .url("http://api.invalid/items?page=2"))], pagination: link) == nil)
        #expect(
            try Self.refusal([Self.page(.first, [1, 2], next: .url("https://api.invalid/items?page=2"))], pagination: link)?
                .contains("leaves http://api.invalid:80") == true, "another scheme is another origin")
        #expect(
            try Self.refusal([Self.page(.first, [1, 2], next: .url("http://api.invalid:8080/items"))], pagination: link)?.contains("leaves")
                == true)
        #expect(
            try Self.refusal([Self.page(.first, [1, 2], next: .url("/items?page=2"))], pagination: link)?
                .contains("is not an http or https URL") == true,
            "a URL the daemon stores is absolute: a relative one cannot be requested")
        #expect(
            try Self.refusal(
                [Self.page(.first, [1, 2], next: .url("http://elsewhere.invalid/items"))],
                pagination: ["strategy": "linkHeader", "allowCrossOrigin": true]) == nil)
        #expect(
            try Self.refusal(
                [Self.page(.first, [1, 2], next: .url("http://elsewhere.invalid:0/items"))],
                pagination: ["strategy": "linkHeader", "allowCrossOrigin": true])?.contains("its port 0 is not in 1...65535") == true)
        #expect(
            try Self.refusal(
                [Self.page(.first, [1, 2], next: .url("http://api.invalid:18446744073709551617/items"))],
                pagination: ["strategy": "linkHeader", "allowCrossOrigin": true])?.contains("is not in 1...65535") == true)
    }

    @Test func aRestoredURLOfAnotherOriginNeverGetsTheConfiguredCredentials() throws {
        let store = MemoryPageStore()
        Self.store([Self.page(.first, [1, 2], next: .url("http://elsewhere.invalid/items?page=2"))], in: store)
        let (source, loader, _) = try Self.source(
            ["strategy": "nextURL", "allowCrossOrigin": true], baseURL: "http://user:S3CRETPW@api.invalid",
            extra: [("keyPath", "items")], store: store)
        source.fetchData()
        loader.respondNotModified(0)
        #expect(source.fetchNextPage())
        #expect(loader.requestedURLs.last == "http://elsewhere.invalid/items?page=2")
    }

    @Test func credentialsComeFromTheConfigurationOnlyForItsOrigin() {
        let base = "http://user:pw@api.invalid/v1/items"
        #expect(
            URLResolution.withCredentials(of: base, appliedTo: "http://api.invalid/v1/items?page=2")
                == "http://user:pw@api.invalid/v1/items?page=2")
        #expect(URLResolution.withCredentials(of: base, appliedTo: "HTTP://API.invalid:80/x") == "HTTP://user:pw@API.invalid:80/x")
        #expect(URLResolution.withCredentials(of: base, appliedTo: "http://other:secret@api.invalid/x") == "http://user:pw@api.invalid/x")
        #expect(URLResolution.withCredentials(of: base, appliedTo: "https://api.invalid/x") == "https://api.invalid/x")
        #expect(URLResolution.withCredentials(of: base, appliedTo: "http://evil.invalid/x") == "http://evil.invalid/x")
        #expect(URLResolution.withCredentials(of: "http://api.invalid", appliedTo: "http://a:b@api.invalid/x") == "http://api.invalid/x")
    }

    // MARK: Arithmetic on what a server or a file gave

    @Test func sumsClampInsteadOfTrapping() {
        #expect(Int.max.addingClamped(1) == .max)
        #expect(Int.min.addingClamped(-1) == .min)
        #expect(5.addingClamped(-7) == -2)
        #expect(Int.max.addingClamped(Int.min) == -1)
    }

    @Test func hasMorePagesNeverTraps() {
        let metadata = PageMetadata(numberOfPages: 3)
        #expect(!metadata.hasMorePages(after: Int.min, firstPage: 1, received: 2, loaded: 2), "a page too far from the first ends paging")
        #expect(!metadata.hasMorePages(after: Int.max - 1, firstPage: -5, received: 2, loaded: 2))
        #expect(metadata.hasMorePages(after: 2, firstPage: 1, received: 2, loaded: 4))
        #expect(!metadata.hasMorePages(after: 3, firstPage: 1, received: 2, loaded: 6))
        #expect(!PageMetadata(numberOfPages: Int.min).hasMorePages(after: 1, firstPage: 1, received: 2, loaded: 2))
        #expect(!PageMetadata(numberOfPages: 0).hasMorePages(after: 1, firstPage: 1, received: 2, loaded: 2))
        #expect(
            PageMetadata(numberOfPages: Int.max, numberOfTotalResults: Int.max).hasMorePages(after: 1, firstPage: 1, received: 2, loaded: 2)
        )
    }

    @Test func serverMetadataAtTheLimitsOfIntDoesNotTrap() throws {
        let (source, loader, recorder) = try PaginatedStateMachineTests.source(["totalHeader": "X-Total"], extra: [("keyPath", "items")])
        source.fetchData()
        loader.respond(
            0,
            json: [
                "items": PaginatedStateMachineTests.page([1, 2]), "page": JSON(Int.max), "page_size": JSON(Int.max),
                "number_of_pages": JSON(Int.max), "total_count": JSON(Int.max),
            ],
            headers: [(name: "X-Total", value: "99999999999999999999999")])
        #expect(recorder.events.last == "p.finished")
        #expect(source.fetchNextPage())
        loader.respond(1, json: ["items": PaginatedStateMachineTests.page([3]), "number_of_pages": JSON(Int.min), "total_count": "-1"])
        #expect(recorder.events.last == "p.finished")
        #expect(source.fetchNextPage(), "negative counts are ignored, as if absent")
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=3&page_size=2")
    }

    @Test func aFirstPageAtIntMinFromALibraryCallerDoesNotTrap() throws {
        var paginator = PaginatorConfiguration(firstPage: Int.min)
        paginator.maximumPages = 3
        let source = PaginatedDataSource(
            name: "p", identity: Identity(key: JSONKeyPath("id")),
            configuration: RemoteConfiguration(baseURL: "http://api.invalid", apiPath: "/items"),
            paginator: paginator, loader: FakeLoader())
        #expect(source.currentPage == Int.min)
    }

    @Test func displayingARowFarBeforeTheLastDoesNotTrap() throws {
        let (source, loader, _) = try PaginatedStateMachineTests.source(extra: [("prefetchDistance", 1_000_000)])
        source.fetchData()
        loader.respond(0, json: PaginatedStateMachineTests.page([1, 2]))
        source.willDisplayObject(at: IndexPath(section: 0, item: Int.min))
        #expect(loader.requestedURLs.count == 1, "a distance that does not fit is not within the prefetch distance")
        source.willDisplayObject(at: IndexPath(section: 0, item: 0))
        #expect(loader.requestedURLs.count == 2)
    }

    @Test func aRestoredRunGoesOnAndRefreshesWithCountsFromTheFile() throws {
        let store = MemoryPageStore()
        // The largest counts an entry may hold: every page received as many objects as its body could.
        Self.store(
            [
                Self.page(.first, [1, 2], received: 33_554_432, next: .page(2)),
                Self.page(.page(2), [3, 4], received: 33_554_432, next: .page(3)),
            ],
            currentPage: 2, duplicatesDropped: 67_108_860, in: store)
        let (source, loader, recorder) = try Self.source(store: store)
        source.fetchData()
        #expect(source.isStale && source.duplicatesDropped == 67_108_860 && source.rowsKeptByPages == 4)
        loader.respondNotModified(0)
        #expect(source.fetchNextPage())
        loader.respond(1, json: PaginatedStateMachineTests.page([5, 6]))
        #expect(recorder.events.last == "p.finished" && source.rowsKeptByPages == 6)
        var outcomes: [String] = []
        #expect(source.refresh { outcomes.append("\($0)") })
        loader.respondNotModified(2)
        loader.respond(3, json: PaginatedStateMachineTests.page([3, 4]))
        loader.respond(4, json: PaginatedStateMachineTests.page([5, 6]))
        #expect(outcomes.count == 1)
        #expect(Self.ids(source) == [1, 2, 3, 4, 5, 6, nil] && source.rowsKeptByPages == 6)
    }
}
