import Basics
import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Testing

@Suite struct LockTests {
    @Test func lockedValueCountsEveryIncrementFromManyThreads() {
        let count = LockedValue(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<10_000 { count.withLock { $0 += 1 } }
        }
        #expect(count.withLock { $0 } == 80_000)
    }

    #if DEBUG
    /// Debug builds make the mutex error-checking, and every return code is checked: a misuse
    /// stops the process where it happens (a plain mutex's unlock would answer 0 here).
    @Test func unlockingALockNotHeldStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            Lock().unlock()
        }
    }

    @Test func lockingTwiceOnOneThreadStopsTheProcessInsteadOfHanging() async {
        await #expect(processExitsWith: .failure) {
            let lock = Lock()
            lock.lock()
            lock.lock()
        }
    }
    #endif

    @Test func aTimedWaitWithNobodySignallingEndsAtItsDeadline() {
        let ready = LockedValue(false)
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        deadline.tv_nsec += 20_000_000
        if deadline.tv_nsec >= 1_000_000_000 {
            deadline.tv_sec += 1
            deadline.tv_nsec -= 1_000_000_000
        }
        let signalled = ready.withLock(waitingUntil: { $0 }, deadline: deadline) { $0 }
        #expect(!signalled)
    }

    @Test func aSignalWakesTheWaiter() {
        let ready = LockedValue(false)
        DispatchQueue.global().async {
            ready.withLock {
                $0 = true
                ready.signal()
            }
        }
        #expect(ready.withLock(waitingUntil: { $0 }) { $0 })
    }
}
