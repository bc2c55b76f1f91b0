import DataSources
import Foundation
import GRDB
import PageCache
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The store inside the test process: what it keeps, under which key, what it evicts.
@Suite struct SQLitePageStoreTests {
    let scratch = ScratchDirectory()
    let log = CapturedLog()

    /// The file's `PRAGMA user_version`, read by a connection of the test's own.
    static func schemaVersion(of path: String) throws -> Int? {
        let database = try DatabaseQueue(path: path)
        defer { try? database.close() }
        return try database.read { try Int.fetchOne($0, sql: "PRAGMA user_version") }
    }

    func key(_ name: String, secret: String = "token-1") -> PageCacheKey {
        PageCacheKey(
            material: "GET https://api.example.test/\(name) Authorization=Bearer \(secret)", label: "https://api.example.test/\(name)")
    }

    @Test func roundTrip() {
        let path = scratch.file("cache.sqlite")
        let payload = makePayload(7, count: 100_000)
        let store = SQLitePageStore(path: path, logger: log.logger)
        #expect(store.isAvailable)
        #expect(store.read(key("issues")) == nil)
        store.write(key("issues"), storedAt: 1_700_000_000.25, payload: { payload })
        let read = store.read(key("issues"))
        #expect(read?.payload == payload)
        #expect(read?.storedAt == 1_700_000_000.25)
        store.close()
        #expect(store.read(key("issues")) == nil, "a closed store answers nil")

        let reopened = SQLitePageStore(path: path, logger: log.logger)
        #expect(reopened.read(key("issues"))?.payload == payload, "the entry outlives the process's store")
        reopened.remove(key("issues"))
        #expect(reopened.read(key("issues")) == nil)
        reopened.close()
        #expect(log.warnings.isEmpty)
    }

    /// An entry of `count` pages whose page `index` is `makePayload(index)`, counting the pages made.
    final class Made: Sendable {
        let count = Atomic(0)
    }

    func pages(_ count: Int, unchanged: Int = 0, head: UInt8 = 200, made: Made) -> EntryPages {
        EntryPages(
            count: count, unchanged: unchanged, head: { makePayload(head, count: 64) },
            page: { index in
                made.count.add(1, ordering: .relaxed)
                return makePayload(UInt8(index), count: 3000)
            })
    }

