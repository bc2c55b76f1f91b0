import FuzzSupport
@testable import DataSources
import JSONKit

// libFuzzer target: bytes as a persisted cache entry, read by a paginated source when its
// list opens (the restore path), then pages fetched, refreshed and stored against a canned
// server. Byte 0 picks the source (strategy, duplicates, mapping, cross-origin, credentials
// in the base URL), byte 1 its maxPages, byte 2 seeds the server's answers. The rest is the
// entry's head, then its pages, split at each 0xFF 0x00; byte 3's low bit says whether each
// part is stored as it is (header, checksum and all: damage) or is the packed document after
// a header of its kind with a matching checksum (an edit by someone who knows the format).
//
// Checks: nothing traps; an entry the source refuses is removed and reported, shows no row
// and the first page is asked for unconditionally; an entry it accepts decodes, and its rows
// are exactly the rows of its pages; after every answer the rows held are those the loaded
// pages account for; no request leaves the origin unless allowed; what the source stores it
// accepts again, and it never holds the base URL's password.

@_cdecl("LLVMFuzzerTestOneInput")
public func cacheEntryFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard bytes.count >= 4 else { return 0 }
    var run = EntryRun(configuration: bytes[0], maximumPages: bytes[1], seed: bytes[2], sealed: bytes[3] & 1 == 1, rest: Array(bytes[4...]))
    run.check()
    return 0
}

/// One source, one entry, and a few rounds with the server.
struct EntryRun {
    static let key = PageCacheKey(material: "fuzz", label: "http://api.invalid/items")
    static let password = "FUZZPW"

    let configuration: RemoteConfiguration
    let paginator: PaginatorConfiguration
    let store = EntryStore()
    let entry: StoredPages
    var random: UInt64

    init(configuration choice: UInt8, maximumPages: UInt8, seed: UInt8, sealed: Bool, rest: [UInt8]) {
        let base = choice & 0x40 != 0 ? "http://fuzzuser:\(Self.password)@api.invalid" : "http://api.invalid"
        var configuration = RemoteConfiguration(
            baseURL: base, headers: [("Authorization", "Bearer TOKEN")], apiPath: "/items", keyPath: JSONKeyPath("items"))
        if choice & 0x10 != 0 {
            configuration.mapping = ObjectMapping(fields: [
                ("id", .field(keyPath: nil, type: .any, defaultValue: nil, nested: nil, items: nil)),
                ("title", .field(keyPath: JSONKeyPath("name"), type: .any, defaultValue: nil, nested: nil, items: nil)),
            ])
        }
        configuration.cache = CacheSettings(enabled: true)
        configuration.maximumDepth = 16
        configuration.maximumBodySize = 1 << 16
        var paginator = PaginatorConfiguration(pageSize: 2)
        switch (choice & 7) % 5 {
        case 0: paginator.strategy = .pageNumber
        case 1:
            paginator.strategy = .offset(
                offsetKey: "offset", limitKey: "limit", nextOffsetPath: choice & 0x80 != 0 ? JSONKeyPath("nextOffset") : nil)
        case 2: paginator.strategy = .cursor(cursorKey: "cursor", cursorPath: JSONKeyPath("next"), fromLastObject: nil, hasMorePath: nil)
        case 3: paginator.strategy = .nextURL(path: JSONKeyPath("next"), hasMorePath: nil)
        default: paginator.strategy = .linkHeader
        }
        paginator.duplicates = choice & 8 != 0 ? .keep : .dropLater
        paginator.allowCrossOrigin = choice & 0x20 != 0
        paginator.maximumPages = maximumPages < 128 ? 1 + Int(maximumPages % 8) : 1000
        self.configuration = configuration
        self.paginator = paginator
        let parts = Self.parts(of: rest)
        entry = StoredPages(
            payload: sealed ? CachedPages.sealed(parts[0]) : parts[0],
            pages: parts.dropFirst().map { sealed ? CachedPages.sealed($0, prefix: CachedPages.pageHeaderPrefix) : $0 }, storedAt: 1)
        random = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 | 1
    }

