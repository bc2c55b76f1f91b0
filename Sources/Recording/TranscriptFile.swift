#if canImport(Glibc)
import Glibc
#endif
import Basics

/// A transcript's parts, rendered, in the order the recorder writes them.
struct TranscriptLayout {
    /// The members before `timeoutMilliseconds`: names, and values as JSON text.
    var headerMembers: [(name: String, value: String)]
    var timeoutMilliseconds: Int
    /// One fixture route each, as JSON text.
    var routes: [String]
    /// One line each: one step, or an event's steps separated by ", ".
    var stepLines: [String]
}

/// The recording's file, written so that an event costs a write of its own size and the file
/// is a transcript between any two writes (Protocol.md, "Recording a session"):
///
/// ```
/// {
///   "description": "...",
///   "daemonArguments": [...],
///   "timeoutMilliseconds": 5000,<spaces up to a fixed width>
///   "fixtures": [
///     ROUTE,
///     ROUTE
///   ],<room: spaces>
///   "steps": [
///     STEP,
///     STEP, STEP, STEP
///   ]
/// }
/// ```
///
/// - An event's steps are one line, written over the closing `\n  ]\n}\n` together with a new
///   closing: one `pwrite`, so a kill leaves the file before or after the event (a write cut
///   short, which only a kill during a write larger than a page can do, leaves a torn last line,
///   which `datasourced transcript repair` drops).
/// - Routes are rewritten in place from the first one that changed (a new exchange, or one whose
///   response arrived) into the room after them; when the room runs out, the file is written
///   whole again with room for a quarter of its size, so rewrites cost O(1) per byte recorded.
/// - The timeout is rewritten in place, padded to a fixed width.
/// - Written whole (a temporary file of our own renamed over the path): at the start, when the
///   room runs out, when a newly learned secret or API origin is in what was written, and at the
///   end, without room or padding, as one step per line.
///
/// Every write either completes or throws; a failed append puts the old closing back, so the
/// file stays the transcript it was (a full disk or a file-size limit ends the recording, not the
/// transcript).
struct TranscriptFile {
    struct WriteError: Error, CustomStringConvertible {
        let description: String
    }

    let path: String
    /// Everything passed to write(2) and pwrite(2), for the tests: recording must cost O(event).
    private(set) var bytesWritten = 0
    private var descriptor: Int32 = -1
    /// The layout's offsets in the file, in bytes.
    private var timeoutOffset = 0
    private(set) var timeoutMilliseconds = 0
    private var fixturesOpen = 0
    /// Where each route's text ends.
    private var routeEnds: [Int] = []
    /// Just past the `],` that closes the fixtures.
    private var routesClosed = 0
    /// The newline before `  "steps": [`: routes may be written up to here.
    private var roomEnd = 0
    /// Where the closing `\n  ]\n}\n` starts.
    private var stepsEnd = 0
    private var stepLineCount = 0
    /// Written without room or padding: nothing more can be written in place.
    private(set) var isFinal = false

    private static let closing = Array("\n  ]\n}\n".utf8)
    /// `"timeoutMilliseconds": N,` and its padding: the longest Int and the comma.
    private static let timeoutWidth = 20

    init(path: String) {
        self.path = path
    }

    /// Closes the file (the recording is over or has stopped).
    mutating func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    // MARK: Written whole

    /// Writes `layout` to a temporary file and renames it over the path. With `final`, the file
    /// has no room and no padding (one step per line, as a person would write it) and takes no
    /// more writes in place. Past the first write, the path must still be the file written last.
    mutating func replace(with layout: TranscriptLayout, room: Int, final: Bool = false) throws(WriteError) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(
            layout.routes.reduce(0) { $0 + $1.utf8.count } + layout.stepLines.reduce(0) { $0 + $1.utf8.count } + room + 4096)
        bytes += "{\n".utf8
        for (name, value) in layout.headerMembers { bytes += "  \"\(name)\": \(value),\n".utf8 }
        bytes += "  \"timeoutMilliseconds\": ".utf8
        let timeoutAt = bytes.count
        bytes += TranscriptFile.timeoutText(layout.timeoutMilliseconds, padded: !final)
        bytes += "\n  \"fixtures\": [".utf8
        let fixturesAt = bytes.count
        var ends: [Int] = []
        ends.reserveCapacity(layout.routes.count)
        for (index, route) in layout.routes.enumerated() {
            bytes += (index == 0 ? "\n    " : ",\n    ").utf8
            bytes += route.utf8
            ends.append(bytes.count)
        }
        bytes += "\n  ],".utf8
        let closedAt = bytes.count
        bytes += repeatElement(UInt8(ascii: " "), count: final ? 0 : room)
        let roomEndAt = bytes.count
        bytes += "\n  \"steps\": [".utf8
        for (index, line) in layout.stepLines.enumerated() {
            bytes += (index == 0 ? "\n    " : ",\n    ").utf8
            bytes += line.utf8
        }
        let stepsEndAt = bytes.count
        bytes += TranscriptFile.closing

