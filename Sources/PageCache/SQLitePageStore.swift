import Crypto
import DataSources
import Dispatch
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's persisted page cache: one SQLite file (WAL) that several daemons may share,
/// bounded in bytes, least recently used entries evicted first. See CACHE.md.
///
/// All database work runs on one serial queue of the store's own, in the order the calls
/// were made: `write`, `touch` and `remove` return at once, `read` waits there (behind the
/// writes made before it). Nothing here throws to the caller: a damaged file is moved aside
/// and replaced, a file that cannot be written turns the cache off (`isAvailable` false,
/// reads answer nil, writes are dropped), each with a warning through `logger`.
public final class SQLitePageStore: PageCacheStore, @unchecked Sendable {
    public static let defaultMaximumBytes = 256 << 20

    public let path: String
    public let maximumBytes: Int
    private let logger: Logger
    private let file: CacheFile
    private let queue = DispatchQueue(label: "datasourced.page-cache")
    private let available = Atomic<Bool>(false)

    // Only touched on `queue`.
    private var database: CacheDatabase?
    private var openedIdentity: CacheFile.Identity?
    private var lastStamp: Double = 0
    private var oversizedWarned: Set<Data> = []

    public init(path: String, maximumBytes: Int = SQLitePageStore.defaultMaximumBytes, logger: Logger) {
        self.path = path
        self.maximumBytes = maximumBytes
        self.logger = logger
        self.file = CacheFile(path: path)
        queue.sync { open() }
    }

