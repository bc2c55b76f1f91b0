#if canImport(Glibc)
import Glibc
#endif
import Basics
import CSystemShims
import Subprocess
import SystemPackage

/// A command started by swift-subprocess with pipes on its stdin, stdout and stderr; the
/// caller owns the parent's ends (`standardInput` to write, the other two to read) and closes
/// them. swift-subprocess reaps the child: `wait` answers how it ended, never `waitpid`.
///
/// The pipes are ours, not swift-subprocess's `.inputWriter`/`.sequence`: their readers are
/// threads and `poll` loops (the replayer's, the benchmarks', the tests'), which read and
/// write plain descriptors, at the pace they choose.
package final class SpawnedProcess: @unchecked Sendable {
    package let pid: pid_t
    package let standardInput: Int32
    package let standardOutput: Int32
    /// -1 when started with `discardingStandardError`.
    package let standardError: Int32

    /// How the process ended.
    package enum Termination: Equatable, Sendable {
        case exited(Int32)
        case signalled(Int32)

        /// As a shell reports it: the exit code, or 128 + the signal.
        package var status: Int32 {
            switch self {
            case .exited(let code): code
            case .signalled(let signal): 128 + signal
            }
        }
    }

    package struct SpawnError: Error, CustomStringConvertible { package let description: String }

    /// Set once the child has ended (by `SpawnExecutor`, or when `run` returns).
    private let ending = Outcome<Termination>()

    /// `environment`: `NAME=value` strings; nil inherits this process's. `closing`: any of 0,
    /// 1 and 2 to leave closed in the child instead (how a careless parent starts it); the
    /// command then runs through `/bin/sh`, which closes them and execs it (same pid):
    /// swift-subprocess always gives a child something on 0, 1 and 2 (ARCHITECTURE.md, "Child
    /// processes"). `discardingStandardError`: the child's stderr is /dev/null.
    package init(
        command: [String], environment: [String]? = nil, closing: [Int32] = [], workingDirectory: String? = nil,
        discardingStandardError: Bool = false
    ) throws {
        precondition(!command.isEmpty, "a command names its executable")
        signal(SIGPIPE, SIG_IGN)
        // Created close-on-exec in one step (pipe2 with O_CLOEXEC), so that no child started
        // meanwhile by another thread inherits our ends and holds a daemon's stdin open after we
        // close it; the child's 0, 1 and 2 are dup2'd copies, which do not carry the flag.
        var stdinPipe: [Int32] = [-1, -1], stdoutPipe: [Int32] = [-1, -1], stderrPipe: [Int32] = [-1, -1]
        if discardingStandardError { stderrPipe[1] = open("/dev/null", O_WRONLY | O_CLOEXEC) }
        guard cshims_pipe_cloexec(&stdinPipe) == 0, cshims_pipe_cloexec(&stdoutPipe) == 0,
            discardingStandardError ? stderrPipe[1] >= 0 : cshims_pipe_cloexec(&stderrPipe) == 0
        else {
            let failure = errno
            for descriptor in stdinPipe + stdoutPipe + stderrPipe where descriptor >= 0 { close(descriptor) }
            throw SpawnError(description: "no pipes for \(command[0]): \(String(cString: strerror(failure)))")
        }
        var executable = command[0], arguments = Array(command.dropFirst())
        if !closing.isEmpty {
            let redirections = closing.sorted().map { $0 == 0 ? "<&-" : "\($0)>&-" }.joined(separator: " ")
            arguments = ["-c", "exec \"$0\" \"$@\" \(redirections)", executable] + arguments
            executable = "/bin/sh"
        }
        let started = Outcome<Result<pid_t, SpawnError>>(), ending = self.ending
        let stdinRead = FileDescriptor(rawValue: stdinPipe[0]), stdoutWrite = FileDescriptor(rawValue: stdoutPipe[1])
        let stderrWrite = FileDescriptor(rawValue: stderrPipe[1])
        let childEnvironment: Environment = environment.map { .custom($0.map { Array($0.utf8) + [0] }) } ?? .inherit
        let directory = workingDirectory.map { FilePath($0) }
        // On a thread of its own, not the cooperative pool: callers block (a test, the
        // replayer's reader threads) while swift-subprocess starts and reaps the child, and with
        // the pool's threads all blocked in such callers it would never get to run. (Its run
        // still needs the pool once the child is reaped, to join a task of its own: the executor
        // reports the child's end before that, see `SpawnExecutor`.)
        Task(executorPreference: SpawnExecutor.shared) {
            do {
                let result = try await Subprocess.run(
                    .path(FilePath(executable)), arguments: Arguments(arguments), environment: childEnvironment,
                    workingDirectory: directory,
                    input: .fileDescriptor(stdinRead, closeAfterSpawningProcess: true),
                    output: .fileDescriptor(stdoutWrite, closeAfterSpawningProcess: true),
                    error: .fileDescriptor(stderrWrite, closeAfterSpawningProcess: true)
                ) { execution in
                    SpawnExecutor.shared.watch(execution.processIdentifier.processDescriptor, reportingTo: ending)
                    started.set(.success(execution.processIdentifier.value))
                }
                switch result.terminationStatus {
                case .exited(let code): ending.set(.exited(code))
                case .signaled(let signal): ending.set(.signalled(signal))
                }
            } catch {
                // swift-subprocess has closed the child's ends (closeAfterSpawningProcess).
                started.set(.failure(SpawnError(description: "cannot run \(executable): \(error)")))
            }
        }
        switch started.wait() {
        case .success(let pid):
            self.pid = pid
        case .failure(let error):
            for descriptor in [stdinPipe[1], stdoutPipe[0], stderrPipe[0]] where descriptor >= 0 { close(descriptor) }
            throw error
        }
        standardInput = stdinPipe[1]
        standardOutput = stdoutPipe[0]
        standardError = discardingStandardError ? -1 : stderrPipe[0]
    }

    /// Waits for the process to end.
    @discardableResult
    package func wait() -> Termination { ending.wait() }

    /// Waits at most `milliseconds` for the process to end; nil if it is still running.
    package func wait(withinMilliseconds milliseconds: Int) -> Termination? { ending.wait(withinMilliseconds: milliseconds) }

    /// Sends `signal` unless the process has ended (its pid may then soon be another's).
    package func send(signal number: Int32) {
        ending.unlessSet { _ = Glibc.kill(pid, number) }
    }

    /// Sends SIGKILL (see `send`).
    package func kill() { send(signal: SIGKILL) }

    /// Runs `command` to its end with its stdin closed at once (it reads end of file): how it
    /// ended, and what it wrote on stdout and stderr.
    package static func run(
        _ command: [String], environment: [String]? = nil, workingDirectory: String? = nil
    ) throws -> (
        termination: Termination, output: [UInt8], errors: [UInt8]
    ) {
        let process = try SpawnedProcess(command: command, environment: environment, workingDirectory: workingDirectory)
        close(process.standardInput)
        // stderr on a thread of its own: a child that fills one pipe while we read the other
        // would wait for ever.
        let errors = Outcome<[UInt8]>(), standardError = process.standardError
        startDetachedThread { errors.set(((try? FileDescriptor(rawValue: standardError).readToEnd()) ?? nil) ?? []) }
        let output = ((try? FileDescriptor(rawValue: process.standardOutput).readToEnd()) ?? nil) ?? []
        let errorBytes = errors.wait()
        close(process.standardOutput)
        close(standardError)
        return (process.wait(), output, errorBytes)
    }
}

