import DataSources
import Foundation
import GRDB
import GRDBSQLite

/// The cache's SQLite file through one GRDB connection: recognising it, its schema, and
/// each statement the store runs. Every method is called on the store's queue.
///
/// A DatabaseQueue (one connection), not a DatabasePool: the store already runs every read
/// and write of this process one after another on its own serial queue (a read must see the
/// writes queued before it), so a pool's extra reader connections would never be used at
/// once. Another daemon is another process with its own connection; SQLite's file locks in
/// WAL mode let its readers run beside our writer, and the busy timeout queues the writers.
final class CacheDatabase {
    /// "dscd" in the file's header, so a file is known as ours before any table is read.
    static let applicationID: Int32 = 0x6473_6364
    /// `PRAGMA user_version`: the schema below. A later schema migrates from it; a file with
    /// a larger number was made by a newer datasourced and is left alone. 1: each entry whole
    /// in one row; 2: an entry's pages in rows of their own (`page`), so that saving the page
    /// after the last writes that page; 3: entries the bound never evicts (`evictable` 0). A
    /// file of an earlier schema is migrated when opened (`migrate`).
    static let schemaVersion: Int32 = 3
    /// How long a write waits for another daemon's write lock before it is skipped.
    static let busyTimeout: TimeInterval = 5

    private static let schema = """
        CREATE TABLE entry (
            id INTEGER PRIMARY KEY,
            key BLOB NOT NULL UNIQUE,  -- SHA-256 of the key's material, never the material
            label TEXT NOT NULL,
            stored_at REAL NOT NULL,
            used_at REAL NOT NULL,
            bytes INTEGER NOT NULL,
            evictable INTEGER NOT NULL DEFAULT 1,  -- 0: pending actions, never evicted
            payload BLOB NOT NULL      -- the head (how many pages, where the run stands); last: listing and eviction never read it
        );
        CREATE INDEX entry_by_use ON entry(used_at);
        """

    /// Schema 2's own: the pages of each entry, in order.
    private static let pagesSchema = """
        CREATE TABLE page (
            id INTEGER PRIMARY KEY,
            entry INTEGER NOT NULL,    -- entry.id
            ordinal INTEGER NOT NULL,  -- 0, 1, ... in the entry
            bytes INTEGER NOT NULL,
            payload BLOB NOT NULL,
            UNIQUE (entry, ordinal)
        );
        """

    private let connection: DatabaseQueue

    private init(connection: DatabaseQueue) {
        self.connection = connection
    }

    /// A new cache file, whole: the schema, our application id and schema version, in
    /// SQLite's file format (page 1 onwards, as `sqlite3_serialize` gives an in-memory
    /// database). `CacheFile.create` links it into place, so a cache file is ours from its
    /// first byte.
    static func newFileImage() throws(CacheProblem) -> [UInt8] {
        do {
            let memory = try DatabaseQueue()
            defer { try? memory.close() }
            return try memory.writeWithoutTransaction { db in
                try db.execute(sql: schema)
                try db.execute(sql: pagesSchema)
                try db.execute(sql: "PRAGMA application_id = \(applicationID); PRAGMA user_version = \(schemaVersion)")
                var size: sqlite3_int64 = 0
                guard let bytes = sqlite3_serialize(db.sqliteConnection, "main", &size, 0), size > 0 else {
                    throw CacheProblem.unusable("cannot make a new cache file (sqlite3_serialize failed)")
                }
                defer { sqlite3_free(bytes) }
                return [UInt8](UnsafeBufferPointer(start: bytes, count: Int(size)))
            }
        } catch {
            throw CacheProblem(error, doing: "making a new cache file")
        }
    }