    /// The debug line of each save says how many pages it kept as stored: none when the entry
    /// stored lacks the pages the save calls unchanged.
    @Test func eachSaveSaysThePagesItKept() throws {
        let debug = CapturedLog(level: .debug)
        let store = SQLitePageStore(path: scratch.file("cache.sqlite"), logger: debug.logger)
        let made = Made()
        store.write(key("issues"), storedAt: 1, entry: pages(3, made: made))
        store.write(key("issues"), storedAt: 2, entry: pages(4, unchanged: 3, made: made))
        store.write(key("other"), storedAt: 3, entry: pages(2, unchanged: 2, made: made))
        store.flush()
        let saves = debug.warnings.filter { $0.contains("page cache: stored") }.map { $0.components(separatedBy: ": ").last ?? "" }
        #expect(
            saves.map { $0.components(separatedBy: ", in").first ?? "" } == ["3 pages, 0 kept", "4 pages, 3 kept", "2 pages, 0 kept"],
            "\(saves)")
        store.close()
    }

    /// Saving the page after the last makes that page alone, whatever the entry holds; a
    /// claim of unchanged pages the stored entry does not hold makes them all again.
    @Test func savingThePageAfterTheLastWritesThatPage() throws {
        let path = scratch.file("cache.sqlite")
        let store = SQLitePageStore(path: path, logger: log.logger)
        let made = Made()
        store.write(key("issues"), storedAt: 1, entry: pages(3, made: made))
        store.write(key("issues"), storedAt: 2, entry: pages(4, unchanged: 3, head: 201, made: made))
        store.flush()
        #expect(made.count.load(ordering: .relaxed) == 4, "three pages, then the fourth alone")
        let read = try #require(store.read(key("issues")))
        #expect(read.payload == makePayload(201, count: 64) && read.storedAt == 2)
        #expect(read.pages == (0..<4).map { makePayload(UInt8($0), count: 3000) })
        #expect(store.readPage(key("issues"), at: 3) == makePayload(3, count: 3000))
        #expect(store.readPage(key("issues"), at: 4) == nil)

        // Fewer pages (a run that starts again): the rest go.
        store.write(key("issues"), storedAt: 3, entry: pages(1, made: made))
        #expect(store.read(key("issues"))?.pages.count == 1)
        // Unchanged pages the entry does not hold (another daemon wrote it shorter): all made.
        made.count.store(0, ordering: .relaxed)
        store.write(key("issues"), storedAt: 4, entry: pages(3, unchanged: 2, made: made))
        store.flush()
        #expect(made.count.load(ordering: .relaxed) == 3)
        #expect(store.read(key("issues"))?.pages == (0..<3).map { makePayload(UInt8($0), count: 3000) })
        store.write(key("other"), storedAt: 5, entry: pages(2, made: made))
        store.remove(key("issues"))
        #expect(store.entries()?.first?.bytes == 64 + 2 * 3000, "an entry's bytes are its head's and its pages'")
        store.close()
        let database = try DatabaseQueue(path: path)
        let (entries, stored) = try database.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM entry"), try Int.fetchOne(db, sql: "SELECT count(*) FROM page"))
        }
        try database.close()
        #expect(entries == 1 && stored == 2, "a removed entry's pages go with it")
        #expect(log.warnings.isEmpty)
    }

    /// The file is input: an entry's total edited to the ends of Int64 does not trap the next
    /// save, which stores the entry again.
    @Test func anEditedTotalDoesNotTrapTheNextSave() throws {
        let path = scratch.file("cache.sqlite")
        let store = SQLitePageStore(path: path, logger: log.logger)
        let made = Made()
        for edited in [Int64.min, Int64.max] {
            store.write(key("issues"), storedAt: 1, entry: pages(2, made: made))
            store.flush()
            let other = try DatabaseQueue(path: path)
            try other.write { try $0.execute(sql: "UPDATE entry SET bytes = ?", arguments: [edited]) }
            try other.close()
            store.write(key("issues"), storedAt: 2, entry: pages(3, unchanged: 2, made: made))
            #expect(store.read(key("issues"))?.pages.count == 3, "\(edited)")
        }
        store.close()
    }

    /// A file of schema 1 (each entry whole in one row) is taken up: its entries, of a format
    /// this version does not read, dropped, and pages stored from then on.
    @Test func aCacheOfTheSchemaBeforeIsMigrated() throws {
        let path = scratch.file("cache.sqlite")
        let old = try DatabaseQueue(path: path)
        try old.writeWithoutTransaction { db in
            try db.execute(
                sql: """
                    PRAGMA journal_mode = WAL;
                    CREATE TABLE entry (id INTEGER PRIMARY KEY, key BLOB NOT NULL UNIQUE, label TEXT NOT NULL, stored_at REAL NOT NULL,
                        used_at REAL NOT NULL, bytes INTEGER NOT NULL, payload BLOB NOT NULL);
                    CREATE INDEX entry_by_use ON entry(used_at);
                    INSERT INTO entry (key, label, stored_at, used_at, bytes, payload) VALUES (x'00', 'old', 1, 1, 3, x'010203');
                    PRAGMA application_id = 1685283684; PRAGMA user_version = 1;
                    """)
        }
        try old.close()
        let store = SQLitePageStore(path: path, logger: log.logger)
        #expect(store.isAvailable)
        #expect(store.entries()?.isEmpty == true, "schema 1's entries are dropped")
        let made = Made()
        store.write(key("issues"), storedAt: 1, entry: pages(2, made: made))
        #expect(store.read(key("issues"))?.pages.count == 2)
        store.close()
        #expect(try Self.schemaVersion(of: path) == 3)
        #expect(log.warnings.isEmpty)
    }

    @Test func theKeyMaterialIsNeverWritten() throws {
        let path = scratch.file("cache.sqlite")
        let secret = "s3cr3t-Zq8wX-\(UInt64.random(in: 0...UInt64.max))"
        let secretKey = PageCacheKey(
            material: "GET https://api.example.test/builds Authorization=Bearer \(secret)",
            label: "https://api.example.test/builds-label-\(secret.suffix(6))")
        let store = SQLitePageStore(path: path, logger: log.logger)
        store.write(secretKey, storedAt: 1, payload: { makePayload(1, count: 5000) })
        store.touch(secretKey, storedAt: 2)
        _ = store.read(secretKey)
        store.flush()
        // Open: the entry is in the WAL. Every file beside the database counts.
        let files = try FileManager.default.contentsOfDirectory(atPath: scratch.path).map(scratch.file)
        #expect(files.contains(path + "-wal"))
        let written = files.map(fileBytes)
        #expect(written.contains { contains($0, secretKey.label) }, "the search finds what is stored (the label)")
        #expect(!written.contains { contains($0, secret) })
        #expect(!written.contains { contains($0, "Authorization=Bearer") })
        store.close()
        let closed = fileBytes(path)
        #expect(contains(closed, secretKey.label))
        #expect(!contains(closed, secret))
        #expect(!log.warnings.contains { $0.contains(secret) })
    }

    @Test func twoSecretsNeverShareAnEntry() {
        let store = SQLitePageStore(path: scratch.file("cache.sqlite"), logger: log.logger)
        let alice = key("issues", secret: "alice-token"), bob = key("issues", secret: "bob-token")
        #expect(alice.label == bob.label)
        store.write(alice, storedAt: 1, payload: { makePayload(1, count: 300) })
        #expect(store.read(bob) == nil)
        store.write(bob, storedAt: 2, payload: { makePayload(2, count: 300) })
        #expect(store.read(alice)?.payload == makePayload(1, count: 300))
        #expect(store.read(bob)?.payload == makePayload(2, count: 300))
        #expect(store.entries()?.count == 2)
        store.close()
    }

    @Test func leastRecentlyUsedEntriesGoFirstAndTheBoundHolds() {
        let store = SQLitePageStore(path: scratch.file("cache.sqlite"), maximumBytes: 10_000, logger: log.logger)
        for name in ["a", "b", "c"] {
            store.write(key(name), storedAt: 1, payload: { makePayload(1, count: 3000) })
        }
        _ = store.read(key("a"))  // a is now used after b and c
        store.write(key("d"), storedAt: 1, payload: { makePayload(2, count: 3000) })
        #expect(store.read(key("b")) == nil, "b, the least recently used, was evicted")
        #expect(store.read(key("a")) != nil)
        #expect(store.read(key("c")) != nil)
        #expect(store.read(key("d")) != nil)
        // Used order now: a, c, d (each read above); e pushes out a.
        store.write(key("e"), storedAt: 1, payload: { makePayload(3, count: 3000) })
        #expect(store.read(key("a")) == nil)
        #expect(Set(store.entries()?.map(\.label) ?? []) == Set(["c", "d", "e"].map { key($0).label }))
        #expect((store.entries()?.reduce(0) { $0 + $1.bytes } ?? .max) <= 10_000)
        #expect(store.entries()?.first?.label == key("e").label, "most recently used first")
        #expect(log.warnings.isEmpty)
        store.close()
    }

    /// An entry written not evictable (a source's pending actions) stays however often the
    /// bound is reached, while the least recently used others go.
    @Test func anEntryNotEvictableStaysWhenTheBoundIsReached() {
        let store = SQLitePageStore(path: scratch.file("cache.sqlite"), maximumBytes: 10_000, logger: log.logger)
        store.write(key("pending"), storedAt: 1, evictable: false, payload: { makePayload(9, count: 3000) })
        for (index, name) in ["a", "b", "c", "d", "e"].enumerated() {
            store.write(key(name), storedAt: 1, payload: { makePayload(UInt8(index), count: 3000) })
        }
        #expect(store.read(key("pending"))?.payload == makePayload(9, count: 3000), "the oldest, but not evictable")
        #expect(Set(store.entries()?.map(\.label) ?? []) == Set(["pending", "d", "e"].map { key($0).label }))
        #expect((store.entries()?.reduce(0) { $0 + $1.bytes } ?? .max) <= 10_000)
        // Written again as evictable (no action left pending), it goes like any other.
        store.write(key("pending"), storedAt: 2, payload: { makePayload(9, count: 3000) })
        store.write(key("f"), storedAt: 1, payload: { makePayload(5, count: 3000) })
        store.write(key("g"), storedAt: 1, payload: { makePayload(6, count: 3000) })
        store.write(key("h"), storedAt: 1, payload: { makePayload(7, count: 3000) })
        #expect(store.read(key("pending")) == nil)
        #expect(log.warnings.isEmpty)
        store.close()
    }

    /// A file of schema 2 keeps its entries when migrated, each evictable as before.
    @Test func aCacheOfSchemaTwoKeepsItsEntries() throws {
        let path = scratch.file("cache.sqlite")
        let made = Made()
        let first = SQLitePageStore(path: path, logger: log.logger)
        first.write(key("issues"), storedAt: 1, entry: pages(2, made: made))
        first.close()
        // Back to schema 2 as it was: no `evictable` column.
        let old = try DatabaseQueue(path: path)
        try old.writeWithoutTransaction { db in
            try db.execute(
                sql: """
                    ALTER TABLE entry DROP COLUMN evictable;
                    PRAGMA user_version = 2;
                    """)
        }
        try old.close()
        let store = SQLitePageStore(path: path, maximumBytes: 10_000, logger: log.logger)
        #expect(store.isAvailable)
        #expect(store.read(key("issues"))?.pages.count == 2, "schema 2's entries are kept")
        store.write(key("pending"), storedAt: 1, evictable: false, payload: { makePayload(9, count: 3000) })
        store.write(key("other"), storedAt: 1, payload: { makePayload(1, count: 3000) })
        store.write(key("more"), storedAt: 1, payload: { makePayload(2, count: 3000) })
        #expect(store.read(key("issues")) == nil, "the migrated entry is evictable")
        #expect(store.read(key("pending")) != nil)
        store.close()
        #expect(try Self.schemaVersion(of: path) == 3)
        #expect(log.warnings.isEmpty)
    }

    @Test func anEntryLargerThanTheBoundIsNotStored() {
        let store = SQLitePageStore(path: scratch.file("cache.sqlite"), maximumBytes: 10_000, logger: log.logger)
        store.write(key("small"), storedAt: 1, payload: { makePayload(1, count: 4000) })
        store.write(key("big"), storedAt: 1, payload: { makePayload(1, count: 6000) })
        store.write(key("big"), storedAt: 2, payload: { makePayload(1, count: 10_001) })
        store.write(key("big"), storedAt: 3, payload: { makePayload(1, count: 10_002) })
        #expect(store.read(key("big")) == nil, "the older entry under that key went too")
        #expect(store.read(key("small")) != nil, "nothing was evicted for it")
        #expect(store.isAvailable)
        #expect(log.warnings.count == 1, "one warning per key: \(log.warnings)")
        #expect(log.warnings.first?.contains("10001 bytes") == true)
        store.close()
    }

    @Test func filesAreTheOwnersAlone() throws {
        let directory = scratch.file("new/datasourced")
        let path = directory + "/cache.sqlite"
        let store = SQLitePageStore(path: path, logger: log.logger)
        store.write(key("issues"), storedAt: 1, payload: { makePayload(1, count: 1000) })
        _ = store.read(key("issues"))
        #expect(permissions(scratch.file("new")) == 0o700)
        #expect(permissions(directory) == 0o700)
        for file in [path, path + "-wal", path + "-shm"] {
            #expect(permissions(file) == 0o600, "\(file): \(String(permissions(file) ?? 0, radix: 8))")
        }
        store.close()

        // A file of ours someone opened to others is narrowed when opened, the owner's bits
        // kept (a read-only file stays read-only). Files not ours are never changed:
        // ForeignFileTests.
        let loose = scratch.file("loose.sqlite")
        SQLitePageStore(path: loose, logger: log.logger).close()
        for (found, narrowed) in [(0o644, 0o600), (0o640, 0o600), (0o444, 0o400)] as [(mode_t, mode_t)] {
            chmod(loose, found)
            let other = SQLitePageStore(path: loose, logger: log.logger)
            #expect(permissions(loose) == narrowed, "\(String(found, radix: 8)) → \(String(permissions(loose) ?? 0, radix: 8))")
            other.close()
        }
    }

    @Test func aReadSeesTheWritesQueuedBeforeIt() {
        let store = SQLitePageStore(path: scratch.file("cache.sqlite"), logger: log.logger)
        let caller = pthread_self()
        final class Count: Sendable { let value = Atomic<Int>(0) }
        let ranElsewhere = Count()
        for index in 0..<40 {
            store.write(
                key("page-\(index)"), storedAt: Double(index),
                payload: {
                    if pthread_equal(pthread_self(), caller) == 0 { ranElsewhere.value.add(1, ordering: .relaxed) }
                    return makePayload(UInt8(index), count: 50_000)
                })
        }
        store.remove(key("page-3"))
        store.write(key("page-5"), storedAt: 500, payload: { makePayload(99, count: 10) })
        // Straight after the calls, with no flush: each read waits behind the writes.
        for index in 0..<40 where index != 3 && index != 5 {
            #expect(store.read(key("page-\(index)"))?.payload == makePayload(UInt8(index), count: 50_000), "page \(index)")
        }
        #expect(store.read(key("page-3")) == nil)
        #expect(store.read(key("page-5"))?.storedAt == 500)
        #expect(ranElsewhere.value.load(ordering: .relaxed) == 40, "payloads are made on the store's queue")
        store.close()
    }

    @Test func touchUpdatesStoredAtAndUse() {
        let store = SQLitePageStore(path: scratch.file("cache.sqlite"), maximumBytes: 7000, logger: log.logger)
        store.write(key("a"), storedAt: 100, payload: { makePayload(1, count: 3000) })
        store.write(key("b"), storedAt: 100, payload: { makePayload(2, count: 3000) })
        store.touch(key("a"), storedAt: 250.5)
        #expect(store.read(key("a"))?.storedAt == 250.5)
        #expect(store.read(key("a"))?.payload == makePayload(1, count: 3000), "the payload is kept")
        store.touch(key("missing"), storedAt: 1)
        #expect(store.read(key("missing")) == nil)
        store.touch(key("b"), storedAt: 300)
        // b was confirmed last, so a goes when c needs room.
        store.write(key("c"), storedAt: 100, payload: { makePayload(3, count: 3000) })
        #expect(store.read(key("a")) == nil)
        #expect(store.read(key("b"))?.storedAt == 300)
        store.close()
    }

    @Test func clearAndListForTheCommands() {
        let store = SQLitePageStore(path: scratch.file("cache.sqlite"), logger: log.logger)
        store.write(key("a"), storedAt: 10, payload: { makePayload(1, count: 123) })
        store.write(key("b"), storedAt: 20, payload: { makePayload(1, count: 456) })
        let listed = store.entries() ?? []
        #expect(listed.map(\.label) == [key("b").label, key("a").label])
        #expect(listed.map(\.bytes) == [456, 123])
        #expect(listed.map(\.storedAt) == [20, 10])
        #expect(listed.allSatisfy { $0.usedAt > 1_600_000_000 })
        #expect(store.removeAll() == 2)
        #expect(store.entries()?.isEmpty == true)
        #expect(store.read(key("a")) == nil)
        store.close()
    }

    @Test func defaultPath() {
        #expect(
            SQLitePageStore.defaultPath(environment: ["XDG_CACHE_HOME": "/x/cache", "HOME": "/home/u"])
                == "/x/cache/datasourced/cache.sqlite")
        #expect(SQLitePageStore.defaultPath(environment: ["HOME": "/home/u"]) == "/home/u/.cache/datasourced/cache.sqlite")
        #expect(
            SQLitePageStore.defaultPath(environment: ["XDG_CACHE_HOME": "relative", "HOME": "/home/u"])
                == "/home/u/.cache/datasourced/cache.sqlite")
        #expect(
            SQLitePageStore.defaultPath(environment: ["XDG_CACHE_HOME": "", "HOME": "/home/u"]) == "/home/u/.cache/datasourced/cache.sqlite"
        )
    }

    @Test func theFileIsMarkedAsOurs() throws {
        let path = scratch.file("cache.sqlite")
        SQLitePageStore(path: path, logger: log.logger).close()
        let database = try DatabaseQueue(path: path)
        let (application, version, journal) = try database.read { db in
            (
                try Int32.fetchOne(db, sql: "PRAGMA application_id"), try Int.fetchOne(db, sql: "PRAGMA user_version"),
                try String.fetchOne(db, sql: "PRAGMA journal_mode")
            )
        }
        try database.close()
        #expect(application == 0x6473_6364)
        #expect(version == 3)
        #expect(journal == "wal")
    }
}
