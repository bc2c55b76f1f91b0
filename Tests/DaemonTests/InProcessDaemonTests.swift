#if canImport(Glibc)
import Glibc
#endif
import Basics
@testable import Daemon
import JSONKit
import JSONRPC
import Logging
import Testing

/// A daemon on pipes inside the test process, for behaviour no client can provoke.
private final class PipedDaemon: @unchecked Sendable {
    let toDaemon: Int32
    let fromDaemon: Int32
    var decoder = FrameDecoder(maximumMessageSize: 1 << 20)
    let exitStatus = Mailbox<Int32>()

    /// `prepare` sees the daemon on its thread before it runs (tests: hooks, a weak reference);
    /// the thread lets go of it before posting the exit status.
    init(
        additionalMethods: @escaping @Sendable (inout MethodTable) -> Void = { _ in },
        roleSteps: (@Sendable (Mailbox<DaemonEvent>.RoleStep) -> Void)? = nil,
        prepare: @escaping @Sendable (Daemon) -> Void = { _ in }
    ) {
        var input: [Int32] = [0, 0], output: [Int32] = [0, 0]
        precondition(pipe(&input) == 0 && pipe(&output) == 0)
        toDaemon = input[1]
        fromDaemon = output[0]
        let daemonInput = input[0], daemonOutput = output[1]
        let status = exitStatus
        let box = UncheckedBox(additionalMethods)
        startThread {
            let exitStatus = {
                let daemon = Daemon(
                    options: DaemonOptions(), logger: Logger(label: "test"), fetcher: ScriptedFetcher(),
                    input: daemonInput, output: daemonOutput, additionalMethods: box.value, roleSteps: roleSteps)
                prepare(daemon)
                return daemon.run()
            }()
            status.post(exitStatus)
        }
    }

    func send(_ message: JSON) {
        let bytes = Framing.frame(message.encoded())
        _ = bytes.withUnsafeBytes { write(toDaemon, $0.baseAddress, $0.count) }
    }

    func receive() -> JSON? {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if case .body(let body)? = decoder.next() { return try? JSON.parse(body) }
            let count = chunk.withUnsafeMutableBytes { read(fromDaemon, $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            decoder.append(Array(chunk[..<count]))
        }
    }
}

private struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

private final class WeakDaemon: @unchecked Sendable {
    weak var daemon: Daemon?
}

private struct Boom: Error, CustomStringConvertible {
    var description: String { "boom" }
}

@Suite struct InProcessDaemonTests {
    @Test func aClientThatDoesNotReadNeverStopsTheDaemonFromReading() throws {
        let daemon = PipedDaemon()
        daemon.send(["jsonrpc": "2.0", "id": 0, "method": "initialize"])
        // 20,000 answers (~1 MB) far exceed a pipe's buffer. If the daemon stopped reading
        // stdin while its stdout was full, these writes would block and never finish.
        let written = Mailbox<Bool>()
        let toDaemon = daemon.toDaemon
        startThread {
            var bytes: [UInt8] = []
            for id in 1...20_000 { bytes += Framing.frame(JSON.object(["jsonrpc": "2.0", "id": JSON(id), "method": "ping"]).encoded()) }
            let complete = bytes.withUnsafeBytes { raw -> Bool in
                var offset = 0
                while offset < raw.count {
                    let count = write(toDaemon, raw.baseAddress! + offset, raw.count - offset)
                    if count <= 0 { return false }
                    offset += count
                }
                return true
            }
            written.post(complete)
        }
        // A daemon that stopped reading would block these writes for good, so the bound can be
        // generous: under ASan or TSan on a loaded 2-core machine the 20,000 requests took
        // longer than 10 s (scripts/sanitizers.sh).
        #expect(written.takeAll(waitingAtMost: 120_000) == [true], "the daemon stopped reading stdin")
        // Now read everything: every request was answered, in order.
        var ids: [Int] = []
        while ids.count < 20_001, let message = daemon.receive() { ids.append(message["id"]!.integerValue!) }
        #expect(ids == Array(0...20_000))
        close(daemon.toDaemon)
        // A bound for failure: the whole suite runs in parallel, and on a loaded 2-core
        // machine the daemon's exit after end of input took more than 5 s to be seen.
        #expect(daemon.exitStatus.takeAll(waitingAtMost: 30_000) == [1])
    }

    /// `run` returns only once the transport's threads have ended: the writer thread, left
    /// waiting on a client that reads none of its answers, and the reader, whose input stays
    /// open, must both end at `exit` instead of keeping `run` from returning.
    @Test func exitEndsTheRunWhileTheClientReadsNothingAndKeepsItsInputOpen() {
        let daemon = PipedDaemon()
        daemon.send(["jsonrpc": "2.0", "id": 0, "method": "initialize"])
        // Far more answers than the 64 KB pipe holds, none of them read.
        for id in 1...5000 { daemon.send(["jsonrpc": "2.0", "id": JSON(id), "method": "ping"]) }
        daemon.send(["jsonrpc": "2.0", "method": "exit"])
        #expect(daemon.exitStatus.takeAll(waitingAtMost: 30_000) == [1], "a bound for failure on a loaded machine, as above")
        close(daemon.toDaemon)
        close(daemon.fromDaemon)
    }

