import DataSources
import Foundation
import GRDB
import PageCache
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Whatever the store did not make is left exactly as it was: at the cache path it means
/// "running without a cache", with one warning naming the path and what is there; no mode
/// change, no byte written, no rename, no -journal, -wal or -shm beside it (CACHE.md, "Data
/// safety"). Each thing is checked after a store was opened, written, read, listed, cleared
/// and closed on it.
@Suite struct ForeignFileTests {
    let scratch = ScratchDirectory()
    /// Another directory, where a symbolic link points.
    let elsewhere = ScratchDirectory("elsewhere")
    let log = CapturedLog()
    let key = PageCacheKey(material: "GET https://api.example.test/issues", label: "https://api.example.test/issues")

    enum Thing: String, CaseIterable, CustomTestStringConvertible {
        case directory, fifo, socket, textFile, randomBytes, emptyFile, anotherProgramsDatabase,
            anotherProgramsWALDatabase, anotherApplicationID, ourCacheCutBelowItsHeader,
            symbolicLinkToAForeignFile, symbolicLinkToOurCache

        var testDescription: String { rawValue }
    }

    /// Makes `thing` at `path`; answers what the warning must call it and the paths the test
    /// watches besides `path` (a link's target).
    private func make(_ thing: Thing, at path: String) throws -> (what: String, alsoWatched: [String]) {
        switch thing {
        case .directory:
            try #require(mkdir(path, 0o755) == 0)
            chmod(path, 0o755)
            #expect(FileManager.default.createFile(atPath: path + "/theirs.txt", contents: Data("theirs\n".utf8)))
            return ("a directory", [path + "/theirs.txt"])
        case .fifo:
            try #require(mkfifo(path, 0o644) == 0)
            chmod(path, 0o644)
            return ("a FIFO", [])
        case .socket:
            try bindSocket(at: path)
            return ("a socket", [])
        case .textFile:
            try writeFile(path, Array("buy milk\n".utf8), mode: 0o644)
            return ("not a SQLite database", [])
        case .randomBytes:
            var generator = SystemRandomNumberGenerator()
            try writeFile(path, (0..<40_000).map { _ in UInt8.random(in: 0...255, using: &generator) }, mode: 0o644)
            return ("not a SQLite database", [])
        case .emptyFile:
            try writeFile(path, [], mode: 0o644)
            return ("an empty file", [])
        case .anotherProgramsDatabase, .anotherProgramsWALDatabase, .anotherApplicationID:
            let foreign = try DatabaseQueue(path: path)
            try foreign.writeWithoutTransaction { db in
                if thing == .anotherProgramsWALDatabase { try db.execute(sql: "PRAGMA journal_mode = WAL") }
                if thing == .anotherApplicationID { try db.execute(sql: "PRAGMA application_id = 1234; PRAGMA user_version = 1") }
                try db.execute(sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('keep me')")
            }
            try foreign.close()
            chmod(path, 0o644)
            return (thing == .anotherApplicationID ? "application_id 1234" : "another program's SQLite database", [])
        case .ourCacheCutBelowItsHeader:
            makeOurCache(path)
            try writeFile(path, Array(fileBytes(path).prefix(60)), mode: 0o600)
            return ("not a SQLite database", [])
        case .symbolicLinkToAForeignFile:
            let target = elsewhere.file("notes.txt")
            try writeFile(target, Array("buy milk\n".utf8), mode: 0o644)
            try #require(symlink(target, path) == 0)
            return ("a symbolic link", [target])
        case .symbolicLinkToOurCache:
            let target = elsewhere.file("cache.sqlite")
            makeOurCache(target)
            try #require(symlink(target, path) == 0)
            return ("a symbolic link", [target])
        }
    }

    private func makeOurCache(_ path: String) {
        let store = SQLitePageStore(path: path, logger: log.logger)
        store.write(key, storedAt: 1, payload: { makePayload(1, count: 20_000) })
        store.close()
        #expect(log.warnings.isEmpty, "\(log.warnings)")
    }

    @Test(arguments: Thing.allCases)
    func leftUntouched(_ thing: Thing) throws {
        let path = scratch.file("cache.sqlite")
        let (what, alsoWatched) = try make(thing, at: path)
        try expectLeftUntouched(path, what: what, watching: alsoWatched)
    }

    /// A copy of /dev/null (made here with mknod: the real one is never used).
    @Test(.enabled(if: geteuid() == 0, "mknod needs root (CAP_MKNOD); CI runs the tests as root"))
    func aCharacterDevice() throws {
        let path = scratch.file("cache.sqlite")
        // makedev(1, 3): /dev/null's numbers.
        try #require(mknod(path, S_IFCHR | 0o666, 0x0103) == 0)
        chmod(path, 0o666)
        try expectLeftUntouched(path, what: "a character device", watching: [])
    }

    private func expectLeftUntouched(
        _ path: String, what: String, watching alsoWatched: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let watched = [path] + alsoWatched
        let directories = [scratch.path, elsewhere.path] + (isDirectory(path) ? [path] : [])
        let before = PathSnapshot(watched, directories: directories)
        let store = SQLitePageStore(path: path, logger: log.logger)
        #expect(!store.isAvailable, sourceLocation: sourceLocation)
        store.write(key, storedAt: 1, payload: { makePayload(1, count: 5000) })
        #expect(store.read(key) == nil, sourceLocation: sourceLocation)
        store.touch(key, storedAt: 2)
        store.remove(key)
        #expect(store.entries() == nil, sourceLocation: sourceLocation)
        #expect(store.removeAll() == nil, sourceLocation: sourceLocation)
        store.flush()
        store.close()
        let after = PathSnapshot(watched, directories: directories)
        #expect(after == before, "\(after.differences(from: before))", sourceLocation: sourceLocation)
        #expect(log.warnings.count == 1, "\(log.warnings)", sourceLocation: sourceLocation)
        let warning = log.warnings.first ?? ""
        #expect(
            warning.contains(path) && warning.contains(what) && warning.contains("running without a cache"),
            "\(warning)", sourceLocation: sourceLocation)
    }

