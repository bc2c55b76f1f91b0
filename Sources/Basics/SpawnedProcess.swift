#if canImport(Glibc)
import Glibc
#endif
import CSystemShims
import Dispatch
import SystemPackage

// The package's one way to start a child process: replay's daemons, the tests' daemons and
// tools (openssl, the cache exerciser) and the benchmark's daemons all start here.
// Not Foundation's `Process`: Basics is imported by the message path, which stays free of
// Foundation. Not swift-subprocess: its `run` awaits the child on the cooperative pool, which
// our blocking threads (the daemon's, the tests') can leave with no thread free, and then it
// never returns (ARCHITECTURE.md, "Child processes").

/// A command started with pipes on its stdin, stdout and (unless told otherwise) stderr; the
/// caller owns the parent's ends (`standardInput` to write, the other two to read) and reaps
/// the child with `wait`.
package struct SpawnedProcess: Sendable {
    package let pid: pid_t
    package let standardInput: Int32
    package let standardOutput: Int32
    /// -1 unless `standardError` was `.pipe`.
    package let standardError: Int32

    package struct SpawnError: Error, CustomStringConvertible {
        package let description: String
    }

    /// Where the child's stderr goes.
    package enum ErrorOutput: Sendable {
        /// A pipe, read through `standardError`.
        case pipe
        /// This process's own stderr.
        case inherited
        /// /dev/null: for a child whose stderr nobody reads, which a full pipe would stop.
        case discarded
    }

    /// `command[0]` is a path (no search of PATH). `environment`: `NAME=value` strings; nil
    /// inherits this process's. `workingDirectory`: where the child starts; nil, where this
    /// process is. `closing`: any of 0, 1 and 2 to leave closed in the child instead (how a
    /// careless parent starts it).
    package init(
        command: [String], environment: [String]? = nil, workingDirectory: String? = nil, standardError errorOutput: ErrorOutput = .pipe,
        closing: [Int32] = []
    ) throws {
        guard let executable = command.first else { throw SpawnError(description: "cannot run an empty command") }
        // A child that exits before reading all we write must cost the writer EPIPE, not its life.
        signal(SIGPIPE, SIG_IGN)
        // Created close-on-exec in one step (pipe2 with O_CLOEXEC), so a process spawned at the same time by
        // another thread (tests run in parallel) never inherits these ends and keeps a
        // daemon's stdin open after we close it. The child's own 0, 1 and 2 are dup2'd
        // copies, which do not carry the flag.
        var stdinPipe: [Int32] = [-1, -1], stdoutPipe: [Int32] = [-1, -1], stderrPipe: [Int32] = [-1, -1]
        guard cshims_pipe_cloexec(&stdinPipe) == 0, cshims_pipe_cloexec(&stdoutPipe) == 0,
            errorOutput != .pipe || cshims_pipe_cloexec(&stderrPipe) == 0
        else {
            let failure = errno
            for descriptor in stdinPipe + stdoutPipe + stderrPipe where descriptor >= 0 { close(descriptor) }
            throw SpawnError(description: "pipe2 failed: \(String(cString: strerror(failure)))")
        }
        defer {
            for descriptor in [stdinPipe[0], stdoutPipe[1], stderrPipe[1]] where descriptor >= 0 { close(descriptor) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Each file action checked: one not registered (out of memory) would start the child
        // with the wrong files or in the wrong folder, and the failure would show elsewhere.
        var actionsFailure: Int32 = 0
        func check(_ result: Int32) { if actionsFailure == 0 { actionsFailure = result } }
        check(posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0))
        check(posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1))
        switch errorOutput {
        case .pipe: check(posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], 2))
        case .inherited: break
        case .discarded: check(posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0))
        }
        for descriptor in closing { check(posix_spawn_file_actions_addclose(&actions, descriptor)) }
        if let workingDirectory { check(cshims_spawn_add_chdir(&actions, workingDirectory)) }
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environmentStrings: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup($0) } + [nil] }
        defer { environmentStrings?.forEach { free($0) } }
        // The child starts as a shell would start it: no signal blocked and none ignored.
        // Otherwise it inherits the spawning thread's mask (a test's thread blocks signals:
        // a child would then survive SIGTERM, and a write past RLIMIT_FSIZE would fail with
        // EFBIG instead of raising SIGXFSZ) and this process's SIGPIPE, ignored above.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t(), everySignal = sigset_t()
        sigemptyset(&noSignals)
        sigfillset(&everySignal)
        sigdelset(&everySignal, SIGKILL)
        sigdelset(&everySignal, SIGSTOP)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &everySignal)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid = pid_t()
        let result =
            actionsFailure != 0
            ? actionsFailure
            : environmentStrings.map { posix_spawn(&pid, executable, &actions, &attributes, argv, $0) }
                ?? posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard result == 0 else {
            for descriptor in [stdinPipe[1], stdoutPipe[0], stderrPipe[0]] where descriptor >= 0 { close(descriptor) }
            let place = workingDirectory.map { " in \($0)" } ?? ""
            throw SpawnError(description: "cannot run \(executable)\(place): \(String(cString: strerror(result)))")
        }
        self.pid = pid
        standardInput = stdinPipe[1]
        standardOutput = stdoutPipe[0]
        standardError = stderrPipe[0]
    }

    /// How a child ended.
    package enum Termination: Equatable, Sendable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        /// From a status as `waitpid` reports it (a stopped child is never reported: no WUNTRACED).
        package init(waitStatus status: Int32) {
            self = status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signalled(status & 0x7f)
        }

        /// As a shell's `$?` says it: the exit code, or 128 plus the signal's number.
        package var shellStatus: Int32 {
            switch self {
            case .exited(let code): code
            case .signalled(let signal): 128 + signal
            }
        }

        package var description: String {
            switch self {
            case .exited(let code): "exited with status \(code)"
            case .signalled(let signal): "killed by signal \(signal)"
            }
        }
    }

    /// Waits for the child to end and reaps it. Once only: a second wait has no child to wait
    /// for, which is a mistake in the caller and stops the process.
    @discardableResult
    package func wait() -> Termination {
        var usage = rusage()
        return wait(usage: &usage)
    }

    /// `wait`, also setting `usage` to what the child used (CPU time, peak memory: wait4's).
    @discardableResult
    package func wait(usage: inout rusage) -> Termination {
        var status: Int32 = 0
        while wait4(pid, &status, 0, &usage) < 0 {
            let failure = errno
            guard failure == EINTR else { preconditionFailure("wait4(\(pid)): \(String(cString: strerror(failure)))") }
        }
        return Termination(waitStatus: status)
    }

    /// Sends the child `signal`. Harmless once it has ended, until it is reaped: its pid is
    /// not reused before then.
    package func kill(_ signal: Int32 = SIGKILL) {
        _ = Glibc.kill(pid, signal)
    }

    /// What a command run to its end left: how it ended and every byte it wrote.
    package struct Outcome: Sendable {
        package let termination: Termination
        package let standardOutput: [UInt8]
        package let standardError: [UInt8]
    }

    /// Reads stdout and stderr (when piped) to their ends at the same time, stdout on another
    /// thread: a child blocked writing to either, because nobody reads it, never ends, so a
    /// caller about to wait for the end reads both first.
    package func readOutputs() -> (standardOutput: [UInt8], standardError: [UInt8]) {
        let output = LockedValue<[UInt8]>([])
        let standardOutput = self.standardOutput, group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            let bytes = (try? FileDescriptor(rawValue: standardOutput).readToEnd()) ?? []
            output.withLock { $0 = bytes }
        }
        let errors = standardError >= 0 ? (try? FileDescriptor(rawValue: standardError).readToEnd()) ?? [] : []
        group.wait()
        return (output.withLock { $0 }, errors)
    }

    /// Runs `command` to its end: `input` written to its stdin, which is then closed, and its
    /// stdout and stderr read whole. One thread serves all three pipes as each is ready (poll),
    /// so a child that fills one while we would be waiting on another, or writes before it
    /// has read all its input, cannot stall it. Input the child does not read is dropped.
    package static func run(
        _ command: [String], environment: [String]? = nil, workingDirectory: String? = nil, input: [UInt8] = []
    ) throws -> Outcome {
        let process = try SpawnedProcess(command: command, environment: environment, workingDirectory: workingDirectory)
        var output: [UInt8] = [], errors: [UInt8] = []
        var inputEnd: Int32? = process.standardInput
        var outputEnds: [Int32] = [process.standardOutput, process.standardError]
        defer {
            if let inputEnd { close(inputEnd) }
            outputEnds.forEach { close($0) }
        }
        do {
            // Written only as far as the pipe takes without waiting: reading must go on meanwhile.
            _ = fcntl(process.standardInput, F_SETFL, fcntl(process.standardInput, F_GETFL) | O_NONBLOCK)
            var written = 0
            var chunk = [UInt8](repeating: 0, count: 65536)
            while inputEnd != nil || !outputEnds.isEmpty {
                if let end = inputEnd, written == input.count {
                    close(end)
                    inputEnd = nil
                    continue
                }
                var pollers = outputEnds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
                if let inputEnd { pollers.append(pollfd(fd: inputEnd, events: Int16(POLLOUT), revents: 0)) }
                guard poll(&pollers, nfds_t(pollers.count), -1) >= 0 else {
                    if errno == EINTR { continue }
                    throw Errno(rawValue: errno)
                }
                for poller in pollers where poller.revents != 0 {
                    let descriptor = FileDescriptor(rawValue: poller.fd)
                    if poller.fd == inputEnd {
                        do {
                            written += try input[written...].withUnsafeBytes { try descriptor.write($0) }
                        } catch Errno.resourceTemporarilyUnavailable {
                        } catch Errno.brokenPipe {
                            written = input.count
                        }
                        continue
                    }
                    let count = try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0) }
                    if count == 0 {
                        close(poller.fd)
                        outputEnds.removeAll { $0 == poller.fd }
                    } else if poller.fd == process.standardOutput {
                        output += chunk[..<count]
                    } else {
                        errors += chunk[..<count]
                    }
                }
            }
        } catch {
            process.kill()
            process.wait()
            throw SpawnError(description: "running \(command[0]): \(error)")
        }
        return Outcome(termination: process.wait(), standardOutput: output, standardError: errors)
    }
}
