import ArgumentParser
import Basics
import Daemon
import DataSources
import HTTPGet
import PageCache
import Logging
import JSONKit
import JSONRPC
import Recording
import Replay
import TranscriptFormat

#if canImport(Glibc)
import Glibc
#endif

@main
struct Datasourced: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "datasourced",
        abstract: "Instant Cocoa-style data sources served over JSON-RPC 2.0 on stdin/stdout.",
        discussion: "With no subcommand, serves the protocol described in Protocol.md on stdio.",
        version: DaemonInfo.version,
        subcommands: [Serve.self, ReplayCommand.self, FixturesCommand.self, TranscriptCommand.self, CacheCommand.self, SchemaCommand.self],
        defaultSubcommand: Serve.self
    )

    static func main() {
        StandardDescriptors.openClosedOnes()
        // The way editors start it: no arguments, or `serve` alone. Parsed by hand, since
        // swift-argument-parser reflects over every command to parse even an empty command
        // line: about 5 ms of a 20 ms start, most of it the runtime searching the binary's
        // protocol conformances. Anything else is the parser's, errors and help included.
        let arguments = CommandLine.arguments.dropFirst()
        if arguments.isEmpty || arguments.elementsEqual(["serve"]) {
            do {
                try ServeSettings().run()
            } catch {
                exit(withError: error)
            }
        }
        main(nil)
    }
}