    /// `bytes` split at each 0xFF 0x00: the head first, then the pages (at most 64).
    static func parts(of bytes: [UInt8]) -> [[UInt8]] {
        var parts: [[UInt8]] = [[]]
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0xFF, index + 1 < bytes.count, bytes[index + 1] == 0, parts.count < 65 {
                parts.append([])
                index += 2
            } else {
                parts[parts.count - 1].append(bytes[index])
                index += 1
            }
        }
        return parts
    }

    func makeSource(_ loader: CannedServer) -> (PaginatedDataSource, Warnings) {
        let source = PaginatedDataSource(
            name: "p", identity: Identity(key: JSONKeyPath("id")), configuration: configuration, paginator: paginator,
            loader: loader)
        let warnings = Warnings()
        source.attachCache(store, key: Self.key, warn: { warnings.lines.append($0) })
        return (source, warnings)
    }

    mutating func next(_ bound: Int) -> Int {
        random = random &* 6364136223846793005 &+ 1442695040888963407
        return Int((random >> 33) % UInt64(bound))
    }

    mutating func check() {
        store.entries[Self.key] = entry
        let server = CannedServer(
            origin: URLResolution.origin(of: configuration.baseURL) ?? "", allowCrossOrigin: paginator.allowCrossOrigin)
        let (source, warnings) = makeSource(server)
        source.fetchData()
        let decoded = try? CachedPages.decode(entry, limits: CachedPages.Limits(configuration)).get()
        require(server.pending.count == 1, "fetchData made \(server.pending.count) requests")
        if warnings.lines.isEmpty {
            guard let decoded else { fail("an entry that does not decode was accepted") }
            require(source.isStale, "an accepted entry is not shown as stale")
            require(store.entries[Self.key] != nil, "an accepted entry was removed")
            let rows = decoded.pages.reduce(0) { $0 + $1.rows.count }
            require(source.objects.count == rows, "\(source.objects.count) rows shown for \(rows) in the entry")
        } else if source.isStale {
            // A page after the first screen's was refused: the rows of the pages before it stay.
            require(warnings.lines.count == 1, "\(warnings.lines.count) warnings for one entry")
            require(store.entries[Self.key] == nil, "a refused entry stays in the store")
            require(
                source.objects.count >= PaginatedDataSource.rowsReadAtOnce,
                "a refused entry showed \(source.objects.count) rows, fewer than a first screen")
        } else {
            require(warnings.lines.count == 1, "\(warnings.lines.count) warnings for one entry")
            require(warnings.lines[0].contains(Self.key.label), "the warning does not name the label: \(warnings.lines[0])")
            require(store.entries[Self.key] == nil, "a refused entry stays in the store")
            require(source.objects.isEmpty, "a refused entry shows rows")
            require(source.allObjects == [Placeholder.loadingRow], "a refused entry leaves rows \(source.allObjects)")
            require(
                !server.pending[0].request.headers.contains { $0.name == "If-None-Match" || $0.name == "If-Modified-Since" },
                "a refused entry's validators were sent")
        }
        requireConsistent(source)

        for _ in 0..<12 {
            switch next(6) {
            case 0, 1, 2:
                guard let index = server.pending.indices.first(where: { !server.pending[$0].answered }) else {
                    source.fetchNextPage()
                    continue
                }
                server.answer(index, with: next(256), page: index)
            case 3:
                source.fetchNextPage()
            case 4:
                source.refresh { _ in }
            default:
                if next(4) == 0 { source.fetchData() } else { source.willDisplayObject(at: IndexPath(section: 0, item: next(8))) }
            }
            requireConsistent(source)
        }

        // What the source stored it accepts again, without a password.
        if let stored = store.entries[Self.key], stored.payload != entry.payload || stored.pages != entry.pages {
            require(
                !String(decoding: stored.payload + stored.pages.joined(), as: UTF8.self).contains(Self.password),
                "the stored entry holds the base URL's password")
            let (again, againWarnings) = makeSource(CannedServer(origin: "", allowCrossOrigin: true))
            again.fetchData()
            require(againWarnings.lines.isEmpty, "the source refuses what it stored: \(againWarnings.lines)")
            require(again.objects.count == again.rowsKeptByPages, "the rows restored are not those of the pages")
        }
    }

    private func requireConsistent(_ source: PaginatedDataSource) {
        require(
            source.objects.count == source.rowsKeptByPages,
            "\(source.objects.count) rows held for \(source.rowsKeptByPages) kept by the pages")
    }
}

/// Warnings a source gave.
final class Warnings {
    var lines: [String] = []
}

