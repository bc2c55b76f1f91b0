import ArgumentParser
import Basics
import JSONKit
import Recording
import Replay
import TranscriptFormat

#if canImport(Glibc)
import Glibc
#endif

struct TranscriptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transcript",
        abstract: "Work on transcripts (a recorded session, for instance).",
        subcommands: [Trim.self, Repair.self]
    )

    struct Trim: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "trim",
            abstract: "Make a transcript small: cut it after a step, and drop the fixtures it never requests.",
            discussion: """
                The transcript is replayed (it must pass) to learn which fixture routes the daemon requests; \
                the others, and their "release" steps, are dropped. With --through-step N, the session ends \
                after step N (numbered from 0, as replay reports steps) and the expectations right after it.
                """
        )

        @Argument(help: "The transcript (.json).")
        var file: String

        @Option(help: "Keep the steps up to this one (0-based) and the expectations that follow it.")
        var throughStep: Int?

        @Option(name: .shortAndLong, help: "Where to write the trimmed transcript (default: FILE itself).")
        var output: String?

        @Option(help: "Daemon executable to spawn (default: this executable, with the `serve` subcommand).")
        var daemon: String?

        @Flag(
            help:
                "Pass the transcript's daemonArguments to the daemon even when they are not harmless (as `replay --allow-daemon-arguments`)."
        )
        var allowDaemonArguments = false

        func run() throws {
            var document = try JSON.parse(readFileBytes(file, atMost: TranscriptLimits.maximumFileBytes))
            let stepsBefore = document["steps"]?.count ?? 0
            let fixturesBefore = document["fixtures"]?.count ?? 0
            if let throughStep { document = try Trimming.cut(document, throughStep: throughStep) }
            let command = daemon.map { [$0] } ?? [Replayer.currentExecutable(), "serve"]
            let replayer = Replayer(daemonCommand: command, allowingDaemonArguments: allowDaemonArguments)
            let (outcome, requests) = replayer.replayCollectingRequests(try Transcript(parsing: document))
            if case .failed(let report) = outcome {
                Replay.writeLine("FAIL \(file)\(throughStep.map { " (cut after step \($0))" } ?? "")\n\(report)")
                throw ValidationError("the transcript must pass to be trimmed (trim it before changing its expectations)")
            }
            document = Trimming.droppingUnusedFixtures(document, requested: requests)
            let destination = output ?? file
            try replaceFile(destination, with: Trimming.text(document))
            Replay.writeLine(
                """
                \(destination): \(document["steps"]?.count ?? 0) of \(stepsBefore) steps, \
                \(document["fixtures"]?.count ?? 0) of \(fixturesBefore) fixtures kept
                """)
        }
    }

    struct Repair: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "repair",
            abstract: "Make a recording cut short (a daemon killed while it wrote) into a transcript that replays.",
            discussion: """
                A recording whose daemon was killed is a transcript of the events handled before, which replay \
                runs as it is; only a kill during a write larger than a page can leave a line torn. This keeps \
                every whole line: a torn event's steps and everything after them are dropped, and so are the \
                steps from the event that names a fixture route the file lost. The result is written one route \
                and one step per line, without the room the recorder leaves, in place unless --output says where.
                """
        )

        @Argument(help: "The recording (.json).")
        var file: String

        @Option(name: .shortAndLong, help: "Where to write the repaired transcript (default: FILE itself).")
        var output: String?

        func run() throws {
            let bytes = try readFileBytes(file)
            let repaired: TranscriptRepair.Repaired
            do {
                repaired = try TranscriptRepair.repair(bytes)
            } catch {
                throw ValidationError("\(file): \(error)")
            }
            do {
                _ = try Transcript(parsing: repaired.document)
            } catch {
                throw ValidationError("\(file): what is left is not a transcript: \(error)")
            }
            let text = Trimming.text(repaired.document)
            let destination = output ?? file
            let steps = repaired.document["steps"]?.count ?? 0
            if repaired.dropped.isEmpty, destination == file, Array(text.utf8) == bytes {
                Replay.writeLine("\(file): a whole transcript (\(steps) steps), nothing to repair")
                return
            }
            try replaceFile(destination, with: text)
            let summary = repaired.dropped.isEmpty ? "nothing was missing" : "dropped: " + repaired.dropped.joined(separator: "; ")
            Replay.writeLine("\(destination): \(steps) steps, \(repaired.document["fixtures"]?.count ?? 0) fixtures; \(summary)")
        }
    }
}

/// Writes `text` to a temporary file of our own beside `path`, then renames it over `path`: a
/// reader never sees half of it. It keeps the permissions of the file it replaces (a new file
/// is the user's alone: a transcript holds their session's data).
private func replaceFile(_ path: String, with text: String) throws {
    var existing = stat()
    let mode = lstat(path, &existing) == 0 && (existing.st_mode & S_IFMT) == S_IFREG ? existing.st_mode & 0o777 : 0o600
    // Past a file-size limit write(2) fails with EFBIG, reported below, rather than killing us.
    signal(SIGXFSZ, SIG_IGN)
    var temporary = "\(path).partial-\(getpid())"
    var descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
    var attempt = 1
    while descriptor < 0, errno == EEXIST, attempt < 100 {
        temporary = "\(path).partial-\(getpid())-\(attempt)"
        descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        attempt += 1
    }
    guard descriptor >= 0 else { throw ValidationError("cannot write \(temporary): \(String(cString: strerror(errno)))") }
    var failure: String?
    do {
        _ = try FileDescriptor(rawValue: descriptor).writeAll(text.utf8)
    } catch {
        failure = "\(error)"
    }
    // The mode asked for at open was narrowed by the umask; the file replaced had this one.
    if failure == nil, fchmod(descriptor, mode) != 0 { failure = String(cString: strerror(errno)) }
    close(descriptor)
    if failure == nil, rename(temporary, path) != 0 { failure = String(cString: strerror(errno)) }
    if let failure {
        unlink(temporary)
        throw ValidationError("cannot write \(path): \(failure)")
    }
}
