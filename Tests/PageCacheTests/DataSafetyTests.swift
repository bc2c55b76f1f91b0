import DataSources
import Foundation
import GRDB
import PageCache
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Two daemons on one file, and daemons killed mid-write: separate processes
/// (`datasourced-cache-exercise`), as in use.
@Suite(.serialized) struct DataSafetyTests {
    let scratch = ScratchDirectory()
    let log = CapturedLog()

    @Test func twoProcessesOnOneFile() throws {
        let path = scratch.file("cache.sqlite")
        let cycles = 200, slots = 4
        let writers = try (0..<2).map { writer in
            try ExerciseProcess([
                "parallel", "--cache-path", path, "--writer-id", "\(writer)", "--writers", "2",
                "--cycles", "\(cycles)", "--slots", "\(slots)", "--payload-bytes", "16384",
            ])
        }
        // Both have the file open before either starts: the cycles overlap.
        for writer in writers { #expect(writer.readLine() == "ready") }
        for writer in writers { writer.send("go") }
        var othersRead = 0
        for (index, writer) in writers.enumerated() {
            let summary = writer.readLine() ?? ""
            let (status, stderr) = writer.finish()
            #expect(status == 0, "writer \(index): \(stderr)")
            #expect(cacheWarnings(stderr).isEmpty, "writer \(index): \(stderr)")
            #expect(summary.hasPrefix("done \(cycles) cycles"), "writer \(index): \(summary)")
            othersRead += Int(summary.split(separator: " ").dropFirst(4).first ?? "") ?? 0
        }
        #expect(othersRead > 0, "the writers read each other's entries")

        // No entry lost: each writer's slots hold its last cycles.
        let store = SQLitePageStore(path: path, logger: log.logger)
        for writer in 0..<2 {
            for slot in 0..<slots {
                let stored = store.read(ExerciseEntry.key(writer: writer, slot: slot)).flatMap { ExerciseEntry.check($0.payload) }
                let last = UInt64(cycles - slots + slot)
                #expect(
                    stored?.writer == writer && stored?.generation == last, "writer \(writer) slot \(slot): \(String(describing: stored))")
            }
        }
        let shared = store.read(PageCacheKey(material: "exercise/shared", label: "exercise/shared")).flatMap {
            ExerciseEntry.check($0.payload)
        }
        #expect(shared?.generation == UInt64(cycles - 1), "the shared entry is one writer's last")
        #expect(store.entries()?.count == 2 * slots + 1)
        store.close()
        #expect(log.warnings.isEmpty, "\(log.warnings)")
        #expect(filesAside(in: scratch.path).isEmpty)
    }

