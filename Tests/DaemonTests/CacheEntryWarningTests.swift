@testable import Daemon
@testable import DataSources
import JSONKit
import Logging
import Basics
import Testing

/// The persisted cache in memory, shared by the daemons of one test (each on its own thread).
private final class SharedPageStore: PageCacheStore, @unchecked Sendable {
    private let entries = LockedValue<[PageCacheKey: StoredPages]>([:])

    var all: [PageCacheKey: StoredPages] { entries.withLock { $0 } }
    func read(_ key: PageCacheKey) -> StoredPages? { entries.withLock { $0[key] } }
    func write(_ key: PageCacheKey, storedAt: Double, entry: EntryPages) {
        entries.withLock { $0[key] = entry.stored(over: $0[key], at: storedAt).0 }
    }
    func touch(_ key: PageCacheKey, storedAt: Double) {}
    func remove(_ key: PageCacheKey) { _ = entries.withLock { $0.removeValue(forKey: key) } }
    var isAvailable: Bool { true }
    func flush() {}
    func replace(_ key: PageCacheKey, with entry: StoredPages) { entries.withLock { $0[key] = entry } }
}

/// What the daemon logged at warning level and above.
private final class Warnings: Sendable {
    let lines = LockedValue<[String]>([])

    var handler: LogHandler { Handler(warnings: self) }

    private struct Handler: LogHandler {
        let warnings: Warnings
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .warning
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            if event.level >= .warning { warnings.lines.withLock { $0.append("\(event.message)") } }
        }
    }
}

@Suite struct CacheEntryWarningTests {
    static let url = "http://cache.invalid/items"
    static let body = #"[{"id":1,"title":"one"},{"id":2,"title":"two"}]"#

    /// One daemon's session: create the cached remote source and load it.
    private static func session(_ store: SharedPageStore, _ fetcher: ScriptedFetcher, warnings: Warnings) -> JSON {
        let client = WireClient(fetcher: fetcher, cache: store, logHandler: warnings.handler)
        _ = client.request("initialize")
        _ = client.request(
            "createSource",
            [
                "name": "r", "kind": "remote", "identityKey": "id", "remoteConfiguration": ["baseURL": "http://cache.invalid"],
                "apiPath": "/items", "cache": ["enabled": true],
            ])
        _ = client.request("fetchData", ["source": "r", "wait": true])
        return client.request("allObjects", ["source": "r"])
    }

    @Test func aDamagedEntryIsDroppedWithAWarningNamingItsLabelAndTheListIsFetchedAgain() throws {
        let store = SharedPageStore()
        let fetcher = ScriptedFetcher([
            Self.url: .success(RemoteResponse(url: Self.url, status: 200, contentType: "application/json", body: Array(Self.body.utf8)))
        ])
        let warnings = Warnings()
        _ = Self.session(store, fetcher, warnings: warnings)
        let (key, entry) = try #require(store.all.first)
        #expect(key.label == Self.url)

        // A byte flipped on disk: "one" becomes "oNe".
        var damaged = entry.payload
        let at = try #require(damaged.indices.first { damaged[$0] == UInt8(ascii: "n") })
        damaged[at] = UInt8(ascii: "N")
        store.replace(key, with: StoredPages(payload: damaged, storedAt: entry.storedAt))

        let rows = Self.session(store, fetcher, warnings: warnings)
        #expect(rows["result"] == (try JSON.parse(Self.body)), "the rows are the server's, not the damaged entry's")
        let logged = warnings.lines.withLock { $0 }
        #expect(logged.count == 1 && logged.first?.contains("dropped the cache entry for \(Self.url)") == true, "\(logged)")
        #expect(logged.first?.contains("checksum") == true, "\(logged)")
        #expect(fetcher.requested == [Self.url, Self.url])
        #expect(store.all[key]?.payload == entry.payload, "the refetched page is stored again")
    }
}