        let (temporary, newDescriptor) = try createTemporary()
        do throws(WriteError) {
            try write(bytes, to: newDescriptor, at: 0, naming: temporary)
            if descriptor >= 0 { try checkStillOurs() }
            guard rename(temporary, path) == 0 else { throw WriteError(description: "cannot replace \(path): \(TranscriptFile.reason())") }
        } catch {
            Glibc.close(newDescriptor)
            unlink(temporary)
            throw error
        }
        close()
        descriptor = newDescriptor
        timeoutOffset = timeoutAt
        timeoutMilliseconds = layout.timeoutMilliseconds
        fixturesOpen = fixturesAt
        routeEnds = ends
        routesClosed = closedAt
        roomEnd = roomEndAt
        stepsEnd = stepsEndAt
        stepLineCount = layout.stepLines.count
        isFinal = final
    }

    // MARK: Written in place

    /// Rewrites the routes from `first` on (`routes`, one text each, through the last one) in
    /// the room after them; false when they do not fit (the caller writes the file whole).
    mutating func writeRoutes(from first: Int, _ routes: some Collection<String>) throws(WriteError) -> Bool {
        precondition(!isFinal && first <= routeEnds.count)
        let start = first == 0 ? fixturesOpen : routeEnds[first - 1]
        var bytes: [UInt8] = []
        var ends: [Int] = []
        for (offset, route) in routes.enumerated() {
            bytes += (first + offset == 0 ? "\n    " : ",\n    ").utf8
            bytes += route.utf8
            ends.append(start + bytes.count)
        }
        bytes += "\n  ],".utf8
        let closedAt = start + bytes.count
        // Spaces over whatever the old routes held past the new ones.
        if closedAt < routesClosed { bytes += repeatElement(UInt8(ascii: " "), count: routesClosed - closedAt) }
        guard start + bytes.count <= roomEnd else { return false }
        try write(bytes, to: descriptor, at: start, naming: path)
        routeEnds.removeSubrange(first...)
        routeEnds += ends
        routesClosed = closedAt
        return true
    }

    mutating func writeTimeout(_ milliseconds: Int) throws(WriteError) {
        precondition(!isFinal)
        try write(TranscriptFile.timeoutText(milliseconds, padded: true), to: descriptor, at: timeoutOffset, naming: path)
        timeoutMilliseconds = milliseconds
    }

    /// Appends one line of steps. If the write fails, the old closing is put back: the file is
    /// the transcript it was before.
    mutating func appendStepLine(_ line: String) throws(WriteError) {
        precondition(!isFinal)
        var bytes = Array((stepLineCount == 0 ? "\n    " : ",\n    ").utf8)
        bytes += line.utf8
        let newStepsEnd = stepsEnd + bytes.count
        bytes += TranscriptFile.closing
        do {
            try write(bytes, to: descriptor, at: stepsEnd, naming: path)
        } catch {
            // What is rewritten lies within the file's old length: no new blocks, no EFBIG.
            let restored =
                ftruncate(descriptor, off_t(stepsEnd + TranscriptFile.closing.count)) == 0
                && (try? write(TranscriptFile.closing, to: descriptor, at: stepsEnd, naming: path)) != nil
            guard restored else {
                throw WriteError(description: "\(error); its last line may be torn (`datasourced transcript repair \(path)` drops it)")
            }
            throw error
        }
        stepsEnd = newStepsEnd
        stepLineCount += 1
    }

    // MARK: Bytes

    private static func timeoutText(_ milliseconds: Int, padded: Bool) -> [UInt8] {
        var text = Array("\(milliseconds),".utf8)
        if padded, text.count < timeoutWidth { text += repeatElement(UInt8(ascii: " "), count: timeoutWidth - text.count) }
        return text
    }

    private mutating func write(_ bytes: [UInt8], to descriptor: Int32, at offset: Int, naming name: String) throws(WriteError) {
        do {
            bytesWritten += try FileDescriptor(rawValue: descriptor).writeAll(toAbsoluteOffset: Int64(offset), bytes)
        } catch {
            // A file-size limit or a full disk (EFBIG, ENOSPC; SIGXFSZ is ignored) ends up here.
            throw WriteError(description: "cannot write \(name): \(error)")
        }
    }

    /// A temporary file beside the path that did not exist before (so it is ours to write and remove).
    private func createTemporary() throws(WriteError) -> (String, Int32) {
        for attempt in 0..<100 {
            let name = "\(path).partial-\(getpid())" + (attempt == 0 ? "" : "-\(attempt)")
            // Only the user may read it: a session holds their data, if not their secrets.
            let created = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if created >= 0 { return (name, created) }
            if errno != EEXIST { throw WriteError(description: "cannot write \(name): \(TranscriptFile.reason())") }
        }
        throw WriteError(description: "cannot write \(path).partial-\(getpid()): 100 files by that name exist already")
    }

    /// The path still names the file this recording wrote: it never renames over another.
    private func checkStillOurs() throws(WriteError) {
        var ours = stat(), named = stat()
        guard fstat(descriptor, &ours) == 0, lstat(path, &named) == 0, ours.st_dev == named.st_dev, ours.st_ino == named.st_ino else {
            throw WriteError(
                description: "\(path) is no longer the file this recording wrote (another program moved, replaced or removed it)")
        }
    }

    private static func reason() -> String { String(cString: strerror(errno)) }
}
