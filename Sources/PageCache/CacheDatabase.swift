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
    /// a larger number was made by a newer datasourced and is left alone.
    static let schemaVersion: Int32 = 1
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
            payload BLOB NOT NULL      -- last: listing and eviction never read its pages
        );
        CREATE INDEX entry_by_use ON entry(used_at);
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
                try db.inTransaction(.deferred) {
                    try recognise(db, path: path)
                    return .commit
                }
                let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
                guard mode == "wal" else { throw CacheProblem.unusable("\(path) cannot use WAL mode (journal mode \(mode ?? "unknown"))") }
                // In WAL mode a commit survives a killed process; only a power loss may take
                // the last ones back, which a cache can afford.
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
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

    /// Ours by the header and of this schema version; anything else is not usable.
    private static func recognise(_ db: Database, path: String) throws {
        let application = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
        let version = try Int32.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        switch (application, version) {
        case (applicationID, schemaVersion):
            return
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
            // A cursor's row reads SQLite's own buffer: the payload is copied once, here.
            let rows = try Row.fetchCursor(db, sql: "SELECT stored_at, payload FROM entry WHERE key = ?", arguments: [key])
            guard let row = try rows.next() else { return nil }
            let payload = try row.withUnsafeData(atIndex: 1) { [UInt8]($0 ?? Data()) }
            return StoredPages(payload: payload, storedAt: row[0])
        }
    }

    /// Stores the entry and evicts the least recently used others until the total is within
    /// `maximumBytes`, in one transaction. Answers how many were evicted.
    func replace(key: Data, label: String, storedAt: Double, usedAt: Double, payload: [UInt8], maximumBytes: Int) throws -> Int {
        var evicted: [Int64] = []
        try connection.inTransaction(.immediate) { db in
            evicted = []
            try db.execute(
                sql: """
                    INSERT INTO entry (key, label, stored_at, used_at, bytes, payload) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (key) DO UPDATE SET label = excluded.label, stored_at = excluded.stored_at,
                        used_at = excluded.used_at, bytes = excluded.bytes, payload = excluded.payload
                    """,
                arguments: [key, label, storedAt, usedAt, payload.count, Data(payload)])
            var total = try Int.fetchOne(db, sql: "SELECT coalesce(sum(bytes), 0) FROM entry") ?? 0
            if total > maximumBytes {
                let oldestFirst = try Row.fetchCursor(
                    db, sql: "SELECT id, bytes FROM entry WHERE key != ? ORDER BY used_at, id", arguments: [key])
                while total > maximumBytes, let row = try oldestFirst.next() {
                    evicted.append(row[0])
                    total -= row[1] as Int
                }
                try db.execute(sql: "DELETE FROM entry WHERE id IN (\(evicted.map(String.init).joined(separator: ",")))")
            }
            return .commit
        }
        return evicted.count
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
