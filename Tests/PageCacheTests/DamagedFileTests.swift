import DataSources
import Foundation
import GRDB
import PageCache
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Files of ours the store cannot use as they are: moved aside and replaced (a damaged one), or
/// the cache turned off (a newer schema, a read-only file, a full disk), never a crash and
/// never an error for the caller. Files not ours: ForeignFileTests.
@Suite struct DamagedFileTests {
    let scratch = ScratchDirectory()
    let log = CapturedLog()
    let key = PageCacheKey(material: "GET https://api.example.test/issues", label: "https://api.example.test/issues")

    /// Opens `path`, expects it moved aside with one warning, and a working fresh store.
    private func expectMovedAsideAndReplaced(_ path: String, original: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let store = SQLitePageStore(path: path, logger: log.logger)
        #expect(store.isAvailable, sourceLocation: sourceLocation)
        let aside = filesAside(in: scratch.path)
        #expect(aside.count == 1, "moved aside: \(aside)", sourceLocation: sourceLocation)
        if let name = aside.first {
            #expect(
                fileBytes(scratch.file(name)) == original, "the file moved aside is the one found, unchanged",
                sourceLocation: sourceLocation)
        }
        #expect(log.warnings.count == 1, "\(log.warnings)", sourceLocation: sourceLocation)
        #expect(
            log.warnings.first?.contains("moved it aside to \(path).corrupt-") == true, "\(log.warnings)", sourceLocation: sourceLocation)
        store.write(key, storedAt: 5, payload: { makePayload(5, count: 20_000) })
        #expect(store.read(key)?.payload == makePayload(5, count: 20_000), sourceLocation: sourceLocation)
        store.close()
        #expect(permissions(path) == 0o600, sourceLocation: sourceLocation)
    }

    /// Ours by its header, so ours to move aside. Cut below its 100-byte header it can no
    /// longer be told from someone else's file: ForeignFileTests leaves that one alone.
    @Test(arguments: [0.5, 0.1])
    func aTruncatedCache(keeping fraction: Double) {
        let path = scratch.file("cache.sqlite")
        let first = SQLitePageStore(path: path, logger: log.logger)
        for index in 0..<8 {
            let entry = PageCacheKey(material: "page \(index)", label: "page \(index)")
            first.write(entry, storedAt: 1, payload: { makePayload(UInt8(index), count: 100_000) })
        }
        first.close()
        let whole = fileBytes(path)
        #expect(whole.count > 800_000)
        let kept = Array(whole.prefix(max(1, Int(Double(whole.count) * fraction))))
        #expect(FileManager.default.createFile(atPath: path, contents: Data(kept)))
        expectMovedAsideAndReplaced(path, original: kept)
    }

    @Test func aNewerSchemaIsLeftAlone() throws {
        let path = scratch.file("cache.sqlite")
        SQLitePageStore(path: path, logger: log.logger).close()
        let newer = try DatabaseQueue(path: path)
        try newer.writeWithoutTransaction { try $0.execute(sql: "PRAGMA user_version = 4") }
        try newer.close()
        let before = fileBytes(path)
        let store = SQLitePageStore(path: path, logger: log.logger)
        #expect(!store.isAvailable)
        #expect(store.read(key) == nil)
        store.write(key, storedAt: 1, payload: { [1, 2, 3] })
        store.flush()
        store.close()
        #expect(filesAside(in: scratch.path).isEmpty)
        #expect(fileBytes(path) == before)
        #expect(log.warnings.count == 1)
        #expect(log.warnings.first?.contains("newer datasourced") == true)
    }

    @Test func corruptionFoundWhileRunning() throws {
        let path = scratch.file("cache.sqlite")
        let store = SQLitePageStore(path: path, logger: log.logger)
        store.write(key, storedAt: 1, payload: { makePayload(1, count: 200_000) })
        store.close()
        // Page 1 stays sound (the file opens), the entry's overflow pages become noise.
        var bytes = fileBytes(path)
        for index in 8192..<(bytes.count - 4096) { bytes[index] = UInt8(truncatingIfNeeded: index &* 7) }
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        let running = SQLitePageStore(path: path, logger: log.logger)
        #expect(running.isAvailable)
        #expect(log.warnings.isEmpty, "the file opens: \(log.warnings)")
        #expect(running.read(key) == nil)
        #expect(log.warnings.count == 1 && log.warnings[0].contains("SQLite error 11"), "SQLITE_CORRUPT: \(log.warnings)")
        #expect(filesAside(in: scratch.path).count == 1, "\(log.warnings)")
        #expect(running.isAvailable)
        running.write(key, storedAt: 2, payload: { makePayload(2, count: 1000) })
        #expect(running.read(key)?.payload == makePayload(2, count: 1000))
        running.close()
    }

    // MARK: Read-only: run as another user when the tests run as root (root writes anyway)

    private var unprivileged: [String] { geteuid() == 0 ? ["--as-user", "65534"] : [] }

    private func giveAway(_ path: String) {
        if geteuid() == 0 { chown(path, 65534, 65534) }
    }

    @Test func aReadOnlyFile() throws {
        let path = scratch.file("cache.sqlite")
        let store = SQLitePageStore(path: path, logger: log.logger)
        store.write(ExerciseEntry.key(writer: 0, slot: 0), storedAt: 1, payload: { makePayload(1, count: 5000) })
        store.close()
        giveAway(scratch.path)
        giveAway(path)
        chmod(path, 0o400)
        let before = fileBytes(path)
        let probe = try ExerciseProcess.run(["probe", "--cache-path", path] + unprivileged)
        #expect(probe.status == 0, "\(probe.stderr)")
        #expect(probe.lines == ["opened=false stored=false available=false finally=false"])
        #expect(cacheWarnings(probe.stderr).count == 1, "\(probe.stderr)")
        #expect(cacheWarnings(probe.stderr).first?.contains("running without a cache") == true)
        #expect(fileBytes(path) == before)
    }

    @Test(arguments: [false, true])
    func aReadOnlyDirectory(withAFile: Bool) throws {
        let directory = scratch.file("cache")
        let path = directory + "/cache.sqlite"
        if withAFile {
            let store = SQLitePageStore(path: path, logger: log.logger)
            store.write(key, storedAt: 1, payload: { makePayload(1, count: 5000) })
            store.close()
            giveAway(path)
        } else {
            mkdir(directory, 0o700)
        }
        giveAway(directory)
        chmod(directory, 0o500)
        defer { chmod(directory, 0o700) }
        let probe = try ExerciseProcess.run(["probe", "--cache-path", path] + unprivileged)
        #expect(probe.status == 0, "\(probe.stderr)")
        #expect(probe.lines == ["opened=false stored=false available=false finally=false"])
        #expect(cacheWarnings(probe.stderr).count == 1, "\(probe.stderr)")
        #expect(FileManager.default.fileExists(atPath: path) == withAFile)
    }

    // MARK: A full disk

    /// write(2) past RLIMIT_FSIZE fails (EFBIG, SIGXFSZ ignored): a process whose files cannot
    /// grow, which any user can make, unlike a full file system.
    @Test func filesThatCannotGrow() throws {
        let path = scratch.file("cache.sqlite")
        let probe = try ExerciseProcess.run(["probe", "--cache-path", path, "--file-size-headroom", "65536", "--payload-bytes", "1000000"])
        #expect(probe.status == 0, "\(probe.stderr)")
        #expect(probe.lines == ["opened=true stored=false available=false finally=false"])
        #expect(cacheWarnings(probe.stderr).count == 1, "\(probe.stderr)")
        #expect(cacheWarnings(probe.stderr).first?.contains("SQLite error 778") == true, "SQLITE_IOERR_WRITE: \(probe.stderr)")
        expectEarlierEntryIntact(path, payload: { ExerciseEntry.check($0)?.generation == 1 })
    }

    /// A real ENOSPC: a 256 KiB tmpfs (mount needs CAP_SYS_ADMIN; CI and these machines run
    /// the tests as root, where it is permitted).
    @Test(.enabled(if: TinyFileSystem.permitted, "mounting a tmpfs is not permitted here; filesThatCannotGrow covers the failing writes"))
    func aFullDisk() throws {
        let mountPoint = scratch.file("tmpfs")
        let fileSystem = try #require(TinyFileSystem(at: mountPoint, bytes: 256 << 10))
        defer { fileSystem.unmount() }
        let path = mountPoint + "/cache.sqlite"
        let store = SQLitePageStore(path: path, logger: log.logger)
        #expect(store.isAvailable)
        store.write(ExerciseEntry.key(writer: 0, slot: 0), storedAt: 1, payload: { makePayload(1, count: 5000) })
        store.write(ExerciseEntry.key(writer: 0, slot: 1), storedAt: 2, payload: { makePayload(2, count: 1 << 20) })
        #expect(store.read(ExerciseEntry.key(writer: 0, slot: 1)) == nil)
        #expect(!store.isAvailable)
        #expect(store.read(ExerciseEntry.key(writer: 0, slot: 0)) == nil, "a degraded store answers nil")
        store.write(ExerciseEntry.key(writer: 0, slot: 2), storedAt: 3, payload: { makePayload(3, count: 1 << 20) })
        store.flush()
        store.close()
        #expect(log.warnings.count == 1, "\(log.warnings)")
        #expect(log.warnings.first?.contains("SQLite error 13") == true, "SQLITE_FULL: \(log.warnings)")
        // The file on the full disk still holds the entry written before.
        let copy = scratch.file("copy")
        mkdir(copy, 0o700)
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + "/cache.sqlite" + suffix)
        }
        expectEarlierEntryIntact(copy + "/cache.sqlite", payload: { $0 == makePayload(1, count: 5000) })
    }

    private func expectEarlierEntryIntact(
        _ path: String, payload expected: ([UInt8]) -> Bool, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let reopened = SQLitePageStore(path: path, logger: log.logger)
        #expect(reopened.isAvailable, sourceLocation: sourceLocation)
        #expect(
            reopened.read(ExerciseEntry.key(writer: 0, slot: 0)).map { expected($0.payload) } == true,
            "the entry written before the failure", sourceLocation: sourceLocation)
        #expect(reopened.read(ExerciseEntry.key(writer: 0, slot: 1)) == nil, sourceLocation: sourceLocation)
        reopened.close()
        #expect(filesAside(in: scratch.path).isEmpty, sourceLocation: sourceLocation)
    }
}

/// A tmpfs of a few hundred KiB, for a real full disk.
struct TinyFileSystem {
    let mountPoint: String

    init?(at mountPoint: String, bytes: Int) {
        mkdir(mountPoint, 0o700)
        let mounted = "size=\(bytes),mode=0700".withCString { mount("tmpfs", mountPoint, "tmpfs", 0, $0) }
        guard mounted == 0 else { return nil }
        self.mountPoint = mountPoint
    }

    func unmount() {
        umount2(mountPoint, Int32(MNT_DETACH))
    }

    static let permitted: Bool = {
        let probe = FileManager.default.temporaryDirectory.path + "/page-cache-tmpfs-probe-\(getpid())"
        defer { rmdir(probe) }
        guard let fileSystem = TinyFileSystem(at: probe, bytes: 64 << 10) else { return false }
        fileSystem.unmount()
        return true
    }()
}