/// A value set once by one thread and waited for by others.
final class Outcome<Value: Sendable>: @unchecked Sendable {
    private let lock = Lock()
    private let isSet = Condition()
    // Only touched under `lock`.
    private var stored: Value?

    /// Sets the value, unless it is set already.
    func set(_ value: Value) {
        lock.withLock {
            guard stored == nil else { return }
            stored = value
            isSet.signal()
        }
    }

    /// Runs `body` under the lock if no value is set yet.
    func unlessSet(_ body: () -> Void) {
        lock.withLock { if stored == nil { body() } }
    }

    func wait() -> Value {
        lock.withLock {
            while stored == nil { isSet.wait(releasing: lock) }
            // Each waiter wakes the next: a signal wakes one.
            isSet.signal()
            return stored!
        }
    }

    func wait(withinMilliseconds milliseconds: Int) -> Value? {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let nanoseconds = deadline.tv_nsec + milliseconds % 1000 * 1_000_000
        deadline.tv_sec += milliseconds / 1000 + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        return lock.withLock {
            while stored == nil {
                if !isSet.wait(releasing: lock, untilMonotonic: deadline) { break }
            }
            if stored != nil { isSet.signal() }
            return stored
        }
    }
}

/// One thread on which swift-subprocess starts and awaits every child (see `SpawnedProcess`):
/// its work between suspensions is short (a `posix_spawn`, a `waitid` on a child already gone).
///
/// swift-subprocess 1.0.2 answers a child's end only when `run` returns, and `run` first joins
/// an unstructured `Task` of its own (`withUncancelledTask`), which no executor preference
/// reaches: it runs on the cooperative pool. A test blocked in `wait` holds one of the pool's
/// threads; with all of them so held, `run` would never return (seen: UntrustedInputTests hung).
/// So, before each job, this thread looks at every child it watches without reaping it
/// (`waitid` with `WNOWAIT` on its pidfd): swift-subprocess reaps a child only in a job that
/// runs here, after the pidfd said it ended, so its status is read before it is gone.
final class SpawnExecutor: TaskExecutor, @unchecked Sendable {
    static let shared = SpawnExecutor()

