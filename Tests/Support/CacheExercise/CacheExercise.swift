import ArgumentParser
import DataSources
import Foundation
import Logging
import PageCache
import Replay

#if canImport(Glibc)
import Glibc
#endif

/// `datasourced-cache-exercise MODE`: a cache file driven as the data-safety tests need
/// (Tests/PageCacheTests/DataSafetyTests.swift), each test process being one of these. Built
/// for the tests only: the shipped `datasourced` does not carry it.
///
/// Entries: key material and label `exercise/writer-W/slot-S` (and `exercise/shared`);
/// payload: a record of (writer, generation), two little-endian UInt64s, repeated N times,
/// then N and the FNV-1a hash of everything before it (taken a 64-bit word at a time), both
/// UInt64 — an entry that mixed two writes, or was cut short, does not check out.
@main
struct CacheExercise: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "datasourced-cache-exercise",
        abstract: "Drive a cache file for the data-safety tests (not for people).",
        discussion: """
            parallel: after "ready", waits for a line on stdin, then runs --cycles cycles, each writing its own \
            entry and the shared one, reading its own back (it must be the one just written) and the other \
            writers' (each must check out and never go back a generation).
            crash: writes entries of 16 KiB to 256 KiB to --slots slots, generation after generation from \
            --start-generation, printing "writing G" once the payload is made and "committed G" once stored; runs until killed.
            probe: writes a small entry, then (with --file-size-headroom, RLIMIT_FSIZE that far above the \
            files' sizes) a --payload-bytes one, reads it back, writes once more; prints what it saw.
            """
    )

    enum Mode: String, ExpressibleByArgument { case parallel, crash, probe }

    @Argument var mode: Mode
    @Option var cachePath: String
    @Option var writerId = 0
    @Option var writers = 2
    @Option var cycles = 200
    @Option var slots = 4
    @Option var payloadBytes = 16 << 10
    @Option var startGeneration = 1
    @Option var maximumBytes = SQLitePageStore.defaultMaximumBytes
    @Option(help: "probe: limit the size of any file this process writes to this many bytes above the cache files' sizes.")
    var fileSizeHeadroom: Int?
    @Option(help: "Switch to this user (and group) id before opening the cache (root only): permissions then apply.")
    var asUser: UInt32?

    func run() throws {
        if let asUser {
            guard setgroups(0, nil) == 0, setgid(asUser) == 0, setuid(asUser) == 0 else {
                throw ValidationError("cannot switch to user \(asUser): \(String(cString: strerror(errno)))")
            }
        }
        let logger = Logger(label: "datasourced", factory: { StreamLogHandler.standardError(label: $0) })
        let store = SQLitePageStore(path: cachePath, maximumBytes: maximumBytes, logger: logger)
        switch mode {
        case .parallel: try runParallel(store)
        case .crash: runCrashing(store)
        case .probe: runProbe(store)
        }
    }

    static func key(writer: Int, slot: Int) -> PageCacheKey {
        PageCacheKey(material: "exercise/writer-\(writer)/slot-\(slot)", label: "exercise/writer-\(writer)/slot-\(slot)")
    }

    static let sharedKey = PageCacheKey(material: "exercise/shared", label: "exercise/shared")

    private func runParallel(_ store: SQLitePageStore) throws {
        guard store.isAvailable else { throw failure("the cache did not open") }
        Replay.writeLine("ready")
        _ = readLine()
        var newestSeen: [Int: UInt64] = [:]
        var othersRead = 0
        for cycle in 0..<cycles {
            let slot = cycle % slots, generation = UInt64(cycle)
            let payload = ExercisePayload.make(writer: writerId, generation: generation, bytes: payloadBytes)
            store.write(Self.key(writer: writerId, slot: slot), storedAt: Double(cycle), payload: { payload })
            store.write(Self.sharedKey, storedAt: Double(cycle), payload: { payload })
            guard let own = store.read(Self.key(writer: writerId, slot: slot)), own.payload == payload, own.storedAt == Double(cycle) else {
                throw failure("cycle \(cycle): reading back our own entry did not give the one just written")
            }
            for other in 0..<writers where other != writerId {
                guard let entry = store.read(Self.key(writer: other, slot: slot)) else { continue }
                guard let record = ExercisePayload.check(entry.payload), record.writer == other,
                    record.generation % UInt64(slots) == UInt64(slot)
                else {
                    throw failure("cycle \(cycle): writer \(other)'s slot \(slot) does not check out")
                }
                let seen = other * slots + slot
                guard record.generation >= newestSeen[seen, default: 0] else {
                    throw failure(
                        "cycle \(cycle): writer \(other)'s slot \(slot) went back from generation \(newestSeen[seen]!) to \(record.generation)"
                    )
                }
                newestSeen[seen] = record.generation
                othersRead += 1
            }
            guard let shared = store.read(Self.sharedKey), ExercisePayload.check(shared.payload) != nil else {
                throw failure("cycle \(cycle): the shared entry is missing or does not check out")
            }
        }
        store.flush()
        guard store.isAvailable else { throw failure("the cache turned itself off") }
        store.close()
        Replay.writeLine("done \(cycles) cycles, read \(othersRead) entries of other writers")
    }

    private func runCrashing(_ store: SQLitePageStore) -> Never {
        Replay.writeLine("ready")
        var generation = UInt64(startGeneration)
        while true {
            let slot = Int(generation % UInt64(slots))
            // 16 KiB to 256 KiB (4 to 64 pages), so a kill finds writes of many pages, and WAL
            // checkpoints (every 1,000 pages), under way.
            let bytes = (1 + Int(generation &* 7919 % 16)) << 14
            let current = generation
            store.write(
                Self.key(writer: 0, slot: slot), storedAt: Double(generation),
                payload: {
                    let payload = ExercisePayload.make(writer: 0, generation: current, bytes: bytes)
                    // From here to "committed", SQLite writes the entry: where a test aims its kill.
                    Replay.writeLine("writing \(current)")
                    return payload
                })
            store.flush()
            Replay.writeLine("committed \(generation)")
            generation += 1
        }
    }

    private func runProbe(_ store: SQLitePageStore) {
        let opened = store.isAvailable
        let small = ExercisePayload.make(writer: 0, generation: 1, bytes: 1 << 10)
        store.write(Self.key(writer: 0, slot: 0), storedAt: 1, payload: { small })
        store.flush()
        if let headroom = fileSizeHeadroom {
            // Past the limit write(2) fails with EFBIG instead of the signal's default (death).
            signal(SIGXFSZ, SIG_IGN)
            let largest =
                ["", "-wal", "-shm"].map { suffix -> Int in
                    var status = stat()
                    return stat(cachePath + suffix, &status) == 0 ? Int(status.st_size) : 0
                }.max() ?? 0
            var limit = rlimit(rlim_cur: rlim_t(largest + headroom), rlim_max: rlim_t(largest + headroom))
            setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit)
        }
        let large = ExercisePayload.make(writer: 0, generation: 2, bytes: payloadBytes)
        store.write(Self.key(writer: 0, slot: 1), storedAt: 2, payload: { large })
        store.flush()
        let readBack = store.read(Self.key(writer: 0, slot: 1))?.payload == large
        let availableAfterWrite = store.isAvailable
        store.write(Self.key(writer: 0, slot: 2), storedAt: 3, payload: { large })
        store.flush()
        Replay.writeLine("opened=\(opened) stored=\(readBack) available=\(availableAfterWrite) finally=\(store.isAvailable)")
        store.close()
    }

    private func failure(_ text: String) -> ExitCode {
        FileHandle.standardError.write(Data("FAIL writer \(writerId): \(text)\n".utf8))
        return ExitCode(1)
    }
}

