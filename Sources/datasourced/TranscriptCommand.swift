import ArgumentParser
import JSONKit
import Replay
import TranscriptFormat

#if canImport(Glibc)
import Glibc
#endif

struct TranscriptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transcript",
        abstract: "Work on transcripts (a recorded session, for instance).",
        subcommands: [Trim.self]
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

        @Flag(help: "Pass the transcript's daemonArguments to the daemon even when they are not harmless (as `replay --allow-daemon-arguments`).")
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
            try write(Trimming.text(document), to: destination)
            Replay.writeLine("""
                \(destination): \(document["steps"]?.count ?? 0) of \(stepsBefore) steps, \
                \(document["fixtures"]?.count ?? 0) of \(fixturesBefore) fixtures kept
                """)
        }

        private func write(_ text: String, to path: String) throws {
            let temporary = "\(path).partial-\(getpid())"
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard descriptor >= 0 else { throw ValidationError("cannot write \(temporary): \(String(cString: strerror(errno)))") }
            let bytes = Array(text.utf8)
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            close(descriptor)
            guard written == bytes.count, rename(temporary, path) == 0 else {
                unlink(temporary)
                throw ValidationError("cannot write \(path): \(String(cString: strerror(errno)))")
            }
        }
    }
}