    private let lock = Lock()
    private let queued = Condition()
    // Only touched under `lock`.
    private var jobs: [UnownedJob] = []
    /// Children's pidfds (our duplicates) and where to report their end; only touched on this
    /// executor's thread (`watch` is called from a job).
    private var watched: [(descriptor: Int32, ending: Outcome<SpawnedProcess.Termination>)] = []

    private init() {
        startDetachedThread { [unowned self] in
            while true {
                let batch = lock.withLock {
                    while jobs.isEmpty { queued.wait(releasing: lock) }
                    defer { jobs.removeAll(keepingCapacity: true) }
                    return jobs
                }
                for job in batch {
                    reportEnded()
                    job.runSynchronously(on: asUnownedTaskExecutor())
                }
            }
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.withLock {
            jobs.append(job)
            if jobs.count == 1 { queued.signal() }
        }
    }

    /// Reports the end of the child behind `processDescriptor` (swift-subprocess's pidfd, -1 on
    /// a kernel without them: then only `run`'s return reports it).
    func watch(_ processDescriptor: Int32, reportingTo ending: Outcome<SpawnedProcess.Termination>) {
        guard processDescriptor >= 0 else { return }
        let duplicate = fcntl(processDescriptor, F_DUPFD_CLOEXEC, 3)
        guard duplicate >= 0 else { return }
        watched.append((duplicate, ending))
    }

    private func reportEnded() {
        guard !watched.isEmpty else { return }
        watched.removeAll { child in
            var info = siginfo_t()
            let result = waitid(P_PIDFD, id_t(child.descriptor), &info, WEXITED | WNOHANG | WNOWAIT)
            if result == 0, info._sifields._sigchld.si_pid == 0 { return false }  // still running
            if result == 0 {
                let status = info._sifields._sigchld.si_status
                child.ending.set(info.si_code == CLD_EXITED ? .exited(status) : .signalled(status))
            }
            // Otherwise reaped already (not expected): `run`'s return reports it.
            close(child.descriptor)
            return true
        }
    }
}

/// A detached pthread running `body`.
private func startDetachedThread(_ body: @escaping @Sendable () -> Void) {
    final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(
        &thread, nil,
        { raw in
            Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, box)
    precondition(result == 0, "pthread_create failed: \(result)")
    pthread_detach(thread)
}
