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
    /// Page `index` of the entry stored under `key` alone (its bytes as `EntryPages.page` made
    /// them), or nil: a page asked for again is checked against its copy without reading the list.
    func readPage(_ key: PageCacheKey, at index: Int) -> [UInt8]?
    /// The head of the entry stored under `key` alone, and when it was stored, or nil: a list
    /// reopens from its head and first pages, and reads the rest page by page
    /// (`readPage(_:at:storedAt:)`). Marks it as used.
    func readHead(_ key: PageCacheKey) -> (payload: [UInt8], storedAt: Double)?
    /// Page `index` of the entry under `key`, while that entry is still the one stored (or
    /// confirmed) at `storedAt`; nil when it has no such page or was replaced, confirmed or
    /// removed since: the pages a list reopens from all come from one entry.
    func readPage(_ key: PageCacheKey, at index: Int, storedAt: Double) -> [UInt8]?
    /// Replaces the entry under `key` with `entry`'s head and pages (made on the store's own
    /// thread: it is the costly part), as one transaction: a reader sees the old entry or the
    /// new, never a mix. The first `entry.unchanged` pages stay as stored when the stored
    /// entry holds them (else every page is made), so saving the page after the last costs
    /// that page, not the list.
    func write(_ key: PageCacheKey, storedAt: Double, entry: EntryPages)
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
    /// A store that reads whole entries reads the page from its entry.
    package func readPage(_ key: PageCacheKey, at index: Int) -> [UInt8]? {
        guard let pages = read(key)?.pages, pages.indices.contains(index) else { return nil }
        return pages[index]
    }
    /// A store that reads whole entries reads the head from its entry.
    package func readHead(_ key: PageCacheKey) -> (payload: [UInt8], storedAt: Double)? {
        read(key).map { ($0.payload, $0.storedAt) }
    }
    package func readPage(_ key: PageCacheKey, at index: Int, storedAt: Double) -> [UInt8]? {
        guard let stored = read(key), stored.storedAt == storedAt, stored.pages.indices.contains(index) else { return nil }
        return stored.pages[index]
    }
    /// Replaces the entry under `key` with `payload` alone (an entry of no pages); one not
    /// `evictable` stays however full the cache is.
    package func write(_ key: PageCacheKey, storedAt: Double, evictable: Bool = true, payload: @escaping @Sendable () -> [UInt8]) {
        write(key, storedAt: storedAt, entry: EntryPages(evictable: evictable, head: payload))
    }
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

/// An entry to store: a head, and pages stored one by one (`CachedPages.head()` and
/// `CachedPages.page(_:)`), each made only when the store writes it.
package struct EntryPages: Sendable {
    /// The pages the entry holds.
    package let count: Int
    /// The first pages, as the entry stored under the key holds them, that stay as they are.
    package let unchanged: Int
    package let head: @Sendable () -> [UInt8]
    /// Page `index`'s bytes, for `unchanged..<count` (or all, when the stored entry does not
    /// hold the unchanged ones).
    package let page: @Sendable (_ index: Int) -> [UInt8]
    /// False for an entry the bound never evicts: what the user did and the server has not
    /// yet taken (pending actions) is not a copy of anything, and would be lost.
    package let evictable: Bool

    package init(
        count: Int = 0, unchanged: Int = 0, evictable: Bool = true, head: @escaping @Sendable () -> [UInt8],
        page: @escaping @Sendable (_ index: Int) -> [UInt8] = { _ in [] }
    ) {
        self.count = max(0, count)
        self.unchanged = min(max(0, unchanged), self.count)
        self.evictable = evictable
        self.head = head
        self.page = page
    }

    /// The same entry with every page made anew.
    package var allChanged: EntryPages { EntryPages(count: count, evictable: evictable, head: head, page: page) }

    /// The entry as a store that holds entries whole (in memory) keeps it after this write
    /// over `old`, and how many pages it made: the unchanged pages kept when `old` holds
    /// them, as the SQLite store does.
    package func stored(over old: StoredPages?, at storedAt: Double) -> (StoredPages, made: Int) {
        let keep = (old?.pages.count ?? 0) >= unchanged ? unchanged : 0
        let kept = old.map { Array($0.pages.prefix(keep)) } ?? []
        let made = (keep..<count).map(page)
        return (StoredPages(payload: head(), pages: kept + made, storedAt: storedAt), made.count)
    }
}

/// An entry as stored: its head (`CachedPages.head()`, or a whole entry of an earlier
/// format), its pages in order, and when the server last gave or confirmed them (seconds
/// since 1970).
package struct StoredPages: Sendable {
    package let payload: [UInt8]
    package let pages: [[UInt8]]
    package let storedAt: Double

    package init(payload: [UInt8], pages: [[UInt8]] = [], storedAt: Double) {
        self.payload = payload
        self.pages = pages
        self.storedAt = storedAt
    }
}