    /// Daemons started together on a path with no file yet: each opens the one file the first
    /// made (linked into place whole, so none sees it empty or half made, which would not be
    /// recognisably ours), and no temporary file is left.
    @Test func threeProcessesMakeOneNewFile() throws {
        for round in 0..<40 {
            let path = scratch.file("cache-\(round).sqlite")
            let writers = try (0..<3).map { writer in
                try ExerciseProcess([
                    "parallel", "--cache-path", path, "--writer-id", "\(writer)", "--writers", "3",
                    "--cycles", "2", "--slots", "2", "--payload-bytes", "1024",
                ])
            }
            for writer in writers {
                #expect(writer.readLine() == "ready")
                writer.send("go")
            }
            for (index, writer) in writers.enumerated() {
                let summary = writer.readLine() ?? ""
                let (status, stderr) = writer.finish()
                #expect(status == 0 && summary.hasPrefix("done 2 cycles"), "round \(round), writer \(index): \(summary) \(stderr)")
                #expect(cacheWarnings(stderr).isEmpty, "round \(round), writer \(index): \(stderr)")
            }
        }
        #expect(filesAside(in: scratch.path).isEmpty)
        let names = try FileManager.default.contentsOfDirectory(atPath: scratch.path)
        #expect(names.filter { $0.hasSuffix(".sqlite") }.count == 40)
        #expect(
            names.allSatisfy { $0.hasSuffix(".sqlite") || $0.hasSuffix(".sqlite-wal") || $0.hasSuffix(".sqlite-shm") }, "\(names.sorted())")
    }

    /// A writer killed at random moments, aimed at its writes (up to 4 ms after it starts
    /// its first to third write of an entry of 4 to 64 pages): every time the file opens,
    /// sound, and each slot holds the entry it held before the write under way or the one
    /// that write made.
    @Test func killedDuringWrites() throws {
        let path = scratch.file("cache.sqlite")
        let kills = 200, slots = 3
        var held: [Int: UInt64] = [:]  // slot → the generation it holds
        var next: UInt64 = 1  // the first generation the next writer writes
        var killedInsideAWrite = 0, newerFound = 0
        var generator = SystemRandomNumberGenerator()
        for kill in 0..<kills {
            let writer = try ExerciseProcess(["crash", "--cache-path", path, "--slots", "\(slots)", "--start-generation", "\(next)"])
            var committed: UInt64?, writing: UInt64?
            func record(_ line: String) {
                if line.hasPrefix("writing ") { writing = UInt64(line.dropFirst(8)) }
                guard line.hasPrefix("committed "), let generation = UInt64(line.dropFirst(10)) else { return }
                committed = generation
                held[Int(generation % UInt64(slots))] = generation
            }
            if kill > 0 {  // the first run is killed while it makes the file
                #expect(writer.readLine() == "ready")
                var writesStarted = 0
                let target = Int.random(in: 1...3, using: &generator)
                while writesStarted < target, let line = writer.readLine() {
                    record(line)
                    if line.hasPrefix("writing ") { writesStarted += 1 }
                }
            }
            // The random moment of the kill, not a wait for anything.
            usleep(UInt32.random(in: 0...4000, using: &generator))
            writer.kill()
            // Every line it wrote, up to its death.
            while let line = writer.readLine() { record(line) }
            let (status, stderr) = writer.finish()
            #expect(status == 128 + SIGKILL, "kill \(kill): \(stderr)")
            #expect(cacheWarnings(stderr).isEmpty, "kill \(kill): \(stderr)")
            // The write that may have been under way.
            let inFlight = committed.map { $0 + 1 } ?? next
            if writing == inFlight { killedInsideAWrite += 1 }

            let store = SQLitePageStore(path: path, logger: log.logger)
            #expect(store.isAvailable, "kill \(kill)")
            for slot in 0..<slots {
                let entry = store.read(ExerciseEntry.key(writer: 0, slot: slot))
                let stored = entry.flatMap { ExerciseEntry.check($0.payload) }
                #expect(entry == nil || stored != nil, "kill \(kill), slot \(slot): the entry does not check out (a mix)")
                let allowed = [held[slot], inFlight % UInt64(slots) == UInt64(slot) ? inFlight : nil]
                #expect(
                    allowed.contains(stored?.generation),
                    "kill \(kill), slot \(slot): holds \(String(describing: stored?.generation)), expected one of \(allowed)")
                if let generation = stored?.generation, entry?.storedAt == Double(generation) {
                    if generation == inFlight { newerFound += 1 }
                    held[slot] = generation
                } else if stored != nil {
                    Issue.record("kill \(kill), slot \(slot): stored_at does not match the payload's generation")
                }
            }
            store.close()
            #expect(log.warnings.isEmpty, "kill \(kill): \(log.warnings)")
            if !log.warnings.isEmpty { return }
            next = inFlight + 1
        }
        let database = try DatabaseQueue(path: path)
        #expect(try database.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") } == "ok")
        try database.close()
        #expect(filesAside(in: scratch.path).isEmpty)
        print(
            "killedDuringWrites: \(kills) kills, \(killedInsideAWrite) between a payload made and its commit reported; the write under way had committed in \(newerFound)"
        )
        // Where a kill lands is chance, but aimed as above most land inside SQLite's write;
        // a fifth is far below what these machines show, and the test means nothing without it.
        #expect(killedInsideAWrite >= kills / 5)
    }
}
