#if canImport(Glibc)
import Glibc
#endif

/// The cache file on disk, apart from what SQLite does with it: its directory (0700), its
/// creation (0600), and moving a bad one aside. Creating and moving aside happen under an
/// flock(2) on the directory, so two daemons starting at once, or both finding the same
/// file damaged, never undo each other's step.
struct CacheFile {
    let path: String

    /// Which file a path named when we opened it (a file moved aside and replaced by another
    /// daemon has a new identity).
    struct Identity: Equatable {
        let device: UInt64
        let inode: UInt64
    }

    var directory: String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    var identity: Identity? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return Identity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    /// Makes the directory and any missing parent, each 0700 (the entries are someone's data).
    func makeDirectory() throws(CacheProblem) {
        var prefix = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o700) != 0, errno != EEXIST {
                throw .unusable("cannot create the directory \(prefix): \(Self.describe(errno))")
            }
        }
    }

    /// Creates the file, empty and 0600, unless it exists; SQLite then keeps the mode for
    /// the -wal and -shm files it makes beside it. An existing file open to others is
    /// narrowed to 0600 when it is ours.
    func createIfMissing() throws(CacheProblem) {
        try withDirectoryLock { () throws(CacheProblem) in
            if access(path, F_OK) != 0 {
                // A -wal left without its database (the file deleted after a crash) would be
                // replayed into the new one by SQLite: it belongs to no file now.
                unlink(path + "-wal")
                unlink(path + "-shm")
                let descriptor = open(path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0o600)
                if descriptor < 0 {
                    guard errno == EEXIST else {
                        throw .unusable("cannot create \(path): \(Self.describe(errno))")
                    }
                } else {
                    close(descriptor)
                }
            }
        }
        var status = stat()
        if stat(path, &status) == 0, status.st_uid == geteuid(), status.st_mode & 0o077 != 0 {
            chmod(path, 0o600)
        }
    }

    /// Renames the file aside as `<path>.corrupt-<unix time>` (its -wal with it, which
    /// belongs to that file; the -shm index is dropped), unless another process already did
    /// and the path now names a newer file than `opened`. Answers the new name, or nil.
    func moveAside(opened: Identity?, now: Int) -> String? {
        withDirectoryLock {
            guard let current = identity, opened == nil || current == opened else { return nil }
            var aside = "\(path).corrupt-\(now)"
            var suffix = 1
            while access(aside, F_OK) == 0 {
                suffix += 1
                aside = "\(path).corrupt-\(now)-\(suffix)"
            }
            guard rename(path, aside) == 0 else { return nil }
            if access(path + "-wal", F_OK) == 0 { rename(path + "-wal", aside + "-wal") }
            unlink(path + "-shm")
            return aside
        }
    }

    private func withDirectoryLock<T, Failure: Error>(_ body: () throws(Failure) -> T) throws(Failure) -> T {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        // Without the lock (a directory we may not read), the steps still work alone; only
        // the race between two starting daemons is left open.
        guard descriptor >= 0 else { return try body() }
        defer { close(descriptor) }
        // Never waits for good: someone else may hold a lock on a directory we share (Neovim
        // locks its temporary directory). After two seconds the steps go on without it.
        var waitedMilliseconds = 0
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EINTR || errno == EWOULDBLOCK, waitedMilliseconds < 2000 else { break }
            if errno == EWOULDBLOCK {
                usleep(10_000)
                waitedMilliseconds += 10
            }
        }
        return try body()
    }

    static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
