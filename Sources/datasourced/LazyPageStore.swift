import DataSources
import Logging
import PageCache

/// The persisted cache, opened when a source first uses it: a daemon whose sources never
/// ask for a cache creates no file and pays nothing at start.
final class LazyPageStore: PageCacheStore {
    private let open: () -> SQLitePageStore
    private var store: SQLitePageStore?

    /// `path` is resolved when the store opens (the default path reads the environment).
    init(path: @escaping @autoclosure () -> String, maximumBytes: Int, logger: Logger) {
        open = { SQLitePageStore(path: path(), maximumBytes: maximumBytes, logger: logger) }
    }

    private var opened: SQLitePageStore {
        if let store { return store }
        let made = open()
        store = made
        return made
    }

    var isAvailable: Bool { opened.isAvailable }
    func read(_ key: PageCacheKey) -> StoredPages? { opened.read(key) }
    func readHead(_ key: PageCacheKey) -> (payload: [UInt8], storedAt: Double)? { opened.readHead(key) }
    func readPage(_ key: PageCacheKey, at index: Int) -> [UInt8]? { opened.readPage(key, at: index) }
    func readPage(_ key: PageCacheKey, at index: Int, storedAt: Double) -> [UInt8]? {
        opened.readPage(key, at: index, storedAt: storedAt)
    }
    func write(_ key: PageCacheKey, storedAt: Double, entry: EntryPages) { opened.write(key, storedAt: storedAt, entry: entry) }
    func touch(_ key: PageCacheKey, storedAt: Double) { opened.touch(key, storedAt: storedAt) }
    func remove(_ key: PageCacheKey) { opened.remove(key) }
    func trace(_ message: @autoclosure () -> String) { store?.trace(message()) }
    /// Nothing to wait for when it was never opened.
    func flush() { store?.flush() }
    /// Closed, the last connection folds the WAL back into the file and removes the -wal
    /// and -shm files, which a daemon that only flushed at exit left behind every time.
    func close() { store?.close() }
}
