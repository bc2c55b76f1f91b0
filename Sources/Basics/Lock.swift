#if canImport(Glibc)
import Glibc
#endif

// The package's one lock idiom, after SwiftNIO's NIOLock: a pthread mutex whose every call's
// return code is checked, and which debug builds make error-checking, so a thread that locks
// twice or unlocks what it does not hold stops at once instead of deadlocking or corrupting.
// A pthread mutex rather than `Synchronization.Mutex`, whose futexes ThreadSanitizer cannot
// see (every access under it would be reported as a race). No SwiftNIO: the core (JSONKit,
// JSONRPC, DataSources, Daemon) builds and fuzzes without it.
//
// `LockedValue` is the one type here that the compiler takes on trust (`@unchecked
// Sendable`); `Lock` is a `LockedValue` of nothing, and waiting for a condition is
// `LockedValue.withLock(waitingUntil:)`, so no other class of this file shares state.

/// A value only reached under its own lock, with a condition variable to wait on for it to
/// change. A class: a pthread mutex must not move once initialised, and it lives in memory
/// allocated for it, which Swift's `&property` does not promise.
///
/// Unchecked, and why that is safe: `value` is read and written only inside
/// `withLock`'s body, between `pthread_mutex_lock` and `pthread_mutex_unlock` of `mutex`
/// (the waits release the mutex only between calls of `ready`, never inside `body`), so one
/// thread at a time reaches it, and the mutex orders each thread's accesses after the last
/// one's. The pointers themselves are set once in `init` and freed in `deinit`.
package final class LockedValue<Value>: @unchecked Sendable {
    @usableFromInline let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    @usableFromInline var value: Value

    package init(_ value: Value) {
        self.value = value
        var attributes = pthread_mutexattr_t()
        checkPthread(pthread_mutexattr_init(&attributes), "pthread_mutexattr_init")
        #if DEBUG
        checkPthread(pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK)), "pthread_mutexattr_settype")
        #endif
        checkPthread(pthread_mutex_init(mutex, &attributes), "pthread_mutex_init")
        checkPthread(pthread_mutexattr_destroy(&attributes), "pthread_mutexattr_destroy")
        // Timed waits measure the monotonic clock: a wall-clock step (NTP, a user) must not
        // make a wait end early or last for hours.
        var conditionAttributes = pthread_condattr_t()
        checkPthread(pthread_condattr_init(&conditionAttributes), "pthread_condattr_init")
        checkPthread(pthread_condattr_setclock(&conditionAttributes, CLOCK_MONOTONIC), "pthread_condattr_setclock")
        checkPthread(pthread_cond_init(condition, &conditionAttributes), "pthread_cond_init")
        checkPthread(pthread_condattr_destroy(&conditionAttributes), "pthread_condattr_destroy")
    }

    deinit {
        checkPthread(pthread_cond_destroy(condition), "pthread_cond_destroy")
        condition.deallocate()
        checkPthread(pthread_mutex_destroy(mutex), "pthread_mutex_destroy")
        mutex.deallocate()
    }

    @inlinable
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lockMutex()
        defer { unlockMutex() }
        return try body(&value)
    }

    /// Waits, under the lock, until `ready` is true of the value (checked first, and again on
    /// each `signal`), then runs `body` still under it. `beforeEachWait` runs under the lock
    /// before each wait (tests: to see that a thread waits).
    package func withLock<Result>(
        waitingUntil ready: (Value) -> Bool, beforeEachWait: () -> Void = {}, _ body: (inout Value) -> Result
    ) -> Result {
        lockMutex()
        defer { unlockMutex() }
        while !ready(value) {
            beforeEachWait()
            checkPthread(pthread_cond_wait(condition, mutex), "pthread_cond_wait")
        }
        return body(&value)
    }

    /// The same, waiting at most until `deadline` (CLOCK_MONOTONIC): `body` then runs whether
    /// `ready` became true or not.
    package func withLock<Result>(
        waitingUntil ready: (Value) -> Bool, deadline: timespec, _ body: (inout Value) -> Result
    ) -> Result {
        lockMutex()
        defer { unlockMutex() }
        var deadline = deadline
        while !ready(value) {
            let result = pthread_cond_timedwait(condition, mutex, &deadline)
            precondition(result == 0 || result == ETIMEDOUT, "pthread_cond_timedwait failed: \(result)")
            if result == ETIMEDOUT { break }
        }
        return body(&value)
    }

    /// Wakes one thread waiting in `withLock(waitingUntil:)`, to look at the value again.
    package func signal() {
        checkPthread(pthread_cond_signal(condition), "pthread_cond_signal")
    }

    @usableFromInline func lockMutex() {
        checkPthread(pthread_mutex_lock(mutex), "pthread_mutex_lock")
    }

    @usableFromInline func unlockMutex() {
        checkPthread(pthread_mutex_unlock(mutex), "pthread_mutex_unlock")
    }
}

/// A mutual-exclusion lock guarding nothing of its own (what it guards is the caller's to
/// say). Copies share the one lock.
package struct Lock: Sendable {
    @usableFromInline let base = LockedValue(())

    package init() {}

    package func lock() { base.lockMutex() }

    package func unlock() { base.unlockMutex() }

    @inlinable
    package func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        base.lockMutex()
        defer { base.unlockMutex() }
        return try body()
    }
}

/// Stops the process on a pthread call's failure: each is a misuse (a lock not held, one held
/// twice) or a resource gone, and carrying on would deadlock or corrupt what the lock guards.
private func checkPthread(_ result: Int32, _ call: StaticString) {
    precondition(result == 0, "\(call) failed: \(result)")
}
