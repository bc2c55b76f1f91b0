import DataSources
import Foundation
import Logging
import PageCache
import Basics

#if canImport(Glibc)
import Glibc
#endif

/// The log lines a store wrote, so a test can say how many warnings a problem gave.
final class CapturedLog: @unchecked Sendable {
    private let lines = LockedValue<[String]>([])
    /// The least level captured: warnings and above, unless a test reads the debug lines.
    private let level: Logger.Level

    init(level: Logger.Level = .warning) { self.level = level }

    var logger: Logger {
        Logger(label: "page-cache-test", factory: { _ in Handler(log: self, logLevel: self.level) })
    }

    var warnings: [String] { lines.withLock { $0 } }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            log.lines.withLock { $0.append("\(event.level): \(event.message)") }
        }
    }
}

/// A fresh directory for one test, removed afterwards.
final class ScratchDirectory {
    let path: String

    init(_ name: String = #function) {
        // One base per user: another user's is not ours to write in.
        let base = FileManager.default.temporaryDirectory.path + "/page-cache-tests-\(geteuid())"
        mkdir(base, 0o755)
        chmod(base, 0o755)
        var template = Array("\(base)/\(name.filter(\.isLetter).prefix(40))-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            fatalError("cannot make a directory under \(base): \(String(cString: strerror(errno)))")
        }
        path = String(cString: made)
        // Readable by the unprivileged user the read-only tests switch to when run as root.
        chmod(path, 0o755)
    }

    func file(_ name: String) -> String { "\(path)/\(name)" }

    deinit {
        _ = try? FileManager.default.removeItem(atPath: path)
    }
}

func makePayload(_ byte: UInt8, count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: Int(byte) &+ $0 &* 31) }
}

func fileBytes(_ path: String) -> [UInt8] {
    (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))) ?? []
}

func contains(_ haystack: [UInt8], _ needle: String) -> Bool {
    !needle.isEmpty && Data(haystack).range(of: Data(needle.utf8)) != nil
}

func permissions(_ path: String) -> mode_t? {
    var status = stat()
    return stat(path, &status) == 0 ? status.st_mode & 0o777 : nil
}

func filesAside(in directory: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.contains(".corrupt-") && !$0.hasSuffix("-wal") }
}

/// `datasourced-cache-exercise`'s entries, read independently of the code that wrote them
/// (CacheExercise.swift documents the format): (writer, generation), or nil for an entry
/// that mixes two writes or was cut short.
enum ExerciseEntry {
    static func key(writer: Int, slot: Int) -> PageCacheKey {
        PageCacheKey(material: "exercise/writer-\(writer)/slot-\(slot)", label: "exercise/writer-\(writer)/slot-\(slot)")
    }

    static func check(_ payload: [UInt8]) -> (writer: Int, generation: UInt64)? {
        guard payload.count >= 32, payload.count % 16 == 0 else { return nil }
        return payload.withUnsafeBytes { raw -> (writer: Int, generation: UInt64)? in
            let count = raw.count
            func word(_ offset: Int) -> UInt64 { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for offset in stride(from: 0, to: count - 8, by: 8) { hash = (hash ^ word(offset)) &* 0x100_0000_01b3 }
            guard word(count - 8) == hash, word(count - 16) == UInt64(count / 16 - 1) else { return nil }
            let writer = word(0), generation = word(8)
            for offset in stride(from: 16, to: count - 16, by: 16) where word(offset) != writer || word(offset + 8) != generation {
                return nil
            }
            return (Int(writer), generation)
        }
    }
}

/// `datasourced-cache-exercise` (built beside the test bundle: the test target depends on
/// it), with its stdout read a line at a time and its stderr collected.
final class ExerciseProcess: @unchecked Sendable {
    static let executable: String = {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let runner = String(decoding: buffer[..<max(count, 0)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return URL(fileURLWithPath: runner).deletingLastPathComponent().appendingPathComponent("datasourced-cache-exercise").path
    }()

    private let process: SpawnedProcess
    private var inputIsOpen = true, outputIsOpen = true, finished = false
    private var pending: [UInt8] = []
    private let errorText = LockedValue<[UInt8]>([])
    private let errorsDone = DispatchSemaphore(value: 0)

    init(_ arguments: [String]) throws {
        process = try SpawnedProcess(command: [Self.executable] + arguments)
        let errors = FileDescriptor(rawValue: process.standardError)
        Thread.detachNewThread { [errorText, errorsDone] in
            let all = (try? errors.readToEnd()) ?? []
            try? errors.close()
            errorText.withLock { $0 = all }
            errorsDone.signal()
        }
    }

    /// A test that stopped before `finish` leaves no process behind.
    deinit {
        if !finished {
            kill()
            finish()
        }
    }

    var pid: pid_t { process.pid }

    /// The next line of stdout, or nil at its end.
    func readLine() -> String? {
        let descriptor = process.standardOutput
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let newline = pending.firstIndex(of: 10) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            let count = read(descriptor, &chunk, chunk.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return nil }
            pending += chunk[..<count]
        }
    }

    func send(_ line: String) {
        _ = try? FileDescriptor(rawValue: process.standardInput).writeAll(Array((line + "\n").utf8))
    }

    func kill() {
        process.kill()
    }

    /// Waits for the end; answers the exit status and everything written to stderr.
    @discardableResult
    func finish() -> (status: Int32, stderr: String) {
        finished = true
        let status = process.wait().shellStatus
        errorsDone.wait()
        closeInput()
        if outputIsOpen { close(process.standardOutput) }
        outputIsOpen = false
        return (status, errorText.withLock { String(decoding: $0, as: UTF8.self) })
    }

    private func closeInput() {
        if inputIsOpen { close(process.standardInput) }
        inputIsOpen = false
    }

    /// Runs to the end: its stdout lines, exit status and stderr.
    static func run(_ arguments: [String]) throws -> (lines: [String], status: Int32, stderr: String) {
        let child = try ExerciseProcess(arguments)
        child.closeInput()
        var lines: [String] = []
        while let line = child.readLine() { lines.append(line) }
        let (status, stderr) = child.finish()
        return (lines, status, stderr)
    }
}

/// The warnings in a child's stderr (swift-log's stream handler writes "... warning ...").
func cacheWarnings(_ stderr: String) -> [Substring] {
    stderr.split(separator: "\n").filter { $0.contains("page cache:") }
}