/// The exercise's self-checking payload (see CacheExercise). Built and checked through
/// pointers and memcmp: tests run debug builds, and these run over megabytes.
enum ExercisePayload {
    static func make(writer: Int, generation: UInt64, bytes: Int) -> [UInt8] {
        let records = max(1, (bytes - 16) / 16)
        let count = records * 16 + 16
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let words = UnsafeMutableRawBufferPointer(buffer)
            for record in 0..<records {
                words.storeBytes(of: UInt64(writer).littleEndian, toByteOffset: record * 16, as: UInt64.self)
                words.storeBytes(of: generation.littleEndian, toByteOffset: record * 16 + 8, as: UInt64.self)
            }
            words.storeBytes(of: UInt64(records).littleEndian, toByteOffset: count - 16, as: UInt64.self)
            words.storeBytes(
                of: fnv1a(UnsafeRawBufferPointer(rebasing: words[..<(count - 8)])).littleEndian, toByteOffset: count - 8, as: UInt64.self)
            initialized = count
        }
    }

    /// The (writer, generation) a payload holds, or nil if it does not check out.
    static func check(_ payload: [UInt8]) -> (writer: Int, generation: UInt64)? {
        guard payload.count >= 32, payload.count % 16 == 0 else { return nil }
        return payload.withUnsafeBytes { raw -> (writer: Int, generation: UInt64)? in
            let count = raw.count, base = raw.baseAddress!
            func word(_ offset: Int) -> UInt64 { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
            guard word(count - 16) == UInt64(count / 16 - 1),
                word(count - 8) == fnv1a(UnsafeRawBufferPointer(rebasing: raw[..<(count - 8)]))
            else { return nil }
            for offset in stride(from: 16, to: count - 16, by: 16) where memcmp(base, base + offset, 16) != 0 {
                return nil
            }
            return (Int(word(0)), word(8))
        }
    }

    /// FNV-1a over little-endian 64-bit words (the payload's length is a multiple of 8).
    private static func fnv1a(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for offset in stride(from: 0, to: bytes.count, by: 8) {
            hash = (hash ^ UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))) &* 0x100_0000_01b3
        }
        return hash
    }
}