/// The persisted cache in memory.
final class EntryStore: PageCacheStore {
    var entries: [PageCacheKey: StoredPages] = [:]
    func read(_ key: PageCacheKey) -> StoredPages? { entries[key] }
    func write(_ key: PageCacheKey, storedAt: Double, entry: EntryPages) { entries[key] = entry.stored(over: entries[key], at: storedAt).0 }
    func touch(_ key: PageCacheKey, storedAt: Double) {}
    func remove(_ key: PageCacheKey) { entries[key] = nil }
    var isAvailable: Bool { true }
    func flush() {}
}

/// A server whose answers the run picks: pages for every strategy (a next page, the last,
/// duplicates, a next link elsewhere or with a port that does not fit, counts at the limits
/// of `Int`), a 304, an error. Checks that no request leaves the origin unless allowed.
final class CannedServer: RemoteLoading {
    struct Pending {
        let request: RemoteRequest
        let decode: @Sendable (RemoteResponse) -> Result<DecodedResponse, FetchError>
        let completion: (Result<DecodedResponse, FetchError>) -> Void
        var replied = false
        let handle = FetchHandle()
        /// Replied to, or cancelled by the source.
        var answered: Bool { replied || handle.isCancelled }
    }

    let origin: String
    let allowCrossOrigin: Bool
    var pending: [Pending] = []

    init(origin: String, allowCrossOrigin: Bool) {
        self.origin = origin
        self.allowCrossOrigin = allowCrossOrigin
    }

    func load(
        _ request: RemoteRequest, decode: @escaping @Sendable (RemoteResponse) -> Result<DecodedResponse, FetchError>,
        completion: @escaping (Result<DecodedResponse, FetchError>) -> Void
    ) -> FetchHandle {
        if !allowCrossOrigin, !origin.isEmpty, URLResolution.origin(of: request.url) != origin {
            fail("a request left the origin \(origin): \(URLResolution.redacted(request.url))")
        }
        if URLResolution.authorityProblem(in: request.url) != nil {
            fail("a request to an unusable URL: \(URLResolution.redacted(request.url))")
        }
        pending.append(Pending(request: request, decode: decode, completion: completion))
        return pending[pending.count - 1].handle
    }

    func answer(_ index: Int, with choice: Int, page: Int) {
        guard !pending[index].answered else { return }
        pending[index].replied = true
        let request = pending[index]
        let first = 2 * page + 1
        let items = "[{\"id\":\(first),\"name\":\"n\"},{\"id\":\(first + 1)}]"
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json")]
        var status = 200
        let body: String
        switch choice % 12 {
        case 0: body = #"{"items":\#(items),"next":"c\#(page)","nextOffset":\#(first + 1)}"#
        case 1:
            body =
                #"{"items":\#(items),"next":"/items?p=\#(page + 1)","total_count":9223372036854775807,"number_of_pages":9223372036854775807}"#
        case 2:
            body = #"{"items":\#(items)}"#
            headers.append(("Link", "</items?p=\(page + 1)>; rel=\"next\""))
        case 3: body = #"{"items":[{"id":1},{"id":1},{"id":2}],"next":"c","nextOffset":9223372036854775807,"page":-9223372036854775808}"#
        case 4: body = #"{"items":[]}"#
        case 5: body = #"{"items":\#(items),"next":"http://elsewhere.invalid/steal","nextOffset":0}"#
        case 6: body = #"{"items":\#(items),"next":"http://api.invalid:18446744073709551617/x"}"#
        case 7:
            status = 304
            body = ""
        case 8:
            status = 500
            body = #"{"detail":"down"}"#
        case 9:
            body = #"{"items":\#(items),"next":"c\#(page)"}"#
            headers.append(("ETag", "\"e\(page)\""))
        case 10:
            body = #"{"items":\#(items),"next":null}"#
            headers.append(("Link", "<http://fuzzuser:FUZZPW@api.invalid/items?p=\(page + 1)>; rel=\"next\""))
        default: body = #"{"items":[{"id":9,"name":"x","deep":[[[[1]]]]},7,null],"number_of_pages":0,"total_count":-1}"#
        }
        let response = RemoteResponse(
            url: URLResolution.redacted(request.request.url), status: status, headers: headers, body: Array(body.utf8))
        request.completion(request.decode(response))
    }
}

private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
}

private func fail(_ message: String) -> Never {
    fatalError("cache entry invariant: \(message)")
}

// The entry point (FUZZING.md, "Entry point"): in this file, beside the test function.
@_cdecl("fuzz_cacheentry_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runLibFuzzer(argc, argv, cacheEntryFuzzerTestOneInput)
}