/// Descriptors 0, 1 and 2 as a parent left them. One it closed would be the next descriptor
/// opened (an event loop's epoll, the cache file, a child's pipe): the stdin reader would then
/// read it, and protocol answers or logs would be written into it.
enum StandardDescriptors {
    /// Opens /dev/null on each of 0, 1 and 2 that is closed, before anything else opens a
    /// descriptor: a closed stdin then reads as end of input, and a closed stdout or stderr
    /// swallows what is written to it.
    static func openClosedOnes() {
        for descriptor in Int32(0)...2 where fcntl(descriptor, F_GETFD) < 0 && errno == EBADF {
            // open returns the lowest free descriptor: this one, as those below it are open.
            let opened = open("/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY)
            if opened >= 0, opened != descriptor {
                dup2(opened, descriptor)
                close(opened)
            }
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve JSON-RPC on stdin/stdout (the default). Logs go to stderr."
    )

    @Option(help: "Minimum level logged to stderr: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = ServeSettings().logLevel

    @Option(help: "Largest message body accepted, in bytes; larger ones are skipped and answered with an error.")
    var maxMessageSize: Int = ServeSettings().maxMessageSize

    @Option(
        help: ArgumentHelp(
            "Record the session to FILE, a transcript that `datasourced replay FILE` runs offline (also $DATASOURCED_RECORD).",
            discussion:
                "{pid} in FILE is replaced by the daemon's process id. Each event handled is added to the file as it goes, so that it is a transcript at any moment.",
            valueName: "FILE"))
    var record: String?

    @Option(
        help: ArgumentHelp(
            "A header or query parameter name whose values a recording never holds, besides the secret ones (repeatable; also $DATASOURCED_REDACT, comma-separated).",
            valueName: "NAME"))
    var redact: [String] = []

    @Option(
        help: ArgumentHelp(
            "The persisted page cache's SQLite file (default: $XDG_CACHE_HOME/datasourced/cache.sqlite, or ~/.cache/datasourced/cache.sqlite).",
            valueName: "FILE"))
    var cachePath: String?

    @Flag(help: "Keep no persisted page cache: sources that ask for one load from the network every time.")
    var noCache = false

    @Option(help: ArgumentHelp("The most bytes the persisted cache holds; least recently used entries go first.", valueName: "BYTES"))
    var cacheMaxBytes: Int = ServeSettings().cacheMaxBytes

    @Flag(
        help: ArgumentHelp(
            "Send header values read from the environment or a file to the source's own origin without an allowance (clients otherwise ask the person, and allowCredential records the answer).",
            discussion:
                "For scripts whose list specs are their own. Without it, such a value goes only to origins allowed in $XDG_CONFIG_HOME/datasourced/allowed-credentials.json (or ~/.config/datasourced/)."
        ))
    var allowCredentialsFromConfig = false

    func validate() throws {
        guard maxMessageSize > 0 else { throw ValidationError("--max-message-size must be positive") }
        guard cacheMaxBytes > 0 else { throw ValidationError("--cache-max-bytes must be positive") }
        if noCache, cachePath != nil { throw ValidationError("--no-cache and --cache-path exclude each other") }
    }

    func run() throws {
        try ServeSettings(
            logLevel: logLevel, maxMessageSize: maxMessageSize, record: record, redact: redact, cachePath: cachePath,
            noCache: noCache, cacheMaxBytes: cacheMaxBytes, allowCredentialsFromConfig: allowCredentialsFromConfig
        ).run()
    }
}

/// What `serve` runs with: its options once parsed, or their defaults (`Datasourced.main`'s
/// path for a command line with none).
struct ServeSettings {
    var logLevel: Logger.Level = .warning
    var maxMessageSize: Int = 64 << 20
    var record: String?
    var redact: [String] = []
    var cachePath: String?
    var noCache = false
    var cacheMaxBytes: Int = 256 << 20
    var allowCredentialsFromConfig = false

    /// `--record`, else a non-empty $DATASOURCED_RECORD: how an editor plugin's user records
    /// without changing the plugin's command line.
    private var recordingPath: String? {
        guard let path = record ?? ServeSettings.environment("DATASOURCED_RECORD"), !path.isEmpty else { return nil }
        return path.replacing("{pid}", with: "\(getpid())")
    }

    private var redactedNames: [String] {
        (redact + [ServeSettings.environment("DATASOURCED_REDACT") ?? ""]).flatMap { $0.split(separator: ",") }
            .map { String($0).trimmingSpaces() }.filter { !$0.isEmpty }
    }

    private static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Serves until the session ends, then exits the process with the daemon's status.
    func run() throws -> Never {
        nameCurrentThread("main")
        // Past a file-size limit a write fails with EFBIG, which the recording and the page cache
        // handle as a full disk, instead of the signal killing the daemon.
        signal(SIGXFSZ, SIG_IGN)
        let level = logLevel
        // Never StreamLogHandler.standardError: its writes block once a client stops reading
        // our stderr, and the daemon with them.
        let stderr = DroppingLineStream(writer: DroppingLineWriter(descriptor: 2))
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler(label: label, stream: stderr, metadataProvider: nil)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "datasourced")
        // Before the HTTP client exists: a recording that cannot start ends the process here.
        var recorder: SessionRecorder?
        if let path = recordingPath {
            // The recorded session runs without the persisted cache (below), and so does its replay.
            let arguments =
                (maxMessageSize == DaemonOptions().maximumMessageSize ? [] : ["--max-message-size", "\(maxMessageSize)"]) + ["--no-cache"]
            do {
                recorder = try SessionRecorder(
                    path: path, daemonArguments: arguments, redacting: redactedNames,
                    warn: { logger.warning("\($0)") })
            } catch {
                throw ValidationError("--record: \(error)")
            }
            logger.info("recording the session", metadata: ["file": "\(path)"])
        }
        let http = LazyHTTPClient()
        let fetcher = recorder?.recording(http) ?? http
        // A recording must replay as it ran: without a persisted cache, whose contents the
        // transcript could not carry.
        var cache: PageCacheStore?
        if recorder != nil {
            if cachePath != nil { logger.warning("--record: the persisted cache is off while recording; --cache-path is ignored") }
        } else if !noCache {
            cache = LazyPageStore(path: cachePath ?? SQLitePageStore.defaultPath(), maximumBytes: cacheMaxBytes, logger: logger)
        }
        let allowances = CredentialAllowances(
            path: CredentialAllowances.defaultPath(environment: ServeSettings.environment), warn: { logger.warning("\($0)") })
        let options = DaemonOptions(
            maximumMessageSize: maxMessageSize, credentialAllowances: allowances,
            requiresCredentialAllowance: !allowCredentialsFromConfig)
        let daemon = Daemon(options: options, logger: logger, fetcher: fetcher, cache: cache)
        daemon.observer = recorder
        let status = daemon.run()
        recorder?.finish(exitStatus: status)
        Glibc.exit(status)
    }
}

struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay recorded transcripts against a fresh daemon; exits non-zero on any mismatch.",
        discussion: "The transcript format is described in Protocol.md, section \"Transcripts\"."
    )

    @Argument(help: "Transcript files (.json).")
    var files: [String]

    @Option(help: "Daemon executable to spawn (default: this executable, with the `serve` subcommand).")
    var daemon: String?

    @Flag(name: .shortAndLong, help: "Print every message sent and received.")
    var verbose = false