    /// `$XDG_CACHE_HOME/datasourced/cache.sqlite`, else `~/.cache/datasourced/cache.sqlite`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        // The XDG spec: a relative $XDG_CACHE_HOME is invalid and ignored.
        if let cacheHome = environment["XDG_CACHE_HOME"], cacheHome.hasPrefix("/") {
            return cacheHome + "/datasourced/cache.sqlite"
        }
        var home = environment["HOME"] ?? ""
        if home.isEmpty, let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir {
            home = String(cString: directory)
        }
        return (home.isEmpty ? "." : home) + "/.cache/datasourced/cache.sqlite"
    }

    // MARK: PageCacheStore

    public var isAvailable: Bool { available.load(ordering: .acquiring) }

    public func read(_ key: PageCacheKey) -> StoredPages? {
        guard isAvailable else { return nil }
        let digest = Self.digest(key)
        return queue.sync {
            guard let database = usableDatabase() else { return nil }
            do {
                guard let found = try database.entry(digest) else { return nil }
                // The reader has its rows; when the entry was last used can wait its turn.
                queue.async { self.markUsed(digest) }
                return found
            } catch {
                handle(CacheProblem(error, doing: "reading an entry"))
                return nil
            }
        }
    }

    public func write(_ key: PageCacheKey, storedAt: Double, payload: @escaping @Sendable () -> [UInt8]) {
        guard isAvailable else { return }
        let digest = Self.digest(key), label = key.label
        queue.async {
            guard let database = self.usableDatabase() else { return }
            let bytes = payload()
            do {
                guard bytes.count <= self.maximumBytes else {
                    if self.oversizedWarned.insert(digest).inserted {
                        self.logger.warning("page cache: not storing an entry of \(bytes.count) bytes, more than the cache's bound of \(self.maximumBytes) bytes (\(label))")
                    }
                    // The entry it would have replaced is older than what the server gave.
                    try database.remove(key: digest)
                    return
                }
                let evicted = try database.replace(key: digest, label: label, storedAt: storedAt, usedAt: self.stamp(),
                                                   payload: bytes, maximumBytes: self.maximumBytes)
                if evicted > 0 {
                    self.logger.debug("page cache: evicted \(evicted) least recently used entries to stay within \(self.maximumBytes) bytes")
                }
            } catch {
                self.handle(CacheProblem(error, doing: "writing an entry"))
            }
        }
    }

    public func touch(_ key: PageCacheKey, storedAt: Double) {
        guard isAvailable else { return }
        let digest = Self.digest(key)
        queue.async {
            guard let database = self.usableDatabase() else { return }
            do {
                try database.touch(key: digest, storedAt: storedAt, usedAt: self.stamp())
            } catch {
                self.handle(CacheProblem(error, doing: "touching an entry"))
            }
        }
    }

    public func remove(_ key: PageCacheKey) {
        guard isAvailable else { return }
        let digest = Self.digest(key)
        queue.async {
            guard let database = self.usableDatabase() else { return }
            do {
                try database.remove(key: digest)
            } catch {
                self.handle(CacheProblem(error, doing: "removing an entry"))
            }
        }
    }

    // MARK: Beyond the protocol

    /// Returns once every write made before it is done (the daemon calls it at exit).
    public func flush() {
        queue.sync {}
    }

    /// Finishes the queued writes and closes the file; the store then answers like a
    /// degraded one. The last connection to close folds the WAL back into the file.
    public func close() {
        queue.sync {
            database?.close()
            database = nil
            available.store(false, ordering: .releasing)
        }
    }

    /// Every entry, most recently used first (`datasourced cache list`); nil if the cache is off.
    public func entries() -> [CacheEntrySummary]? {
        queue.sync {
            guard let database = usableDatabase() else { return nil }
            do {
                return try database.summaries()
            } catch {
                handle(CacheProblem(error, doing: "listing the entries"))
                return nil
            }
        }
    }

    /// Deletes every entry (`datasourced cache clear`); answers how many, or nil if the cache is off.
    public func removeAll() -> Int? {
        queue.sync {
            guard let database = usableDatabase() else { return nil }
            do {
                return try database.removeAll()
            } catch {
                handle(CacheProblem(error, doing: "clearing the cache"))
                return nil
            }
        }
    }

    // MARK: On the queue

    /// Opens the file, or a new one in place of a damaged one, or turns the cache off.
    private func open() {
        // Daemons opening one new file together: SQLite sometimes answers "database is
        // locked" at once, without waiting out the busy timeout (2 to 6 of 40 pairs of
        // `cache exercise` processes did, before this). Tried again, after a short random
        // pause, until the busy timeout has passed.
        let deadline = Date().addingTimeInterval(CacheDatabase.busyTimeout)
        var movedAside = false
        while true {
            do throws(CacheProblem) {
                try file.makeDirectory()
                try file.createIfMissing()
                openedIdentity = file.identity
                database = try CacheDatabase.open(path: path)
                available.store(true, ordering: .releasing)
                return
            } catch .damaged(let reason) where !movedAside {
                movedAside = true
                moveAside(because: reason)
            } catch .busy where Date() < deadline {
                usleep(useconds_t.random(in: 5_000...50_000))
            } catch {
                turnOff(because: error.reason)
                return
            }
        }
    }

    /// The open database, reopened first when another process moved the file aside (or it
    /// was deleted) since we opened it: our writes would go to a file no one reads.
    private func usableDatabase() -> CacheDatabase? {
        guard database != nil else { return nil }
        if file.identity != openedIdentity {
            logger.notice("page cache: \(path) was replaced by another process; reopening it")
            database?.close()
            database = nil
            open()
        }
        return database
    }

    private func handle(_ problem: CacheProblem) {
        switch problem {
        case .damaged(let reason):
            database?.close()
            database = nil
            moveAside(because: reason)
            open()
        case .unusable(let reason):
            turnOff(because: reason)
        case .busy(let reason):
            logger.warning("page cache: skipped, \(path) stayed locked by another process for \(Int(CacheDatabase.busyTimeout)) s (\(reason))")
        }
    }

    private func moveAside(because reason: String) {
        if let aside = file.moveAside(opened: openedIdentity, now: Int(Date().timeIntervalSince1970)) {
            logger.warning("page cache: \(reason); moved it aside to \(aside) and starting a new cache")
        } else {
            logger.warning("page cache: \(reason); starting a new cache (another process already moved it aside)")
        }
    }

    /// The cache is off for the rest of this process: one warning, then silence.
    private func turnOff(because reason: String) {
        database?.close()
        database = nil
        available.store(false, ordering: .releasing)
        logger.warning("page cache: \(reason); running without a cache")
    }

    private func markUsed(_ digest: Data) {
        guard let database = usableDatabase() else { return }
        do {
            try database.markUsed(key: digest, at: stamp())
        } catch {
            handle(CacheProblem(error, doing: "marking an entry used"))
        }
    }

    /// Now, but always later than the last stamp this store gave: least recently used order
    /// follows the order of the calls even within one clock tick.
    private func stamp() -> Double {
        lastStamp = max(Date().timeIntervalSince1970, lastStamp.nextUp)
        return lastStamp
    }

    /// The only form of a key that leaves memory.
    static func digest(_ key: PageCacheKey) -> Data {
        Data(SHA256.hash(data: Data(key.material.utf8)))
    }
}