    // MARK: What SQLite would put beside a missing cache file

    /// A file named like SQLite's WAL beside a path with no file, that is not one: SQLite would
    /// take it for the new cache's WAL. It is not ours to delete, so the cache stays off.
    @Test(arguments: [("-wal", "buy milk\n"), ("-shm", "buy bread\n")])
    func aFileNamedLikeAWALBesideNoCache(suffix: String, text: String) throws {
        let path = scratch.file("cache.sqlite")
        try writeFile(path + suffix, Array(text.utf8), mode: 0o644)
        try expectLeftUntouched(path, what: "cache.sqlite\(suffix)", watching: [path + suffix])
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// Another program's database whose file is gone (renamed for a moment, say), its WAL still
    /// there: its last commits are in that WAL, which is not ours to delete.
    @Test func anotherProgramsWALBesideNoCache() throws {
        let path = scratch.file("cache.sqlite")
        let theirs = elsewhere.file("theirs.sqlite")
        let foreign = try DatabaseQueue(path: theirs)
        try foreign.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('keep me')")
        }
        // While it is open its commits are in its -wal: that copy is the leftover.
        try writeFile(path + "-wal", fileBytes(theirs + "-wal"), mode: 0o600)
        try writeFile(path + "-shm", fileBytes(theirs + "-shm"), mode: 0o600)
        try foreign.close()
        #expect(fileBytes(path + "-wal").count > 32)
        try expectLeftUntouched(path, what: "cache.sqlite-wal", watching: [path + "-wal", path + "-shm"])
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// Our own WAL and index left by a killed daemon, the cache file deleted by hand since: the
    /// WAL holds a copy of our page 1, so it is ours, and it goes (SQLite would replay it into
    /// the new file).
    @Test func ourOwnWALBesideNoCacheIsRemoved() throws {
        let path = scratch.file("cache.sqlite")
        let writer = try ExerciseProcess(["crash", "--cache-path", path, "--slots", "2"])
        #expect(writer.readLine() == "ready")
        while let line = writer.readLine(), line != "committed 3" {}
        writer.kill()
        writer.finish()
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(FileManager.default.fileExists(atPath: path + "-shm"))
        #expect(unlink(path) == 0)
        let store = SQLitePageStore(path: path, logger: log.logger)
        #expect(store.isAvailable)
        #expect(store.read(ExerciseEntry.key(writer: 0, slot: 1)) == nil, "a new, empty cache: nothing of the old WAL was replayed")
        store.write(key, storedAt: 5, payload: { makePayload(5, count: 20_000) })
        #expect(store.read(key)?.payload == makePayload(5, count: 20_000))
        store.close()
        #expect(log.warnings.isEmpty, "\(log.warnings)")
    }

    // MARK: Ours

    /// A cache made by datasourced before the rule, as its daemons leave it (they exit without
    /// a checkpoint): an empty file switched to WAL, whose page 1 in the file is the empty
    /// database's (application_id 0), the schema and our id only in the WAL. Still ours.
    @Test func aCacheMadeBeforeTheRuleIsStillOurs() throws {
        let made = elsewhere.file("cache.sqlite"), path = scratch.file("cache.sqlite")
        try writeFile(made, [], mode: 0o600)
        let earlier = try DatabaseQueue(path: made)
        try earlier.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.inTransaction(.immediate) {
                try db.execute(
                    sql: """
                        CREATE TABLE entry (id INTEGER PRIMARY KEY, key BLOB NOT NULL UNIQUE, label TEXT NOT NULL, stored_at REAL NOT NULL,
                            used_at REAL NOT NULL, bytes INTEGER NOT NULL, payload BLOB NOT NULL);
                        CREATE INDEX entry_by_use ON entry(used_at);
                        PRAGMA application_id = 1685283684; PRAGMA user_version = 1
                        """)
                return .commit
            }
        }
        // The files as a daemon that exited left them: copied while the connection is open.
        for suffix in ["", "-wal", "-shm"] {
            try writeFile(path + suffix, fileBytes(made + suffix), mode: 0o600)
        }
        try earlier.close()
        #expect(Array(fileBytes(path)[68..<72]) == [0, 0, 0, 0], "the file's own page 1 does not say ours")
        let store = SQLitePageStore(path: path, logger: log.logger)
        #expect(store.isAvailable)
        store.write(key, storedAt: 5, payload: { makePayload(5, count: 20_000) })
        #expect(store.read(key)?.payload == makePayload(5, count: 20_000))
        store.close()
        #expect(log.warnings.isEmpty, "\(log.warnings)")
        #expect(filesAside(in: scratch.path).isEmpty)
        #expect(try SQLitePageStore.entries(inFileAt: path)?.count == 1)
    }

