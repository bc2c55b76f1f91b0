import Basics
#if canImport(Glibc)
import Glibc
#endif
import Spawning
import Testing

@Suite struct SpawnedProcessTests {
    @Test func theExitCodeOrSignalAndBothStreamsAreReported() throws {
        let exited = try SpawnedProcess.run(["/bin/sh", "-c", "echo out; echo err >&2; exit 3"])
        #expect(exited.termination == .exited(3))
        #expect(String(decoding: exited.output, as: UTF8.self) == "out\n")
        #expect(String(decoding: exited.errors, as: UTF8.self) == "err\n")
        let killed = try SpawnedProcess.run(["/bin/sh", "-c", "kill -9 $$"])
        #expect(killed.termination == .signalled(SIGKILL))
        #expect(killed.termination.status == 128 + SIGKILL)
    }

    @Test func anEnvironmentGivenIsTheChildsWholeEnvironment() throws {
        let run = try SpawnedProcess.run(["/usr/bin/env"], environment: ["ONLY=this one"])
        #expect(String(decoding: run.output, as: UTF8.self) == "ONLY=this one\n")
    }

    @Test func aWorkingDirectoryIsTheChilds() throws {
        let run = try SpawnedProcess.run(["/bin/pwd"], workingDirectory: "/proc")
        #expect(String(decoding: run.output, as: UTF8.self) == "/proc\n")
    }

    @Test func anExecutableThatIsNotThereIsAnErrorNamingIt() {
        let error = #expect(throws: SpawnedProcess.SpawnError.self) { try SpawnedProcess(command: ["/nonexistent/datasourced"]) }
        #expect(error?.description.hasPrefix("cannot run /nonexistent/datasourced") == true, "\(String(describing: error))")
    }

    /// The descriptors named in `closing` are closed when the command starts, the others are
    /// the pipes; the command keeps the pid it was spawned with.
    @Test func descriptorsAskedClosedAreClosedInTheChild() throws {
        let script = #"for fd in 0 1 2; do [ -e /proc/$$/fd/$fd ] && echo "$fd open" >&2 || echo "$fd closed" >&2; done; echo $$ >&2"#
        let process = try SpawnedProcess(command: ["/bin/sh", "-c", script], closing: [0, 1])
        close(process.standardInput)
        let said = ((try? FileDescriptor(rawValue: process.standardError).readToEnd()) ?? nil) ?? []
        #expect(process.wait() == .exited(0))
        close(process.standardOutput)
        close(process.standardError)
        #expect(String(decoding: said, as: UTF8.self) == "0 closed\n1 closed\n2 open\n\(process.pid)\n")
    }

    /// More callers blocked in `wait` than the cooperative pool has threads (a test's threads
    /// are the pool's). swift-subprocess's `run` needs the pool to return after the child is
    /// reaped; waiting for that return hung every such caller for ever (UntrustedInputTests
    /// did). Each child's end must reach its caller all the same.
    @Test func childrenEndWhileEveryThreadOfThePoolWaitsForOne() {
        let callers = sysconf(Int32(_SC_NPROCESSORS_ONLN)) + 2
        let lock = Lock(), done = Condition()
        let finished = LockedValue(0)
        for _ in 0..<callers {
            Task.detached {
                for _ in 0..<3 {
                    guard let process = try? SpawnedProcess(command: ["/bin/true"]) else { break }
                    for descriptor in [process.standardInput, process.standardOutput, process.standardError] { close(descriptor) }
                    process.wait()
                }
                lock.withLock {
                    finished.withLock { $0 += 1 }
                    done.signal()
                }
            }
        }
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        deadline.tv_sec += 30
        lock.withLock {
            while finished.withLock({ $0 }) < callers {
                if !done.wait(releasing: lock, untilMonotonic: deadline) { break }
            }
        }
        #expect(finished.withLock { $0 } == callers, "callers whose three children's ends were reported within 30 s")
    }
}