    /// Opens the file at `path`, which `CacheFile.examine` found to be ours, for reading and
    /// writing, and makes it ready: WAL, synchronous=NORMAL. Throws `.damaged` for a file to
    /// move aside, `.notOurs` if the path now names another file, `.unusable` for one to
    /// leave alone.
    static func open(path: String) throws(CacheProblem) -> CacheDatabase {
        var configuration = Configuration()
        configuration.label = "datasourced.page-cache"
        configuration.busyMode = .timeout(busyTimeout)
        configuration.foreignKeysEnabled = false
        // Not `.wal`: GRDB would switch the journal mode (and create and drop a table) before
        // the header is checked through this connection.
        configuration.journalMode = .default
        let connection: DatabaseQueue
        do {
            connection = try DatabaseQueue(path: sqliteName(path, mode: "rw"), configuration: configuration)
        } catch {
            throw CacheProblem(error, doing: "opening \(path)")
        }
        do {
            try connection.writeWithoutTransaction { db in
                // SQLite opens a file it may not write as read-only, and only the first page
                // written would fail (BEGIN IMMEDIATE succeeds in WAL mode): ask it.
                if sqlite3_db_readonly(db.sqliteConnection, "main") == 1 {
                    throw CacheProblem.unusable("\(path) is read-only")
                }
                // Through SQLite's own descriptor this time: the path may name another file
                // than the one examined. One read transaction: the header as of one moment.
                var version: Int32 = 0
                try db.inTransaction(.deferred) {
                    version = try recognise(db, path: path)
                    return .commit
                }
                let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
                guard mode == "wal" else { throw CacheProblem.unusable("\(path) cannot use WAL mode (journal mode \(mode ?? "unknown"))") }
                // In WAL mode a commit survives a killed process; only a power loss may take
                // the last ones back, which a cache can afford.
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                if version < schemaVersion { try migrate(db, path: path) }
            }
        } catch {
            try? connection.close()
            throw CacheProblem(error, doing: "opening \(path)")
        }
        return CacheDatabase(connection: connection)
    }

    /// The entries of the file at `path` (found to be ours), read without writing anything:
    /// `SQLITE_OPEN_READONLY`, no journal mode switched, no entry marked used. With `alone`
    /// (no -wal beside the file, so no daemon has it open and every commit is in it),
    /// `immutable=1` too: SQLite then makes no -wal or -shm, which a read-only connection
    /// would otherwise create and leave (only the last writer to close deletes them).
    static func readEntries(path: String, alone: Bool) throws(CacheProblem) -> [CacheEntrySummary] {
        var configuration = Configuration()
        configuration.label = "datasourced.page-cache.list"
        configuration.readonly = true
        configuration.busyMode = .timeout(busyTimeout)
        configuration.foreignKeysEnabled = false
        do {
            let connection = try DatabaseQueue(path: sqliteName(path, mode: "ro", immutable: alone), configuration: configuration)
            defer { try? connection.close() }
            return try connection.read { db in
                try recognise(db, path: path)
                return try summaries(db)
            }
        } catch {
            throw CacheProblem(error, doing: "reading \(path)")
        }
    }