    @Option(
        help: "Write every message sent and received, as JSON lines {transcript, direction, message}, to this file (for schema checks).")
    var capture: String?

    @Flag(
        help: ArgumentHelp(
            "Pass a transcript's daemonArguments to the daemon even when they are not harmless.",
            discussion: """
                The daemon runs with your rights. Without this flag only options that name no file are passed             (\(DaemonArguments.harmless.keys.sorted().joined(separator: ", "))); a transcript with others             (--record FILE, --cache-path FILE...) fails, naming the argument.
                """))
    var allowDaemonArguments = false

    func run() throws {
        let command = daemon.map { [$0] } ?? [Replayer.currentExecutable(), "serve"]
        // Opened before anything is replayed: a capture that cannot be written fails at once.
        let captureFile = try capture.map { path in
            do {
                return try CaptureFile(path: path)
            } catch {
                throw ValidationError("--capture: \(error)")
            }
        }
        var failures = 0
        for file in files {
            let record: Replayer.Capture? = captureFile.map { captureFile in
                { direction, message in
                    var line: [UInt8] = []
                    JSON.object([("transcript", JSON(file)), ("direction", JSON(direction)), ("message", message)]).encode(into: &line)
                    line.append(10)
                    captureFile.append(line)
                }
            }
            let replayer = Replayer(daemonCommand: command, allowingDaemonArguments: allowDaemonArguments)
            let outcome = replayer.replay(file: file, log: verbose ? { Replay.writeLine($0) } : nil, capture: record)
            switch outcome {
            case .passed(let steps):
                Replay.writeLine("PASS \(file) (\(steps) steps)")
            case .failed(let report):
                failures += 1
                Replay.writeLine("FAIL \(file)\n\(report)")
            }
        }
        Replay.writeLine("\(files.count - failures) passed, \(failures) failed")
        if let problem = captureFile?.close() {
            throw ValidationError("--capture: \(problem)")
        }
        if failures > 0 { throw ExitCode(1) }
    }
}

/// `replay --capture`'s file, written as the replay goes.
private final class CaptureFile {
    struct OpenError: Error, CustomStringConvertible { let description: String }

    let path: String
    private var descriptor: Int32
    /// The first write that failed; later lines are dropped.
    private var problem: String?

    init(path: String) throws(OpenError) {
        self.path = path
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw OpenError(description: "cannot write \(path): \(String(cString: strerror(errno)))") }
    }

    func append(_ bytes: [UInt8]) {
        guard problem == nil else { return }
        do {
            _ = try FileDescriptor(rawValue: descriptor).writeAll(bytes)
        } catch {
            problem = "cannot write \(path): \(error)"
        }
    }

    /// Closes the file; says what went wrong, if anything did.
    func close() -> String? {
        if Glibc.close(descriptor) != 0, problem == nil { problem = "cannot write \(path): \(String(cString: strerror(errno)))" }
        descriptor = -1
        return problem
    }
}

struct FixturesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fixtures",
        abstract: "Serve an HTTP fixture file on 127.0.0.1 until stdin closes.",
        discussion: """
            FILE holds {"fixtures": [ROUTE, ...]} (a transcript works too); routes are described in \
            Protocol.md, section "Fixtures". Prints one line, {"baseURL": "http://127.0.0.1:PORT", "port": PORT}, \
            once listening, so a parent can read the port without waiting blindly.
            """
    )

    @Argument(help: "A JSON file with a \"fixtures\" array.")
    var file: String

    @Option(help: "Port to listen on (0 picks a free one).")
    var port = 0

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be an integer in 0...65535, got \(port)") }
    }

    func run() throws {
        let document = try JSON.parse(readFileBytes(file, atMost: TranscriptLimits.maximumFileBytes))
        guard let routes = document["fixtures"] else { throw ValidationError("\(file) has no \"fixtures\" array") }
        let server: FixtureServer
        do {
            server = try FixtureServer(routes: FixtureRoute.routes(parsing: routes), port: port)
        } catch {
            throw ValidationError("\(file): \(error)")
        }
        Replay.writeLine(JSON.object([("baseURL", JSON(server.baseURL)), ("port", JSON(server.port))]).text())
        // Serve until the parent closes our stdin (or kills us). Any error reading it ends
        // serving too: retried, it would spin.
        _ = try? FileDescriptor.standardInput.readToEnd()
        server.stop()
    }
}
