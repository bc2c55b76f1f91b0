#if canImport(Glibc)
import Glibc
#endif
import CSystemShims

/// A command started with pipes on its stdin, stdout and stderr; the caller owns the
/// parent's ends (`standardInput` to write, the other two to read).
struct SpawnedProcess {
    let pid: pid_t
    let standardInput: Int32
    let standardOutput: Int32
    let standardError: Int32

    struct SpawnError: Error, CustomStringConvertible { let description: String }

    /// `environment`: `NAME=value` strings; nil inherits this process's. `closing`: any of
    /// 0, 1 and 2 to leave closed in the child instead (how a careless parent starts it).
    init(command: [String], environment: [String]? = nil, closing: [Int32] = []) throws {
        signal(SIGPIPE, SIG_IGN)
        // Created close-on-exec in one step (pipe2 with O_CLOEXEC), so a process spawned at the same time by
        // another thread (tests run in parallel) never inherits these ends and keeps a
        // daemon's stdin open after we close it. The child's own 0, 1 and 2 are dup2'd
        // copies, which do not carry the flag.
        var stdinPipe: [Int32] = [-1, -1], stdoutPipe: [Int32] = [-1, -1], stderrPipe: [Int32] = [-1, -1]
        guard cshims_pipe_cloexec(&stdinPipe) == 0, cshims_pipe_cloexec(&stdoutPipe) == 0, cshims_pipe_cloexec(&stderrPipe) == 0 else {
            let failure = errno
            for descriptor in stdinPipe + stdoutPipe + stderrPipe where descriptor >= 0 { close(descriptor) }
            throw SpawnError(description: "pipe2 failed: \(String(cString: strerror(failure)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], 2)
        for descriptor in closing { posix_spawn_file_actions_addclose(&actions, descriptor) }
        let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environmentStrings: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup($0) } + [nil] }
        defer { environmentStrings?.forEach { free($0) } }
        var pid = pid_t()
        let result =
            environmentStrings.map { posix_spawn(&pid, command[0], &actions, nil, argv, $0) }
            ?? posix_spawn(&pid, command[0], &actions, nil, argv, environ)
        close(stdinPipe[0])
        close(stdoutPipe[1])
        close(stderrPipe[1])
        guard result == 0 else {
            close(stdinPipe[1])
            close(stdoutPipe[0])
            close(stderrPipe[0])
            throw SpawnError(description: "cannot run \(command[0]): \(String(cString: strerror(result)))")
        }
        self.pid = pid
        standardInput = stdinPipe[1]
        standardOutput = stdoutPipe[0]
        standardError = stderrPipe[0]
    }
}