    // MARK: Made anew

    /// The file appears at its path whole, already marked as ours: a daemon starting at the
    /// same moment never sees an empty file (which it would have to take for someone else's).
    @Test func aNewCacheIsOursFromItsFirstByte() throws {
        let path = scratch.file("new/cache.sqlite")
        let store = SQLitePageStore(path: path, logger: log.logger)
        #expect(store.isAvailable)
        let header = fileBytes(path)
        #expect(header.starts(with: Array("SQLite format 3\0".utf8)))
        #expect(header.count >= 100 && Array(header[68..<72]) == [0x64, 0x73, 0x63, 0x64], "application_id \"dscd\"")
        store.close()
        #expect(permissions(path) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.file("new")) == ["cache.sqlite"], "no temporary file left")
    }
}

/// What a test can see of some paths without changing them: each one's lstat (type, mode,
/// inode, size, times of change), its bytes if it is a regular file, where it points if it
/// is a link; and the names in some directories.
struct PathSnapshot: Equatable {
    struct Entry: Equatable {
        var mode: UInt32 = 0, inode: UInt64 = 0, size: Int64 = 0
        var modified: [Int] = [], changed: [Int] = []
        var bytes: [UInt8]?
        var target: String?
        var missing = false
    }

    var entries: [String: Entry] = [:]
    var listings: [String: [String]] = [:]

    init(_ paths: [String], directories: [String]) {
        for path in paths {
            var status = stat()
            guard lstat(path, &status) == 0 else {
                entries[path] = Entry(missing: true)
                continue
            }
            var entry = Entry(
                mode: status.st_mode, inode: UInt64(status.st_ino), size: Int64(status.st_size),
                modified: [status.st_mtim.tv_sec, status.st_mtim.tv_nsec],
                changed: [status.st_ctim.tv_sec, status.st_ctim.tv_nsec])
            switch status.st_mode & S_IFMT {
            case S_IFREG: entry.bytes = fileBytes(path)
            case S_IFLNK: entry.target = try? FileManager.default.destinationOfSymbolicLink(atPath: path)
            default: break
            }
            entries[path] = entry
        }
        for directory in directories {
            listings[directory] = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
        }
    }

    func differences(from other: PathSnapshot) -> [String] {
        entries.keys.filter { entries[$0] != other.entries[$0] }.map { path in
            let (now, then) = (entries[path]!, other.entries[path] ?? Entry(missing: true))
            return "\(path): mode \(String(then.mode, radix: 8)) → \(String(now.mode, radix: 8)), inode \(then.inode) → \(now.inode), "
                + "size \(then.size) → \(now.size), modified \(then.modified) → \(now.modified), changed \(then.changed) → \(now.changed), "
                + "bytes \(then.bytes == now.bytes ? "same" : "changed"), missing \(then.missing) → \(now.missing)"
        }
            + listings.keys.filter { listings[$0] != other.listings[$0] }.map {
                "\($0): \(other.listings[$0] ?? []) → \(listings[$0] ?? [])"
            }
    }
}

func isDirectory(_ path: String) -> Bool {
    var status = stat()
    return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
}

func writeFile(_ path: String, _ bytes: [UInt8], mode: mode_t) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    chmod(path, mode)
}

/// A Unix socket bound at `path` (the socket file stays after the descriptor is closed).
func bindSocket(at path: String) throws {
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    try #require(bytes.count < MemoryLayout.size(ofValue: address.sun_path))
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    try #require(bound == 0, "bind \(path): \(String(cString: strerror(errno)))")
}
