/// Which of a transcript's `daemonArguments` `replay` passes on without being told to.
/// The daemon runs with the rights of whoever replays, and transcripts come from strangers:
/// `["--record", FILE]` would overwrite FILE, `["--cache-path", FILE]` move it aside. Only
/// options that change how the spawned daemon behaves, and name no file, are harmless.
package enum DaemonArguments {
    /// `datasourced serve`'s harmless options, and whether each takes a value.
    package static let harmless: [String: Bool] = [
        "--log-level": true,
        "--max-message-size": true,
        "--cache-max-bytes": true,
        // Names only what a recording leaves out; without --record it changes nothing.
        "--redact": true,
        "--no-cache": false,
    ]

    /// Options that name a file the daemon would write.
    package static let namingFiles: Set = ["--record", "--cache-path"]

    /// Why `arguments` cannot run without `--allow-daemon-arguments`, naming the first
    /// argument refused; nil when every one is harmless.
    package static func refusal(_ arguments: [String]) -> String? {
        let advice =
            "replay runs a transcript's daemonArguments only from a list of harmless options "
            + "(\(harmless.keys.sorted().joined(separator: ", "))) unless given --allow-daemon-arguments"
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            let name = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? argument
            let attached = name.count < argument.count
            if namingFiles.contains(name) {
                return "daemonArguments[\(index)]: \(name) names a file, which the daemon would write with your rights; \(advice)"
            }
            guard name.hasPrefix("--"), let takesValue = harmless[name] else {
                return "daemonArguments[\(index)]: \"\(argument)\" is not a harmless option; \(advice)"
            }
            if takesValue, !attached {
                // A value that looks like an option could be read as one: refused, not guessed at.
                guard index + 1 < arguments.count, !arguments[index + 1].hasPrefix("-") else {
                    return "daemonArguments[\(index)]: \(name) needs a value after it that is not an option; \(advice)"
                }
                index += 1
            } else if !takesValue, attached {
                return "daemonArguments[\(index)]: \(name) takes no value, got \"\(argument)\"; \(advice)"
            }
            index += 1
        }
        return nil
    }

    /// Whether the arguments choose the daemon's persisted cache themselves (a file, or none):
    /// else `replay` gives each transcript a cache file of its own in a temporary directory.
    package static func chooseCache(_ arguments: [String]) -> Bool {
        arguments.contains { $0 == "--no-cache" || $0 == "--cache-path" || $0.hasPrefix("--cache-path=") }
    }
}
