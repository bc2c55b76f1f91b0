@testable import Daemon
@testable import DataSources
import JSONKit
import Testing

/// A persisted entry is input like a response (issue 27): every number range-checked, next
/// URLs held to the origin, no credentials written, a checksum; a bad entry is dropped and
/// the list refetched.
@Suite struct CacheEntryValidationTests {
    static let key = CacheAndRefreshTests.key

    /// A paginated source over `baseURL` with the cache on, attached to `store`.
    static func source(_ pagination: JSON = [:], baseURL: String = "http://api.invalid", headers: JSON = [:], extra: [(String, JSON)] = [],
                       store: MemoryPageStore) throws -> (PaginatedDataSource, FakeLoader, Recorder) {
        let loader = FakeLoader()
        let params = JSON.object([("name", "p"), ("kind", "paginated"), ("identityKey", "id"),
                                  ("remoteConfiguration", ["baseURL": JSON(baseURL), "headers": headers]), ("apiPath", "/items"),
                                  ("pageSize", 2), ("pagination", pagination), ("cache", ["enabled": true])] + extra)
        guard case .paginated(let configuration, let paginator) = try SourceSpec.decoding(createSourceParams: params).kind else {
            throw DataSourceError(field: "kind", expected: "paginated", got: nil, message: "not paginated")
        }
        let source = PaginatedDataSource(name: "p", identity: Identity(key: JSONKeyPath("id")), configuration: configuration,
                                         paginator: paginator, loader: loader, errorRow: \.placeholderRow)
        source.attachCache(store, key: key)
        return (source, loader, Recorder().observing(source))
    }

    static func rows(_ ids: [Int]) -> [JSON] { ids.map { ["id": JSON($0)] } }

    static func page(_ request: PaginatedDataSource.PageRequest, _ ids: [Int], received: Int? = nil,
                     next: PaginatedDataSource.PageRequest?, etag: String? = "\"v1\"") -> CachedPages.Page {
        CachedPages.Page(request: request, validators: Validators(etag: etag), rows: rows(ids), received: received ?? ids.count,
                         next: next, metadata: PageMetadata())
    }

    /// Stores `pages` as this version writes an entry (checksum and all): what a person or
    /// another process that edits the file could write.
    static func store(_ pages: [CachedPages.Page], currentPage: Int? = nil, duplicatesDropped: Int = 0, in store: MemoryPageStore) {
        let entry = CachedPages(pages: pages, currentPage: currentPage ?? pages.count, duplicatesDropped: duplicatesDropped)
        store.entries[key] = StoredPages(payload: entry.encoded(), storedAt: WallClock.secondsSince1970())
    }

    static func ids(_ source: DataSource) -> [Int?] { source.allObjects.map { $0["id"]?.integerValue } }

    /// What a source does with an entry it refuses: shows nothing of it, asks for the first
    /// page unconditionally, and removes the entry.
    static func expectRefused(_ source: PaginatedDataSource, _ loader: FakeLoader, _ store: MemoryPageStore,
                              sourceLocation: SourceLocation = #_sourceLocation) {
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
        let payload = try #require(store.entries[Self.key]?.payload)
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
        Self.store([Self.page(.first, [1, 2], received: Int.max, next: .page(2)), Self.page(.page(2), [3, 4], received: Int.max, next: .page(3))],
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
        let (source, loader, _) = try Self.source(["strategy": "nextURL"], headers: ["Authorization": "Bearer TOKEN"],
                                                  extra: [("keyPath", "items")], store: store)
        source.fetchData()
        #expect(!source.isStale, "the entry is not shown")
        #expect(store.entries[Self.key] == nil, "the entry is dropped")
        loader.respond(0, json: ["items": .array(Self.rows([1, 2]))])
        source.fetchNextPage()
        #expect(!loader.requestedURLs.contains { $0.contains("evil.invalid") })
    }

    // MARK: Defect 7: integrity

    /// `payload` with the first `old` replaced by `new` (of the same length): a flipped byte.
    static func replacing(_ old: String, with new: String, in payload: [UInt8]) throws -> [UInt8] {
        let needle = Array(old.utf8)
        let at = try #require((0...(payload.count - needle.count)).first { payload[$0..<$0 + needle.count].elementsEqual(needle) })
        var edited = payload
        edited.replaceSubrange(at..<at + needle.count, with: Array(new.utf8))
        return edited
    }

    @Test func aByteFlippedEntryIsDroppedAndRefetchedNotConfirmedByA304() throws {
        let store = MemoryPageStore()
        try CacheAndRefreshTests.seed(store)
        let stored = try #require(store.entries[Self.key])
        let text = String(decoding: stored.payload, as: UTF8.self)
        let id3 = text.contains(#""id":3"#) ? #""id":3"# : #""id": 3"#
        store.entries[Self.key] = StoredPages(payload: try Self.replacing(id3, with: id3.replacing("3", with: "9"), in: stored.payload),
                                              storedAt: stored.storedAt)
        let (source, loader, _) = try Self.source(store: store)
        Self.expectRefused(source, loader, store)
        #expect(!Self.ids(source).contains(9), "a row the server never sent is never shown")
    }

    // MARK: Defect 16: a port that does not fit

    @Test func anAPIPathWhosePortIsOutsideOneTo65535IsRefusedAtCreation() throws {
        for port in ["18446744073709551617", "18446744073709551616", "65536", "0", "99999999999999999999999"] {
            let params: JSON = ["name": "r", "kind": "remote", "remoteConfiguration": ["baseURL": "http://127.0.0.1:8080"],
                                "apiPath": JSON("http://127.0.0.1:\(port)/items")]
            let refusal = wireRefusal { _ = try SourceSpec.decoding(createSourceParams: params) }
            #expect(refusal?.data?["field"] == "apiPath", "port \(port)")
            #expect(refusal?.message.contains("1...65535") == true, "port \(port): \(refusal?.message ?? "accepted")")
        }
        for path in ["http://127.0.0.1:65535/items", "http://127.0.0.1:1/items", "/items", "items?x=1", "http://127.0.0.1:/items"] {
            let params: JSON = ["name": "r", "kind": "remote", "remoteConfiguration": ["baseURL": "http://127.0.0.1:8080"], "apiPath": JSON(path)]
            #expect(wireRefusal { _ = try SourceSpec.decoding(createSourceParams: params) } == nil, "\(path)")
        }
    }

    @Test func aNextURLFromTheServerWhosePortDoesNotFitFailsTheFetch() throws {
        let (source, loader, recorder) = try PaginatedStateMachineTests.source(["strategy": "nextURL", "allowCrossOrigin": true], extra: [("keyPath", "items")])
        source.fetchData()
        loader.respond(0, json: ["items": PaginatedStateMachineTests.page([1, 2]), "next": "http://api.invalid:18446744073709551617/items?page=2"])
        #expect(recorder.errors.last?["kind"] == "transport")
        #expect(recorder.errors.last?["message"]?.stringValue?.contains("1...65535") == true)
        #expect(!source.fetchNextPage())
        #expect(loader.requestedURLs.count == 1)
    }
}
