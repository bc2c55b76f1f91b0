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

    /// Opens the file at `path` (which exists), checks it is a datasourced cache or empty,
    /// and makes it one: WAL, synchronous=NORMAL, the schema. Throws `.damaged` for a file
    /// to move aside, `.unusable` for one to leave alone.
    static func open(path: String) throws(CacheProblem) -> CacheDatabase {
        var configuration = Configuration()
        configuration.label = "datasourced.page-cache"
        configuration.busyMode = .timeout(busyTimeout)
        configuration.foreignKeysEnabled = false
        // Not `.wal`: GRDB would switch the journal mode (and create and drop a table) before
        // we know the file is ours, and a foreign file is to be moved aside untouched.
        configuration.journalMode = .default
        let connection: DatabaseQueue
        do {
            connection = try DatabaseQueue(path: path, configuration: configuration)
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
                // One read transaction: the header and the schema as of one moment, never
                // half of another daemon's new file.
                try db.inTransaction(.deferred) {
                    try recognise(db, path: path)
                    return .commit
                }
                let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
                guard mode == "wal" else { throw CacheProblem.unusable("\(path) cannot use WAL mode (journal mode \(mode ?? "unknown"))") }
                // In WAL mode a commit survives a killed process; only a power loss may take
                // the last ones back, which a cache can afford.
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                // Under the write lock: two daemons making the same new file make it once.
                try db.inTransaction(.immediate) {
                    if try recognise(db, path: path) == .empty {
                        try db.execute(sql: schema)
                        try db.execute(sql: "PRAGMA application_id = \(applicationID)")
                        try db.execute(sql: "PRAGMA user_version = \(schemaVersion)")
                    }
                    return .commit
                }
            }
        } catch {
            try? connection.close()
            throw CacheProblem(error, doing: "opening \(path)")
        }
        return CacheDatabase(connection: connection)
    }

    private enum Recognised { case ours, empty }

    /// Ours by the header, or a new empty database; anything else is not our file.
    @discardableResult
    private static func recognise(_ db: Database, path: String) throws -> Recognised {
        let application = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
        let version = try Int32.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        let objects = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") ?? 0
        switch (application, version) {
        case (applicationID, schemaVersion):
            return .ours
        case (applicationID, let newer) where newer > schemaVersion:
            throw CacheProblem.unusable("\(path) was made by a newer datasourced (cache schema \(newer), this one knows \(schemaVersion))")
        case (0, 0) where objects == 0:
            return .empty
        default:
            throw CacheProblem.damaged("\(path) is not a datasourced cache (SQLite application_id \(application), user_version \(version), \(objects) schema objects)")
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
                let oldestFirst = try Row.fetchCursor(db, sql: "SELECT id, bytes FROM entry WHERE key != ? ORDER BY used_at, id", arguments: [key])
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
        try connection.read { db in
            try Row.fetchAll(db, sql: "SELECT label, bytes, stored_at, used_at FROM entry ORDER BY used_at DESC, id DESC").map {
                CacheEntrySummary(label: $0[0], bytes: $0[1], storedAt: $0[2], usedAt: $0[3])
            }
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
public struct CacheEntrySummary: Sendable, Equatable {
    public let label: String
    public let bytes: Int
    public let storedAt: Double
    public let usedAt: Double
}