    @Test func aClosedStdoutEndsTheDaemonCleanly() {
        let daemon = PipedDaemon()
        close(daemon.fromDaemon)
        daemon.send(["jsonrpc": "2.0", "id": 1, "method": "initialize"])
        // SIGPIPE is ignored: the failed write ends the run with status 1, no signal.
        #expect(daemon.exitStatus.takeAll(waitingAtMost: 30_000) == [1], "a bound for failure on a loaded machine, as above")
    }

    @Test func unexpectedHandlerFailuresAnswerInternalError() throws {
        let daemon = PipedDaemon(additionalMethods: { $0.on(Method<NoParams, NullResult>(name: "test/explode")) { _, _ in throw Boom() } })
        daemon.send(["jsonrpc": "2.0", "id": 1, "method": "initialize"])
        #expect(daemon.receive()?["id"] == 1)
        daemon.send(["jsonrpc": "2.0", "id": 2, "method": "test/explode"])
        let response = try #require(daemon.receive())
        #expect(response["id"] == 2)
        #expect(response["error"]?["code"] == JSON(ErrorCode.internalError))
        #expect(response["error"]?["message"]?.stringValue == "Internal error: test/explode failed: boom")
        // The daemon keeps serving.
        daemon.send(["jsonrpc": "2.0", "id": 3, "method": "ping"])
        #expect(daemon.receive()?["result"] == ["delayMilliseconds": 0])
        close(daemon.toDaemon)
        #expect(daemon.exitStatus.takeAll(waitingAtMost: 30_000) == [1], "a bound for failure on a loaded machine, as above")
    }

    /// Issue 33: the reader handles requests itself, through a closure that the reader and
    /// writer threads keep after `run` returns. When that closure held the daemon, a daemon
    /// that had served stayed alive with every source it made, for as long as its input was
    /// open (the reader) or for good (the writer): under LeakSanitizer, the weak-reference side
    /// tables and predicate boxes those sources held showed as leaks (Swift keeps the pointers
    /// to them encoded, where LeakSanitizer cannot see them).
    @Test func aDaemonThatHasReturnedIsFreedThoughItsInputStaysOpen() throws {
        let weak = WeakDaemon()
        let daemon = PipedDaemon(prepare: { weak.daemon = $0 })
        daemon.send(["jsonrpc": "2.0", "id": 1, "method": "initialize"])
        #expect(daemon.receive()?["id"] == 1)
        daemon.send(["jsonrpc": "2.0", "id": 2, "method": "shutdown"])
        #expect(daemon.receive()?["id"] == 2)
        daemon.send(["jsonrpc": "2.0", "method": "exit"])
        #expect(daemon.exitStatus.takeAll(waitingAtMost: 30_000) == [0], "a bound for failure on a loaded machine, as above")
        // The daemon's thread has let go of it. The reader thread may still be leaving the
        // handling of `exit` (a reference of its own for that long): on a loaded machine, wait
        // for it, bounded; a thread that kept the daemon for good would hold it past the bound.
        let deadline = ContinuousClock.now + .seconds(10)
        while weak.daemon != nil, ContinuousClock.now < deadline { usleep(1000) }
        #expect(weak.daemon == nil, "the transport's threads keep the daemon alive")
        close(daemon.toDaemon)
    }

    /// Issue 33: the daemon hung at exit (2 in 240 sessions of a stress loop) when the reader
    /// handled `exit`, released the role waking the main loop, then claimed the role again for
    /// end of input; the main loop came to claim the role while the reader held it and waited,
    /// and the reader's release did not signal the wake-up still pending. The mailbox's role
    /// steps put the two threads in that order here.
    @Test func endOfInputRightAfterExitOnTheReaderStillEndsTheRun() throws {
        let mainLoopMayClaim = Mailbox<Bool>()
        let mainLoopWaits = Mailbox<Bool>()
        let consumerClaims = LockedValue(0), producerClaims = LockedValue(0)
        @Sendable func counted(_ counter: LockedValue<Int>) -> Int {
            counter.withLock {
                $0 += 1
                return $0
            }
        }
        let steps: @Sendable (Mailbox<DaemonEvent>.RoleStep) -> Void = { step in
            switch step {
            case .consumerWillClaim:
                // The main loop's first claim waits until the reader holds the role for end of input.
                if counted(consumerClaims) == 1 { _ = mainLoopMayClaim.takeAll(waitingAtMost: 10_000) }
            case .consumerWaits:
                mainLoopWaits.post(true)
            case .producerClaimed:
                // The first claim is the reader's for `exit`, the second for end of input: the
                // reader then holds the role until the main loop waits for it.
                if counted(producerClaims) == 2 {
                    mainLoopMayClaim.post(true)
                    _ = mainLoopWaits.takeAll(waitingAtMost: 10_000)
                }
            }
        }
        let daemon = PipedDaemon(roleSteps: steps)
        daemon.send(["jsonrpc": "2.0", "method": "exit"])
        close(daemon.toDaemon)
        #expect(daemon.exitStatus.takeAll(waitingAtMost: 10_000) == [1], "the main loop missed the wake-up of exit")
        #expect(producerClaims.withLock { $0 } == 2, "the reader did not handle exit and end of input itself")
    }
}
