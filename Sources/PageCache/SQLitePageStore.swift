import Basics
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
/// writes made before it). Nothing here throws to the caller: a damaged file of ours is moved
/// aside and replaced; anything at the path that is not ours (CacheFile), or a file that
/// cannot be written, turns the cache off (`isAvailable` false, reads answer nil, writes are
/// dropped), each with a warning through `logger`.
package final class SQLitePageStore: PageCacheStore, Sendable {
    package static let defaultMaximumBytes = 256 << 20

    package let path: String
    package let maximumBytes: Int
    private let logger: Logger
    private let file: CacheFile
    private let queue = DispatchQueue(label: "datasourced.page-cache")
    private let available = Atomic<Bool>(false)

    /// What the work on `queue` keeps between calls. Only touched on `queue`, which runs one
    /// block at a time: its lock is never contended, and lets the compiler see that.
    private let onQueue = LockedValue(OnQueue())

    private struct OnQueue {
        var database: CacheDatabase?
        var openedIdentity: CacheFile.Identity?
        var lastStamp: Double = 0
        var oversizedWarned: Set<Data> = []
    }

    package init(path: String, maximumBytes: Int = SQLitePageStore.defaultMaximumBytes, logger: Logger) {
        self.path = path
        self.maximumBytes = maximumBytes
        self.logger = logger
        self.file = CacheFile(path: path)
        queue.sync { onQueue.withLock { open(&$0) } }
    }

    /// `$XDG_CACHE_HOME/datasourced/cache.sqlite`, else `~/.cache/datasourced/cache.sqlite`.
    package static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
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

    package var isAvailable: Bool { available.load(ordering: .acquiring) }

    package func read(_ key: PageCacheKey) -> StoredPages? {
        guard isAvailable else { return nil }
        let digest = Self.digest(key)
        return queue.sync {
            onQueue.withLock { state in
                guard let found = using(&state, doing: "reading an entry", { database, _ in try database.entry(digest) }) ?? nil
                else { return nil }
                // The reader has its rows; when the entry was last used can wait its turn.
                queue.async { self.onQueue.withLock { self.markUsed(digest, &$0) } }
                return found
            }
        }
    }

    package func readPage(_ key: PageCacheKey, at index: Int) -> [UInt8]? {
        guard isAvailable else { return nil }
        let digest = Self.digest(key)
        return queue.sync {
            onQueue.withLock { state in
                using(&state, doing: "reading a page of an entry", { database, _ in try database.page(digest, at: index) }) ?? nil
            }
        }
    }

    package func readHead(_ key: PageCacheKey) -> (payload: [UInt8], storedAt: Double)? {
        guard isAvailable else { return nil }
        let digest = Self.digest(key)
        return queue.sync {
            onQueue.withLock { state in
                guard let found = using(&state, doing: "reading an entry's head", { database, _ in try database.head(digest) }) ?? nil
                else { return nil }
                queue.async { self.onQueue.withLock { self.markUsed(digest, &$0) } }
                return found
            }
        }
    }

    package func readPage(_ key: PageCacheKey, at index: Int, storedAt: Double) -> [UInt8]? {
        guard isAvailable else { return nil }
        let digest = Self.digest(key)
        return queue.sync {
            onQueue.withLock { state in
                using(
                    &state, doing: "reading a page of an entry", { database, _ in try database.page(digest, at: index, storedAt: storedAt) }
                )
                    ?? nil
            }
        }
    }

    package func write(_ key: PageCacheKey, storedAt: Double, entry: EntryPages) {
        guard isAvailable else { return }
        let digest = Self.digest(key), label = key.label
        queue.async { self.onQueue.withLock { state in self.write(digest, label: label, storedAt: storedAt, entry: entry, &state) } }
    }

    private func write(_ digest: Data, label: String, storedAt: Double, entry: EntryPages, _ state: inout OnQueue) {
        guard let database = self.usableDatabase(&state) else { return }
        let started = DispatchTime.now().uptimeNanoseconds
        do {
            let written = try database.replace(
                key: digest, label: label, storedAt: storedAt, usedAt: self.stamp(&state), entry: entry, maximumBytes: self.maximumBytes)
            switch written {
            case .oversized(let bytes):
                // The entry it would have replaced, older than what the server gave, is gone.
                if state.oversizedWarned.insert(digest).inserted {
                    self.logger.warning(
                        "page cache: not storing an entry of \(bytes) bytes, more than the cache's bound of \(self.maximumBytes) bytes (\(label))"
                    )
                }
            case .stored(let evicted, let kept):
                if evicted > 0 {
                    self.logger.debug(
                        "page cache: evicted \(evicted) least recently used entries to stay within \(self.maximumBytes) bytes")
                }
                // Benchmarks/cachesave.py reads this line: what saving each page costs.
                let micros = (DispatchTime.now().uptimeNanoseconds &- started) / 1000
                self.logger.debug("page cache: stored \(label): \(entry.count) pages, \(kept) kept, in \(micros) microseconds")
            }
        } catch {
            self.handle(CacheProblem(error, doing: "writing an entry"), &state)
        }
    }

    package func touch(_ key: PageCacheKey, storedAt: Double) {
        guard isAvailable else { return }
        let digest = Self.digest(key)
        queue.async {
            self.onQueue.withLock { state in
                self.using(&state, doing: "touching an entry") { database, state in
                    try database.touch(key: digest, storedAt: storedAt, usedAt: self.stamp(&state))
                }
            }
        }
    }

    package func remove(_ key: PageCacheKey) {
        guard isAvailable else { return }
        let digest = Self.digest(key)
        queue.async {
            self.onQueue.withLock { state in
                self.using(&state, doing: "removing an entry") { database, _ in try database.remove(key: digest) }
            }
        }
    }

    package func trace(_ message: @autoclosure () -> String) {
        logger.debug("page cache: \(message())")
    }

    // MARK: Beyond the protocol

    /// Returns once every write made before it is done (the daemon calls it at exit).
    package func flush() {
        queue.sync {}
    }

    /// Finishes the queued writes and closes the file; the store then answers like a
    /// degraded one. The last connection to close folds the WAL back into the file.
    package func close() {
        queue.sync {
            onQueue.withLock { state in
                state.database?.close()
                state.database = nil
            }
            available.store(false, ordering: .releasing)
        }
    }

    /// Every entry, most recently used first (`datasourced cache list`); nil if the cache is off.
    package func entries() -> [CacheEntrySummary]? {
        queue.sync {
            onQueue.withLock { state in using(&state, doing: "listing the entries") { database, _ in try database.summaries() } }
        }
    }

    /// Deletes every entry (`datasourced cache clear`); answers how many, or nil if the cache is off.
    package func removeAll() -> Int? {
        queue.sync {
            onQueue.withLock { state in using(&state, doing: "clearing the cache") { database, _ in try database.removeAll() } }
        }
    }

    // MARK: The commands, on a file no daemon need have open

    /// `datasourced cache list`: the entries of the file at `path`, most recently used first,
    /// or nil when there is no file. Writes nothing: not the file, not its mode, no -wal or
    /// -shm (CacheDatabase.readEntries). Throws, naming the path, for anything not ours there
    /// (left as it is), and for a file of ours that cannot be read (a damaged one is left for
    /// a daemon to move aside).
    package static func entries(inFileAt path: String) throws(CacheFileRefusal) -> [CacheEntrySummary]? {
        let file = CacheFile(path: path)
        var looks = 0
        while true {
            looks += 1
            do throws(CacheProblem) {
                switch try file.examine(narrowingMode: false) {
                case .absent:
                    return nil
                case .notOurs(let what):
                    throw .notOurs("\(path) is \(what), not a datasourced cache file")
                case .ours(let identity):
                    // No -wal (nor -journal): no daemon has the file open, and every commit is in it. A daemon
                    // that opens it meanwhile writes to a -wal of its own until it folds that
                    // back into the file, which the file's identity, size and times show: then
                    // what was read (or the error a torn read gave) counts for nothing.
                    let alone = !file.hasJournal
                    let before = file.sizeAndTimes
                    let read = Result { () throws(CacheProblem) in try CacheDatabase.readEntries(path: path, alone: alone) }
                    if alone, file.identity != identity || file.sizeAndTimes != before {
                        throw .replaced("\(path) changed while it was read")
                    }
                    return try read.get()
                }
            } catch .replaced where looks < 8 {
                continue
            } catch {
                throw CacheFileRefusal(error)
            }
        }
    }

    /// `datasourced cache clear`: deletes every entry of the file at `path` and answers how many,
    /// or nil when there is no file. Throws, naming the path, for anything not ours there (left
    /// as it is) and when the store could not clear the file (`logger` has said why).
    package static func removeEntries(inFileAt path: String, logger: Logger) throws(CacheFileRefusal) -> Int? {
        let found: CacheFile.Found
        do {
            found = try CacheFile(path: path).examine(narrowingMode: false)
        } catch {
            throw CacheFileRefusal(error)
        }
        switch found {
        case .absent:
            return nil
        case .notOurs(let what):
            throw CacheFileRefusal(.notOurs("\(path) is \(what), not a datasourced cache file"))
        case .ours:
            let store = SQLitePageStore(path: path, logger: logger)
            defer { store.close() }
            guard let removed = store.removeAll() else {
                throw CacheFileRefusal(description: "\(path) was not cleared (the warning above says why)")
            }
            return removed
        }
    }

    // MARK: On the queue

    /// Opens the file, or makes a new one where there is none, or a new one in place of a
    /// damaged file of ours, or turns the cache off (anything not ours at the path).
    private func open(_ state: inout OnQueue) {
        // Daemons opening one new file together: SQLite sometimes answers "database is
        // locked" at once, without waiting out the busy timeout (2 to 6 of 40 pairs of
        // `datasourced-cache-exercise` processes did, before this). Tried again, after a short random
        // pause, until the busy timeout has passed.
        let deadline = Date().addingTimeInterval(CacheDatabase.busyTimeout)
        var movedAside = false
        // A path that changes under every look (made, then replaced or deleted by another
        // process each time) is given up after a few.
        var looks = 0
        while true {
            do throws(CacheProblem) {
                try file.makeDirectory()
                looks += 1
                switch try file.examine(narrowingMode: true) {
                case .absent:
                    guard looks <= 8 else { throw .unusable("\(path) kept changing while it was opened") }
                    _ = try file.create(image: CacheDatabase.newFileImage())
                    continue
                case .notOurs(let what):
                    throw .notOurs("\(path) is \(what), not a datasourced cache file")
                case .ours(let identity):
                    state.openedIdentity = identity
                }
                state.database = try CacheDatabase.open(path: path)
                available.store(true, ordering: .releasing)
                return
            } catch .damaged(let reason) where !movedAside {
                movedAside = true
                moveAside(because: reason, state)
            } catch .replaced where looks <= 8 {
                continue
            } catch .busy where Date() < deadline {
                usleep(useconds_t.random(in: 5_000...50_000))
            } catch {
                turnOff(because: error, &state)
                return
            }
        }
    }

    /// The open database, reopened first when another process moved the file aside (or it
    /// was deleted) since we opened it: our writes would go to a file no one reads.
    private func usableDatabase(_ state: inout OnQueue) -> CacheDatabase? {
        guard state.database != nil else { return nil }
        if file.identity != state.openedIdentity {
            logger.notice("page cache: \(path) was replaced by another process; reopening it")
            state.database?.close()
            state.database = nil
            open(&state)
        }
        return state.database
    }

    private func handle(_ problem: CacheProblem, _ state: inout OnQueue) {
        switch problem {
        case .damaged(let reason):
            state.database?.close()
            state.database = nil
            moveAside(because: reason, state)
            open(&state)
        case .notOurs, .replaced, .unusable:
            turnOff(because: problem, &state)
        case .busy(let reason):
            logger.warning(
                "page cache: skipped, \(path) stayed locked by another process for \(Int(CacheDatabase.busyTimeout)) s (\(reason))")
        }
    }

    /// Only ever the file examined as ours and opened (`openedIdentity`): a `.damaged` comes
    /// from SQLite on that file.
    private func moveAside(because reason: String, _ state: OnQueue) {
        if let opened = state.openedIdentity, let aside = file.moveAside(opened: opened, now: Int(Date().timeIntervalSince1970)) {
            logger.warning("page cache: \(reason); moved it aside to \(aside) and starting a new cache")
        } else {
            logger.warning(
                "page cache: \(reason); starting a new cache (the path no longer names that file: another process moved it aside)")
        }
    }

    /// The cache is off for the rest of this process: one warning, then silence.
    private func turnOff(because problem: CacheProblem, _ state: inout OnQueue) {
        state.database?.close()
        state.database = nil
        available.store(false, ordering: .releasing)
        if case .notOurs = problem {
            logger.warning("page cache: \(problem.reason); running without a cache (and leaving it as it is)")
        } else {
            logger.warning("page cache: \(problem.reason); running without a cache")
        }
    }

    private func markUsed(_ digest: Data, _ state: inout OnQueue) {
        using(&state, doing: "marking an entry used") { database, state in try database.markUsed(key: digest, at: stamp(&state)) }
    }

    /// `body` on the database when it is usable; nil when it is not, or when `body` throws:
    /// then the error is the problem met `doing` it (`handle`).
    @discardableResult
    private func using<Answer>(
        _ state: inout OnQueue, doing: String, _ body: (CacheDatabase, inout OnQueue) throws -> Answer
    ) -> Answer? {
        guard let database = usableDatabase(&state) else { return nil }
        do {
            return try body(database, &state)
        } catch {
            handle(CacheProblem(error, doing: doing), &state)
            return nil
        }
    }

    /// Now, but always later than the last stamp this store gave: least recently used order
    /// follows the order of the calls even within one clock tick.
    private func stamp(_ state: inout OnQueue) -> Double {
        state.lastStamp = max(Date().timeIntervalSince1970, state.lastStamp.nextUp)
        return state.lastStamp
    }

    /// The only form of a key that leaves memory.
    static func digest(_ key: PageCacheKey) -> Data {
        Data(SHA256.digest(Array(key.material.utf8)))
    }
}

/// Why `datasourced cache list` or `cache clear` did nothing; the description names the path.
package struct CacheFileRefusal: Error, CustomStringConvertible {
    package let description: String

    init(description: String) {
        self.description = description
    }

    init(_ problem: CacheProblem) {
        switch problem {
        case .notOurs(let reason):
            description = "\(reason); left as it is"
        case .damaged(let reason):
            description = "\(reason); left as it is (a daemon moves a damaged cache file aside)"
        case .replaced(let reason):
            description = "\(reason) (tried 8 times)"
        case .unusable(let reason), .busy(let reason):
            description = reason
        }
    }
}
