import ArgumentParser
import Daemon
import Foundation
import Logging
import PageCache
import Replay

struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "The persisted page cache: where it is, what it holds, emptying it (CACHE.md).",
        subcommands: [Path.self, List.self, Clear.self]
    )

    struct Location: ParsableArguments {
        @Option(help: ArgumentHelp("The cache file (default: `datasourced cache path`).", valueName: "FILE"))
        var cachePath: String?

        var path: String { cachePath ?? SQLitePageStore.defaultPath() }
    }

    struct Path: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the default cache file: $XDG_CACHE_HOME/datasourced/cache.sqlite, else ~/.cache/datasourced/cache.sqlite.")

        func run() {
            Replay.writeLine(SQLitePageStore.defaultPath())
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the entries, most recently used first: label, bytes, when stored (or confirmed) and when last used.",
            discussion: """
                One entry a line, tab-separated; times are UTC. Labels are URLs without credentials. Reads the file \
                without writing anything. Anything at the path that datasourced did not make is left as it is: \
                a message, exit status 1.
                """)

        @OptionGroup var location: Location

        func run() throws {
            let found: [CacheEntrySummary]?
            do {
                found = try SQLitePageStore.entries(inFileAt: location.path)
            } catch {
                warnLine("datasourced cache list: \(error)")
                throw ExitCode(1)
            }
            guard let entries = found else { return warnLine("no cache file at \(location.path)") }
            for entry in entries {
                let stored = Timestamp.iso8601(entry.storedAt, withMilliseconds: false)
                let used = Timestamp.iso8601(entry.usedAt, withMilliseconds: false)
                Replay.writeLine("\(entry.label)\t\(entry.bytes)\tstored \(stored)\tused \(used)")
            }
        }
    }

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete every entry (daemons using the file keep running; their lists reload from the server).",
            discussion: "Anything at the path that datasourced did not make is left as it is: a message, exit status 1.")

        @OptionGroup var location: Location

        func run() throws {
            let logger = Logger(label: "datasourced", factory: { StreamLogHandler.standardError(label: $0) })
            let cleared: Int?
            do {
                cleared = try SQLitePageStore.removeEntries(inFileAt: location.path, logger: logger)
            } catch {
                warnLine("datasourced cache clear: \(error)")
                throw ExitCode(1)
            }
            guard let removed = cleared else { return warnLine("no cache file at \(location.path)") }
            Replay.writeLine("removed \(removed) entr\(removed == 1 ? "y" : "ies") from \(location.path)")
        }
    }
}

func warnLine(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
