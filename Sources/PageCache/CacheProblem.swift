import GRDB

/// What a failure means for the cache, which decides what the store does next. A cache
/// problem is never an error for a client: the store moves a damaged file of its own aside,
/// or runs without a cache, or skips one operation.
enum CacheProblem: Error {
    /// A file of ours (by its header) that is no longer a sound datasourced cache (corrupt,
    /// truncated, not SQLite past its header): move it aside and start a new one.
    case damaged(String)
    /// Something the store did not make is in the way (at the path, or a -wal or -shm beside
    /// it): run without a cache, and leave it exactly as it is.
    case notOurs(String)
    /// The path changed while it was examined: look again.
    case replaced(String)
    /// The cache cannot be used now (a read-only file or directory, a full disk, a file
    /// made by a newer datasourced): run without a cache.
    case unusable(String)
    /// One operation gave up: another process held the write lock past the busy timeout.
    case busy(String)

    init(_ error: any Error, doing action: String) {
        if let problem = error as? CacheProblem {
            self = problem
            return
        }
        guard let error = error as? DatabaseError else {
            self = .unusable("\(action): \(error)")
            return
        }
        // The message only: GRDB's description would add the SQL, which is harmless but
        // long, and statement arguments (payloads) must never reach a log.
        let text = "\(action): SQLite error \(error.extendedResultCode.rawValue), \(error.message ?? "no message")"
        switch error.resultCode {
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            self = .damaged(text)
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            self = .busy(text)
        default:
            // SQLITE_READONLY, SQLITE_FULL, SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_PERM and
            // anything unforeseen: not worth a retry on every write.
            self = .unusable(text)
        }
    }

    var reason: String {
        switch self {
        case .damaged(let reason), .notOurs(let reason), .replaced(let reason), .unusable(let reason), .busy(let reason): reason
        }
    }
}
