#if canImport(Glibc)
import Glibc
#endif
import Basics

/// The cache file on disk, apart from what SQLite does with it, under one rule (CACHE.md,
/// "Data safety"): the store writes, renames, changes the mode of or deletes only files it
/// created. Its own are known by the application id in their SQLite header, read here before
/// SQLite ever opens the path (SQLite would make a -journal or -wal beside whatever it opens,
/// and roll back or replay into it), or by having been absent: a new cache is written whole
/// under a temporary name and linked to the path, which fails if anything is there by then.
/// Anything else at the path is left exactly as it is, and the store runs without a cache.
///
/// Making a file and moving one aside happen under an flock(2) on the directory, so two
/// daemons starting at once, or both finding the same file damaged, never undo each other's
/// step.
struct CacheFile {
    let path: String

    /// Which file a path named when we looked (a file moved aside and replaced by another
    /// daemon has a new identity).
    struct Identity: Equatable {
        let device: UInt64
        let inode: UInt64

        init(_ status: stat) {
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
        }
    }

    /// What is at the path.
    enum Found {
        case absent
        case ours(Identity)
        /// What it is, for a warning: "a directory", "another program's SQLite database", ...
        case notOurs(String)
    }

    /// "dscd", big-endian at offset 68 of the file, where `PRAGMA application_id` writes it.
    static let applicationID = UInt32(bitPattern: CacheDatabase.applicationID)
    static let sqliteMagic = Array("SQLite format 3\0".utf8)
    static let headerSize = 100

