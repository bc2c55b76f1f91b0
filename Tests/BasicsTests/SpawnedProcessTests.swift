import Basics
#if canImport(Glibc)
import Glibc
#endif
import Testing

@Suite struct SpawnedProcessTests {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func theExitStatusAndTheKillingSignalAreReported() throws {
        let exited = try SpawnedProcess.run(["/bin/sh", "-c", "exit 3"])
        #expect(exited.termination == .exited(3))
        #expect(exited.termination.shellStatus == 3)
        let killed = try SpawnedProcess.run(["/bin/sh", "-c", "kill -TERM $$"])
        #expect(killed.termination == .signalled(SIGTERM))
        #expect(killed.termination.shellStatus == 128 + SIGTERM)
        #expect(killed.termination.description == "killed by signal \(SIGTERM)")
    }

    @Test func stdoutAndStderrAreCapturedApart() throws {
        let run = try SpawnedProcess.run(["/bin/sh", "-c", "printf 'to stdout'; printf 'to stderr' >&2"])
        #expect(text(run.standardOutput) == "to stdout")
        #expect(text(run.standardError) == "to stderr")
        #expect(run.termination == .exited(0))
    }

    @Test func stdinIsDeliveredAndThenClosed() throws {
        // cat ends only at the end of its input: it returning at all says stdin was closed.
        let input = Array("line one\nline two\n".utf8)
        let run = try SpawnedProcess.run(["/bin/cat"], input: input)
        #expect(run.standardOutput == input)
        #expect(run.termination == .exited(0))
    }

    @Test func aMissingExecutableIsASpawnErrorNamingIt() {
        let missing = #expect(throws: SpawnedProcess.SpawnError.self) {
            try SpawnedProcess.run(["/nonexistent/datasourced-tool", "--flag"])
        }
        #expect(missing?.description == "cannot run /nonexistent/datasourced-tool: No such file or directory")
        #expect(throws: SpawnedProcess.SpawnError.self) { try SpawnedProcess(command: []) }
    }

    /// Megabytes on both pipes, stderr first, and megabytes of input the child echoes as it
    /// reads: a reader that drained one pipe, or wrote all input, before the rest would wait
    /// forever on a child waiting on it. `timeout` turns such a hang into a failure here.
    @Test func largeOutputOnBothPipesAndLargeInputDoNotDeadlock() throws {
        let size = 4 << 20
        let both = try SpawnedProcess.run([
            "/usr/bin/timeout", "60", "/bin/sh", "-c", "head -c \(size) /dev/zero >&2; head -c \(size) /dev/zero",
        ])
        #expect(both.termination == .exited(0))
        #expect(both.standardError.count == size && both.standardOutput.count == size)

        let input = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let echoed = try SpawnedProcess.run(["/usr/bin/timeout", "60", "/bin/cat"], input: input)
        #expect(echoed.termination == .exited(0))
        #expect(echoed.standardOutput == input)
    }

    @Test func environmentWorkingDirectoryAndClosedDescriptorsAreTheCallers() throws {
        let environment = try SpawnedProcess.run(["/usr/bin/env"], environment: ["ONLY=this"])
        #expect(text(environment.standardOutput) == "ONLY=this\n")

        let directory = try SpawnedProcess.run(["/bin/sh", "-c", "pwd"], workingDirectory: "/usr/bin")
        #expect(text(directory.standardOutput) == "/usr/bin\n")
        let nowhere = #expect(throws: SpawnedProcess.SpawnError.self) {
            try SpawnedProcess.run(["/bin/sh"], workingDirectory: "/nonexistent-directory")
        }
        #expect(nowhere?.description == "cannot run /bin/sh in /nonexistent-directory: No such file or directory")

        let probe = "if [ -e /proc/self/fd/0 ]; then echo open; else echo closed; fi"
        let closed = try SpawnedProcess(command: ["/bin/sh", "-c", probe], closing: [0])
        defer { [closed.standardInput, closed.standardOutput, closed.standardError].forEach { _ = close($0) } }
        #expect(text(try FileDescriptor(rawValue: closed.standardOutput).readToEnd() ?? []) == "closed\n")
        #expect(closed.wait() == .exited(0))
    }

    /// Our ends of a child's pipes are close-on-exec: a second child never holds the first's
    /// stdin open (which would keep the first from seeing the end of its input).
    @Test func aChildInheritsNoneOfAnotherChildsPipes() throws {
        let first = try SpawnedProcess(command: ["/bin/cat"])
        defer {
            first.kill()
            first.wait()
            [first.standardInput, first.standardOutput, first.standardError].forEach { _ = close($0) }
        }
        let ends = [first.standardInput, first.standardOutput, first.standardError].map { descriptorTarget($0) }
        #expect(ends.allSatisfy { $0.hasPrefix("pipe:[") }, "\(ends)")
        let listing = try SpawnedProcess.run(["/bin/sh", "-c", "for fd in /proc/self/fd/*; do readlink $fd; done"])
        let held = text(listing.standardOutput)
        #expect(held.contains("pipe:["), "the listing's own pipes: \(held)")
        for end in ends { #expect(!held.contains(end), "\(end) leaked into the second child: \(held)") }
    }

    private func descriptorTarget(_ descriptor: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let count = readlink("/proc/self/fd/\(descriptor)", &buffer, buffer.count - 1)
        return count < 0 ? "" : String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
