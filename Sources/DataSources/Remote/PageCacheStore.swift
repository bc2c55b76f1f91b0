/// Where a remote or paginated source's loaded pages outlive the daemon (a persisted cache).
/// The daemon's store is SQLite (the PageCache module); the model only sees this protocol,
/// so it builds, and is tested, without one.
///
/// Every call is made on the sources' thread. Reads answer at once (a list opens from them);
/// writes may land later, in the order made, and a read always sees the writes made before it.
/// A store that has failed (a read-only file, a full disk) answers reads with nil and drops
/// writes: a cache problem is never an error for a client.
package protocol PageCacheStore: AnyObject {
    /// The entry stored under `key`, or nil. Marks it as used (least recently used go first).
    func read(_ key: PageCacheKey) -> StoredPages?
    /// Replaces the entry under `key` with `payload` (made on the store's own thread: it is
    /// the costly part), as one transaction: a reader sees the old entry or the new, never a mix.
    func write(_ key: PageCacheKey, storedAt: Double, payload: @escaping @Sendable () -> [UInt8])
    /// Records that the server confirmed the entry under `key` at `storedAt` (a `304`).
    func touch(_ key: PageCacheKey, storedAt: Double)
    func remove(_ key: PageCacheKey)
    /// Whether entries are read and written now (false once the store has degraded).
    var isAvailable: Bool { get }
    /// Returns once the writes made so far are done.
    func flush()
    /// Finishes the writes made so far and lets go of the store's files (the daemon calls it
    /// as it exits); afterwards the store answers like one that has failed.
    func close()
    /// Logs `message` at debug level, where the store logs (a source's warm open reports where
    /// its time went: Benchmarks/cache.py reads it).
    func trace(_ message: @autoclosure () -> String)
}

extension PageCacheStore {
    /// A store that holds no files only has writes to finish.
    package func close() { flush() }
    /// A store without a log says nothing.
    package func trace(_ message: @autoclosure () -> String) {}
}

/// Names a cache entry.
package struct PageCacheKey: Sendable, Hashable {
    /// Everything that changes what the server returns, secret header values included: the
    /// store keeps only a hash of it (SHA-256), never the text.
    package let material: String
    /// A name for people (the first page's URL without credentials), stored beside the hash.
    package let label: String

    package init(material: String, label: String) {
        self.material = material
        self.label = label
    }
}

/// An entry as stored: its bytes (`CachedPages.encoded()`), and when the server last gave
/// or confirmed them (seconds since 1970).
package struct StoredPages: Sendable {
    package let payload: [UInt8]
    package let storedAt: Double

    package init(payload: [UInt8], storedAt: Double) {
        self.payload = payload
        self.storedAt = storedAt
    }
}