    /// The name to give SQLite for `path`: a `file:` URI whose mode never includes "c", so that
    /// SQLite never creates the file (only `CacheFile.create` does: a file SQLite made would be
    /// empty, and not recognisably ours), when this SQLite reads names as URIs (Debian's is
    /// built with SQLITE_USE_URI). Otherwise the path itself.
    private static func sqliteName(_ path: String, mode: String, immutable: Bool = false) -> String {
        guard sqlite3_compileoption_used("USE_URI") == 1 else { return path }
        var absolute = path
        if !path.hasPrefix("/") {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            guard getcwd(&buffer, buffer.count) != nil else { return path }
            absolute = String(cString: buffer) + "/" + path
        }
        // In a URI's path, '%' starts an escape, '?' the query and '#' the fragment.
        var escaped = ""
        for character in absolute.unicodeScalars {
            switch character {
            case "%": escaped += "%25"
            case "?": escaped += "%3f"
            case "#": escaped += "%23"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return "file://\(escaped)?mode=\(mode)\(immutable ? "&immutable=1" : "")"
    }

    /// To this schema, once, whichever daemon sharing the file gets there first. From 1: the
    /// page table, and schema 1's entries dropped (whole entries of a format this version does
    /// not read). From 1 or 2: the `evictable` column (every entry kept evictable; a
    /// source's pending actions are marked when next written).
    private static func migrate(_ db: Database, path: String) throws {
        try db.inTransaction(.immediate) {
            guard let version = try Int32.fetchOne(db, sql: "PRAGMA user_version"), version < schemaVersion else { return .commit }
            if version == 1 {
                try db.execute(sql: "DELETE FROM entry")
                try db.execute(sql: pagesSchema)
            }
            // Added after `payload`: eviction reads it, but only for the few entries it visits.
            try db.execute(sql: "ALTER TABLE entry ADD COLUMN evictable INTEGER NOT NULL DEFAULT 1")
            try db.execute(sql: "PRAGMA user_version = \(schemaVersion)")
            return .commit
        }
    }

    /// Ours by the header and of this schema version or one it migrates from (answered);
    /// anything else is not usable.
    @discardableResult
    private static func recognise(_ db: Database, path: String) throws -> Int32 {
        let application = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
        let version = try Int32.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        switch (application, version) {
        case (applicationID, 1...schemaVersion):
            return version
        case (applicationID, let newer) where newer > schemaVersion:
            throw CacheProblem.unusable("\(path) was made by a newer datasourced (cache schema \(newer), this one knows \(schemaVersion))")
        case (applicationID, let version):
            throw CacheProblem.damaged("\(path) is a datasourced cache without a schema it knows (user_version \(version))")
        default:
            throw CacheProblem.notOurs(
                "\(path) changed while it was opened: it is now another program's SQLite database (application_id \(application))")
        }
    }

    func close() {
        try? connection.close()
    }

    // MARK: Entries

    func entry(_ key: Data) throws -> StoredPages? {
        try connection.read { db in
            // A cursor's row reads SQLite's own buffer: each payload is copied once, here.
            let rows = try Row.fetchCursor(db, sql: "SELECT id, stored_at, payload FROM entry WHERE key = ?", arguments: [key])
            guard let row = try rows.next() else { return nil }
            let id: Int64 = row[0], storedAt: Double = row[1]
            let head = try row.withUnsafeData(atIndex: 2) { [UInt8]($0 ?? Data()) }
            var pages: [[UInt8]] = []
            let pageRows = try Row.fetchCursor(db, sql: "SELECT payload FROM page WHERE entry = ? ORDER BY ordinal", arguments: [id])
            while let page = try pageRows.next() {
                pages.append(try page.withUnsafeData(atIndex: 0) { [UInt8]($0 ?? Data()) })
            }
            return StoredPages(payload: head, pages: pages, storedAt: storedAt)
        }
    }

    /// The head of the entry under `key` and when it was stored, without its pages, or nil.
    func head(_ key: Data) throws -> (payload: [UInt8], storedAt: Double)? {
        try connection.read { db in
            let rows = try Row.fetchCursor(db, sql: "SELECT stored_at, payload FROM entry WHERE key = ?", arguments: [key])
            guard let row = try rows.next() else { return nil }
            let storedAt: Double = row[0]
            return (try row.withUnsafeData(atIndex: 1) { [UInt8]($0 ?? Data()) }, storedAt)
        }
    }

    /// Page `index` of the entry under `key` alone, or nil; with `storedAt`, only while the
    /// entry is the one stored or confirmed then.
    func page(_ key: Data, at index: Int, storedAt: Double? = nil) throws -> [UInt8]? {
        try connection.read { db in
            let rows = try Row.fetchCursor(
                db,
                sql:
                    "SELECT page.payload, entry.stored_at FROM page JOIN entry ON page.entry = entry.id WHERE entry.key = ? AND page.ordinal = ?",
                arguments: [key, index])
            guard let row = try rows.next() else { return nil }
            if let storedAt, row[1] as Double != storedAt { return nil }
            return try row.withUnsafeData(atIndex: 0) { [UInt8]($0 ?? Data()) }
        }
    }

    /// What `replace` did.
    enum Replaced: Equatable {
        /// Stored, this many least recently used entries evicted, and this many of the first
        /// pages kept as they were stored (the others written).
        case stored(evicted: Int, kept: Int)
        /// Not stored: the entry would be `bytes`, more than the cache's bound. The entry it
        /// would have replaced is removed.
        case oversized(bytes: Int)
    }

    /// How many of the first `unchanged` pages of the entry under `key` it holds: all of them
    /// (`unchanged`), or 0.
    private static func keptPages(_ db: Database, entry id: Int64?, unchanged: Int) throws -> Int {
        guard let id, unchanged > 0 else { return 0 }
        // Each of the first `unchanged` ordinals is there (they are unique per entry).
        let held = try Int.fetchOne(db, sql: "SELECT count(*) FROM page WHERE entry = ? AND ordinal < ?", arguments: [id, unchanged])
        return held == unchanged ? unchanged : 0
    }

    /// Stores `entry`, keeping the pages it says are unchanged when the entry stored holds
    /// them (else writing every page), and evicts the least recently used others until the
    /// total is within `maximumBytes`, in one transaction: saving the page after the last
    /// writes that page, the head and an index entry, whatever the entry holds. The pages are
    /// made before the transaction (making them never holds the lock), and again inside it
    /// only when another daemon changed the entry in between.
    func replace(key: Data, label: String, storedAt: Double, usedAt: Double, entry: EntryPages, maximumBytes: Int) throws -> Replaced {
        let expected = try connection.read { db in
            try Self.keptPages(
                db, entry: try Int64.fetchOne(db, sql: "SELECT id FROM entry WHERE key = ?", arguments: [key]), unchanged: entry.unchanged)
        }
        let head = entry.head()
        var made = Dictionary(uniqueKeysWithValues: (expected..<entry.count).map { ($0, entry.page($0)) })
        var replaced = Replaced.stored(evicted: 0, kept: 0)
        try connection.inTransaction(.immediate) { db in
            let existing = try Row.fetchOne(db, sql: "SELECT id, bytes, length(payload) FROM entry WHERE key = ?", arguments: [key])
            let id: Int64? = existing?[0]
            let keep = try Self.keptPages(db, entry: id, unchanged: entry.unchanged)
            for ordinal in keep..<expected where made[ordinal] == nil { made[ordinal] = entry.page(ordinal) }
            var total = 0
            if let id, let existing {
                let dropped =
                    try Int.fetchOne(
                        db, sql: "SELECT coalesce(sum(bytes), 0) FROM page WHERE entry = ? AND ordinal >= ?", arguments: [id, keep]) ?? 0
                // What the kept pages take, from the entry's total (reading it from their rows
                // would visit every page).
                // The file is input: a total that cannot be (edited) is worked out from the kept
                // pages' rows instead, and no arithmetic on it may trap.
                let previous: Int = existing[1], previousHead: Int = existing[2]
                let (afterHead, overflowed) = previous.subtractingReportingOverflow(previousHead)
                let (kept, overflowedAgain) = afterHead.subtractingReportingOverflow(dropped)
                if overflowed || overflowedAgain || kept < 0 || kept > maximumBytes {
                    total =
                        try Int.fetchOne(
                            db, sql: "SELECT coalesce(sum(bytes), 0) FROM page WHERE entry = ? AND ordinal < ?", arguments: [id, keep]) ?? 0
                } else {
                    total = kept
                }
                try db.execute(sql: "DELETE FROM page WHERE entry = ? AND ordinal >= ?", arguments: [id, keep])
            }
            let pages = (keep..<entry.count).map { (ordinal: $0, payload: made[$0] ?? []) }
            for part in [head.count] + pages.map(\.payload.count) {
                let (sum, overflowed) = total.addingReportingOverflow(part)
                total = overflowed ? Int.max : sum
            }
            guard total <= maximumBytes else {
                if let id {
                    try db.execute(sql: "DELETE FROM page WHERE entry = ?", arguments: [id])
                    try db.execute(sql: "DELETE FROM entry WHERE id = ?", arguments: [id])
                }
                replaced = .oversized(bytes: total)
                return .commit
            }
            let entryID: Int64
            if let id {
                try db.execute(
                    sql: "UPDATE entry SET label = ?, stored_at = ?, used_at = ?, bytes = ?, evictable = ?, payload = ? WHERE id = ?",
                    arguments: [label, storedAt, usedAt, total, entry.evictable, Data(head), id])
                entryID = id
            } else {
                try db.execute(
                    sql: "INSERT INTO entry (key, label, stored_at, used_at, bytes, evictable, payload) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    arguments: [key, label, storedAt, usedAt, total, entry.evictable, Data(head)])
                entryID = db.lastInsertedRowID
            }
            let insert = try db.makeStatement(sql: "INSERT INTO page (entry, ordinal, bytes, payload) VALUES (?, ?, ?, ?)")
            for page in pages {
                try insert.execute(arguments: [entryID, page.ordinal, page.payload.count, Data(page.payload)])
            }
            var all = try Int.fetchOne(db, sql: "SELECT coalesce(sum(bytes), 0) FROM entry") ?? 0
            var evicted: [Int64] = []
            if all > maximumBytes {
                let oldestFirst = try Row.fetchCursor(
                    db, sql: "SELECT id, bytes FROM entry WHERE id != ? AND evictable != 0 ORDER BY used_at, id", arguments: [entryID])
                while all > maximumBytes, let row = try oldestFirst.next() {
                    evicted.append(row[0])
                    // An edited `bytes` must not trap.
                    let (left, overflowed) = all.subtractingReportingOverflow(row[1] as Int)
                    all = overflowed ? 0 : left
                }
                let ids = evicted.map(String.init).joined(separator: ",")
                try db.execute(sql: "DELETE FROM page WHERE entry IN (\(ids))")
                try db.execute(sql: "DELETE FROM entry WHERE id IN (\(ids))")
            }
            replaced = .stored(evicted: evicted.count, kept: keep)
            return .commit
        }
        return replaced
    }

    func markUsed(key: Data, at usedAt: Double) throws {
        try connection.inTransaction(.immediate) { db in
            try db.execute(sql: "UPDATE entry SET used_at = ? WHERE key = ?", arguments: [usedAt, key])
            return .commit
        }
    }

    func touch(key: Data, storedAt: Double, usedAt: Double) throws {
        try connection.inTransaction(.immediate) { db in
            try db.execute(sql: "UPDATE entry SET stored_at = ?, used_at = ? WHERE key = ?", arguments: [storedAt, usedAt, key])
            return .commit
        }
    }

    func remove(key: Data) throws {
        try connection.inTransaction(.immediate) { db in
            try db.execute(sql: "DELETE FROM page WHERE entry IN (SELECT id FROM entry WHERE key = ?)", arguments: [key])
            try db.execute(sql: "DELETE FROM entry WHERE key = ?", arguments: [key])
            return .commit
        }
    }

    func summaries() throws -> [CacheEntrySummary] {
        try connection.read(Self.summaries)
    }

    private static func summaries(_ db: Database) throws -> [CacheEntrySummary] {
        try Row.fetchAll(db, sql: "SELECT label, bytes, stored_at, used_at FROM entry ORDER BY used_at DESC, id DESC").map {
            CacheEntrySummary(label: $0[0], bytes: $0[1], storedAt: $0[2], usedAt: $0[3])
        }
    }

    /// Deletes every entry, then gives the space back to the file system (best effort: a
    /// VACUUM waits for other daemons' readers and may give up).
    func removeAll() throws -> Int {
        var removed = 0
        try connection.inTransaction(.immediate) { db in
            try db.execute(sql: "DELETE FROM entry")
            removed = db.changesCount
            try db.execute(sql: "DELETE FROM page")
            return .commit
        }
        try? connection.vacuum()
        return removed
    }
}

/// One entry as `datasourced cache list` shows it.
package struct CacheEntrySummary: Sendable, Equatable {
    package let label: String
    package let bytes: Int
    package let storedAt: Double
    package let usedAt: Double
}
