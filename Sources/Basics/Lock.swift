#if canImport(Glibc)
import Glibc
#endif

// The package's one lock idiom, after SwiftNIO's NIOLock: a pthread mutex whose every call's
// return code is checked, and which debug builds make error-checking, so a thread that locks
// twice or unlocks what it does not hold stops at once instead of deadlocking or corrupting.
// A pthread mutex rather than `Synchronization.Mutex`, whose futexes ThreadSanitizer cannot
// see (every access under it would be reported as a race). No SwiftNIO: the core (JSONKit,
// JSONRPC, DataSources, Daemon) builds and fuzzes without it.

/// A mutual-exclusion lock. A class: a pthread mutex must not move once initialised, and it
/// lives in memory allocated for it, which Swift's `&property` does not promise.
package final class Lock: @unchecked Sendable {
    fileprivate let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    package init() {
        var attributes = pthread_mutexattr_t()
        check(pthread_mutexattr_init(&attributes), "pthread_mutexattr_init")
        #if DEBUG
        check(pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK)), "pthread_mutexattr_settype")
        #endif
        check(pthread_mutex_init(mutex, &attributes), "pthread_mutex_init")
        check(pthread_mutexattr_destroy(&attributes), "pthread_mutexattr_destroy")
    }

    deinit {
        check(pthread_mutex_destroy(mutex), "pthread_mutex_destroy")
        mutex.deallocate()
    }

    package func lock() {
        check(pthread_mutex_lock(mutex), "pthread_mutex_lock")
    }

    package func unlock() {
        check(pthread_mutex_unlock(mutex), "pthread_mutex_unlock")
    }

    @inlinable
    package func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A value only reached under its own lock.
package final class LockedValue<Value>: @unchecked Sendable {
    @usableFromInline let lock = Lock()
    @usableFromInline var value: Value

    package init(_ value: Value) { self.value = value }

    @inlinable
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// A condition variable waited on under a `Lock`. Timed waits measure the monotonic clock: a
/// wall-clock step (NTP, a user) must not make a wait end early or last for hours.
package final class Condition: @unchecked Sendable {
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init() {
        var attributes = pthread_condattr_t()
        check(pthread_condattr_init(&attributes), "pthread_condattr_init")
        check(pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC), "pthread_condattr_setclock")
        check(pthread_cond_init(condition, &attributes), "pthread_cond_init")
        check(pthread_condattr_destroy(&attributes), "pthread_condattr_destroy")
    }

    deinit {
        check(pthread_cond_destroy(condition), "pthread_cond_destroy")
        condition.deallocate()
    }

    /// Waits for a signal; `lock` must be held, and is held again on return.
    package func wait(releasing lock: Lock) {
        check(pthread_cond_wait(condition, lock.mutex), "pthread_cond_wait")
    }

    /// Waits for a signal until `deadline` (CLOCK_MONOTONIC); false when the time ran out.
    package func wait(releasing lock: Lock, untilMonotonic deadline: timespec) -> Bool {
        var deadline = deadline
        let result = pthread_cond_timedwait(condition, lock.mutex, &deadline)
        precondition(result == 0 || result == ETIMEDOUT, "pthread_cond_timedwait failed: \(result)")
        return result == 0
    }

    package func signal() {
        check(pthread_cond_signal(condition), "pthread_cond_signal")
    }
}

/// Stops the process on a pthread call's failure: each is a misuse (a lock not held, one held
/// twice) or a resource gone, and carrying on would deadlock or corrupt what the lock guards.
private func check(_ result: Int32, _ call: StaticString) {
    precondition(result == 0, "\(call) failed: \(result)")
}