    var directory: String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// What the path itself names, a link not followed: a link put in the file's place is a
    /// change.
    var identity: Identity? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return Identity(status)
    }

    /// The file's size and times, to tell whether it changed while it was read.
    var sizeAndTimes: [Int] {
        var status = stat()
        guard lstat(path, &status) == 0 else { return [] }
        return [Int(status.st_size), status.st_mtim.tv_sec, status.st_mtim.tv_nsec, status.st_ctim.tv_sec, status.st_ctim.tv_nsec]
    }

    /// Whether anything is at `<path>-wal` (a daemon has the file open, or was killed with it
    /// open) or at `<path>-journal` (one was killed while switching a new file to WAL): then
    /// not every commit is in the file alone.
    var hasJournal: Bool {
        var status = stat()
        return lstat(path + "-wal", &status) == 0 || lstat(path + "-journal", &status) == 0
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

    // MARK: Recognising

    /// Looks at the path without following a link and without SQLite: its type, then the first
    /// 100 bytes of a regular file. With `narrowingMode`, a file of ours open to group or others
    /// loses those bits (through the descriptor checked, never the path, which may have
    /// changed since).
    func examine(narrowingMode: Bool) throws(CacheProblem) -> Found {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            guard errno == ENOENT else { throw .unusable("cannot look at \(path): \(Self.describe(errno))") }
            return .absent
        }
        guard status.st_mode & S_IFMT == S_IFREG else { return .notOurs(Self.kind(of: status, at: path)) }
        // O_NONBLOCK, O_NOCTTY: harmless for a regular file, and whatever replaced it since the
        // lstat neither blocks nor becomes our terminal; O_NOFOLLOW: nor is a link followed.
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT || errno == ELOOP { throw .replaced("\(path) changed while it was examined") }
            throw .unusable("cannot read \(path): \(Self.describe(errno))")
        }
        defer { close(descriptor) }
        var opened = stat()
        guard fstat(descriptor, &opened) == 0 else { throw .unusable("cannot read \(path): \(Self.describe(errno))") }
        guard Identity(opened) == Identity(status), opened.st_mode & S_IFMT == S_IFREG else {
            throw .replaced("\(path) changed while it was examined")
        }
        let header = Self.read(descriptor, at: 0, count: Self.headerSize)
        if opened.st_size == 0 {
            return .notOurs("an empty file (a cache file is never empty: datasourced makes it whole)")
        }
        guard header.count == Self.headerSize, header.starts(with: Self.sqliteMagic) else {
            let size = Int64(opened.st_size)
            let why = header.count < Self.headerSize ? "shorter than a SQLite header" : "no SQLite header"
            return .notOurs("not a SQLite database (\(size) byte\(size == 1 ? "" : "s"), \(why))")
        }
        let application = Self.bigEndian32(header, at: 68)
        // A cache made by an earlier datasourced (an empty file switched to WAL, then the
        // schema and our id written to the WAL) says so only in its WAL until a checkpoint
        // folds that back, and daemons exit without one: such a file, its page 1 still the
        // empty database's, is ours when its -wal is provably ours.
        guard application == Self.applicationID || application == 0 && Self.hasOurWAL(beside: path) else {
            return .notOurs(
                "another program's SQLite database\(application == 0 ? "" : " (application_id \(Int32(bitPattern: application)))")")
        }
        if narrowingMode, opened.st_uid == geteuid(), opened.st_mode & 0o077 != 0 {
            fchmod(descriptor, opened.st_mode & 0o700)
        }
        return .ours(Identity(opened))
    }

    static func kind(of status: stat, at path: String) -> String {
        switch status.st_mode & S_IFMT {
        case S_IFDIR: return "a directory"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFIFO: return "a FIFO"
        case S_IFSOCK: return "a socket"
        case S_IFLNK:
            var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX))
            let count = buffer.withUnsafeMutableBufferPointer { readlink(path, $0.baseAddress!, $0.count) }
            let target = count >= 0 ? " to \(String(decoding: buffer[..<count], as: UTF8.self))" : ""
            // Not followed even to a file of ours: SQLite would put its -wal and -shm beside the
            // target, and a damaged file could not be moved aside without renaming the link.
            return "a symbolic link\(target) (never followed)"
        default: return "not a regular file"
        }
    }

    // MARK: Making a new file

    /// Makes a new cache at the (absent) path: `image`, a whole database already marked as
    /// ours, written and synced under a temporary name, then linked to the path. No one ever
    /// sees the path name an empty or half-written file (which would not be recognisably
    /// ours). Answers false when something appeared at the path first (another daemon's new
    /// file, usually): the caller examines it again.
    ///
    /// Before that, a -wal or -shm left beside the absent path is removed if it is provably
    /// ours (`removeLeftovers`); SQLite would otherwise take it for the new file's.
    func create(image: [UInt8]) throws(CacheProblem) -> Bool {
        try withDirectoryLock { () throws(CacheProblem) -> Bool in
            var status = stat()
            guard lstat(path, &status) != 0, errno == ENOENT else { return false }
            try removeLeftovers()
            var template = Array("\(path).new-XXXXXX".utf8CString)
            // mkstemp: O_CREAT|O_EXCL, 0600; the temporary file is ours from its first byte.
            let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard descriptor >= 0 else { throw .unusable("cannot create a file in \(directory): \(Self.describe(errno))") }
            let temporary = String(cString: template)
            defer { unlink(temporary) }
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            let written = Self.writeAll(descriptor, image)
            // Synced before it is linked: after a power loss the path names the whole file or
            // nothing, never an empty file no one could tell from another's.
            let synced = written && fsync(descriptor) == 0
            let failure = errno
            close(descriptor)
            guard synced else { throw .unusable("cannot write a new cache file in \(directory): \(Self.describe(failure))") }
            guard link(temporary, path) == 0 else {
                guard errno == EEXIST else { throw .unusable("cannot create \(path): \(Self.describe(errno))") }
                return false
            }
            return true
        }
    }

    /// SQLite takes `<path>-wal` and `<path>-shm` for the WAL and index of whatever file is at
    /// the path, and would replay that WAL into our new file. Left by a daemon killed before
    /// the file was deleted by hand, they are ours and go. They are removed only when provably
    /// ours: regular files of this user, the WAL holding a copy of a page 1 that carries our
    /// application id, the index with SQLite's wal-index header beside that WAL. Anything
    /// else (another program's WAL, whose last commits it may hold, a WAL that cannot be
    /// told, an index alone, a file of any other kind) is not ours to delete: the cache stays
    /// off, saying which file is in the way.
    private func removeLeftovers() throws(CacheProblem) {
        let wal = path + "-wal", shm = path + "-shm"
        let walFound = try Self.examineLeftover(wal, isOurs: Self.isOurWAL)
        let shmFound = try Self.examineLeftover(shm, isOurs: Self.isWALIndex)
        switch (walFound, shmFound) {
        case (nil, nil):
            return
        case (.some(nil), nil), (.some(nil), .some(nil)):
            unlink(shm)
            unlink(wal)
        case (_, .some(let what?)):
            throw .notOurs(
                "\(shm) is \(what), beside no cache file, where SQLite would take it for the new cache's WAL index; remove it if no program has a database at \(path)"
            )
        case (.some(let what?), _):
            throw .notOurs(
                "\(wal) is \(what), beside no cache file, where SQLite would replay it into the new cache; remove it if no program has a database at \(path)"
            )
        case (nil, .some(nil)):
            throw .notOurs(
                "\(shm) is a SQLite WAL index without its WAL, beside no cache file, which cannot be told from another program's; remove it if no program has a database at \(path)"
            )
        }
    }

    private static func hasOurWAL(beside path: String) -> Bool {
        guard case .some(nil) = try? examineLeftover(path + "-wal", isOurs: isOurWAL) else { return false }
        return true
    }

    /// nil: nothing there; .some(nil): ours; .some(what): what it is, not provably ours.
    private static func examineLeftover(_ path: String, isOurs: (Int32, Int64) -> Bool) throws(CacheProblem) -> String?? {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            guard errno == ENOENT else { throw .unusable("cannot look at \(path): \(describe(errno))") }
            return nil
        }
        guard status.st_mode & S_IFMT == S_IFREG else { return .some(kind(of: status, at: path)) }
        guard status.st_uid == geteuid() else { return .some("another user's file") }
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else { return .some("a file that cannot be read (\(describe(errno)))") }
        defer { close(descriptor) }
        var opened = stat()
        guard fstat(descriptor, &opened) == 0, Identity(opened) == Identity(status) else {
            return .some("a file that changed while it was examined")
        }
        return isOurs(descriptor, Int64(opened.st_size)) ? .some(nil) : .some("not a WAL file of a datasourced cache")
    }

    /// A SQLite WAL (its header: magic, format 3007000, a page size) with a frame holding a
    /// page 1 marked as ours. Frames are looked at whether or not their checksums hold: any
    /// copy of our page 1 shows SQLite wrote this file for a datasourced cache.
    private static func isOurWAL(_ descriptor: Int32, size: Int64) -> Bool {
        let header = read(descriptor, at: 0, count: 32)
        guard header.count == 32 else { return false }
        let magic = bigEndian32(header, at: 0), format = bigEndian32(header, at: 4), pageSize = Int64(bigEndian32(header, at: 8))
        guard magic & 0xffff_fffe == 0x377f_0682, format == 3_007_000,
            pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0
        else { return false }
        let frameSize = 24 + pageSize
        var frame: Int64 = 32
        while frame + frameSize <= size {
            let frameHeader = read(descriptor, at: frame, count: 4)
            if frameHeader.count == 4, bigEndian32(frameHeader, at: 0) == 1 {
                let page = read(descriptor, at: frame + 24, count: headerSize)
                if page.count == headerSize, page.starts(with: sqliteMagic), bigEndian32(page, at: 68) == applicationID {
                    return true
                }
            }
            frame += frameSize
        }
        return false
    }

    /// SQLite's wal-index: its header's version (3007000, in the machine's byte order) in both
    /// copies of the header.
    private static func isWALIndex(_ descriptor: Int32, size: Int64) -> Bool {
        let header = read(descriptor, at: 0, count: 96)
        guard header.count == 96 else { return false }
        func version(at offset: Int) -> UInt32 {
            header.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
        }
        return version(at: 0) == 3_007_000 && version(at: 48) == 3_007_000
    }

    // MARK: Moving a damaged file of ours aside

    /// Renames the file aside as `<path>.corrupt-<unix time>`, its -wal with it (it belongs to
    /// that file), its -shm index dropped, unless the path no longer names the file of ours
    /// opened as `opened` (another process moved it already, or something else is there now:
    /// never ours to move). Answers the new name, or nil.
    ///
    /// The index goes first and the file last: a process killed in between leaves the damaged
    /// file at its path, found damaged again, never a -wal or -shm beside no file.
    func moveAside(opened: Identity, now: Int) -> String? {
        withDirectoryLock {
            guard identity == opened else { return nil }
            var aside = "\(path).corrupt-\(now)"
            var suffix = 1
            while access(aside, F_OK) == 0 {
                suffix += 1
                aside = "\(path).corrupt-\(now)-\(suffix)"
            }
            unlink(path + "-shm")
            var status = stat()
            if lstat(path + "-wal", &status) == 0, status.st_mode & S_IFMT == S_IFREG { rename(path + "-wal", aside + "-wal") }
            guard rename(path, aside) == 0 else { return nil }
            return aside
        }
    }

    // MARK: Helpers

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

    /// Up to `count` bytes from `offset` (fewer at the end of the file or on an error).
    static func read(_ descriptor: Int32, at offset: Int64, count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = bytes.withUnsafeMutableBytes {
                pread(descriptor, $0.baseAddress! + filled, count - filled, off_t(offset) + off_t(filled))
            }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { break }
            filled += got
        }
        return Array(bytes[..<filled])
    }

    private static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
        (try? FileDescriptor(rawValue: descriptor).writeAll(bytes)) != nil
    }

    static func bigEndian32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }

    static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
