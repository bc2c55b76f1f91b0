#if canImport(Glibc)
import Glibc
#endif
import CSystemShims
import Basics

/// An unbounded, blocking, many-producer queue. The daemon's one mailbox: the stdin
/// reader, timers and network completions push; the main loop takes everything queued
/// at once, so a burst of pipelined requests costs one wake-up, not one per message.
package final class Mailbox<Element: Sendable>: @unchecked Sendable {
    private let lock = Lock()
    private let condition = Condition()
    // Only touched under `lock`.
    private var items: [Element] = []

    package init() {}

    package func post(_ item: Element) {
        lock.withLock {
            items.append(item)
            if items.count == 1 { condition.signal() }
        }
    }

    /// Posts `item`, or folds it into the last item still queued. A mailbox of counts that
    /// is seldom taken from (the writer's tally of frames written, read only by a flush)
    /// then holds one count, where `post` would keep one per batch for good.
    package func post(_ item: Element, foldingInto fold: (inout Element, Element) -> Void) {
        lock.withLock {
            if items.isEmpty {
                items.append(item)
                condition.signal()
            } else {
                fold(&items[items.count - 1], item)
            }
        }
    }

    /// How many items are queued now (for tests: a snapshot that may change at once).
    var queuedCount: Int {
        lock.withLock { items.count }
    }

    package func post(contentsOf newItems: [Element]) {
        guard !newItems.isEmpty else { return }
        lock.withLock {
            let wasEmpty = items.isEmpty
            items.append(contentsOf: newItems)
            if wasEmpty { condition.signal() }
        }
    }

    /// Everything queued, in order; blocks while nothing is.
    package func takeAll() -> [Element] {
        lock.withLock {
            while items.isEmpty { condition.wait(releasing: lock) }
            return takeQueued()
        }
    }

    /// Everything queued, waiting at most `milliseconds` for the first item.
    package func takeAll(waitingAtMost milliseconds: Int) -> [Element] {
        lock.withLock {
            if items.isEmpty, milliseconds > 0 {
                let deadline = MonotonicClock.deadline(afterMilliseconds: milliseconds)
                while items.isEmpty {
                    if !condition.wait(releasing: lock, untilMonotonic: deadline) { break }
                }
            }
            return takeQueued()
        }
    }

    // MARK: The consumer's role, for a mailbox whose items a producer may handle itself

    /// Some thread holds the role of the one that handles the items (`claimAll`,
    /// `claimOrPost`). Only touched under `lock`.
    private var claimed = false
    /// `release(waking: true)` asked the waiting consumer to look, items or not.
    private var woken = false

    /// Blocks until items are queued (or `release(waking:)` says to look) and no other thread
    /// holds the role; then takes the role and everything queued. Hand the role back with
    /// `release`.
    package func claimAll() -> [Element] {
        roleSteps?(.consumerWillClaim)
        return lock.withLock {
            while (items.isEmpty && !woken) || claimed {
                roleSteps?(.consumerWaits)
                condition.wait(releasing: lock)
            }
            woken = false
            claimed = true
            return takeQueued()
        }
    }

    /// When no thread holds the role: takes it, and returns everything queued followed by
    /// `newItems`, for the caller to handle itself (then `release`). Otherwise queues
    /// `newItems` for the thread that holds it and returns nil. A producer that can handle
    /// what it brings (the stdin reader) then saves the wake-up of another thread.
    package func claimOrPost(contentsOf newItems: [Element]) -> [Element]? {
        let taken: [Element]? = lock.withLock {
            if claimed {
                let wasEmpty = items.isEmpty
                items.append(contentsOf: newItems)
                if wasEmpty, !items.isEmpty { condition.signal() }
                return nil
            }
            claimed = true
            var taken = takeQueued()
            taken.append(contentsOf: newItems)
            return taken
        }
        if taken != nil { roleSteps?(.producerClaimed) }
        return taken
    }

    /// Hands the role back. Items queued meanwhile (or `waking`) wake the thread waiting in
    /// `claimAll`.
    package func release(waking: Bool = false) {
        lock.withLock {
            claimed = false
            if waking { woken = true }
            // A wake-up still pending is signalled again: the consumer may have woken to it,
            // found the role taken meanwhile by a producer, and gone back to waiting.
            if !items.isEmpty || woken { condition.signal() }
        }
    }

    /// The steps of the role whose order across threads decides what a test sees.
    package enum RoleStep: Sendable {
        /// `claimAll` was called; the lock is not taken yet.
        case consumerWillClaim
        /// `claimAll` is about to wait, under the lock (the role is held, or nothing is queued).
        case consumerWaits
        /// `claimOrPost` gave its caller the role; the lock is released.
        case producerClaimed
    }

    /// Tests: sees each role step on the thread that takes it, and may hold that thread there
    /// to order it against another one, except at `consumerWaits` (the lock is held: it may
    /// only note the step, and must not touch this mailbox). Set before the threads start.
    package var roleSteps: (@Sendable (RoleStep) -> Void)?

    /// Called under `lock`.
    private func takeQueued() -> [Element] {
        // Handed over whole: keeping the capacity would copy-allocate a burst's peak size
        // on every take, for good.
        var taken: [Element] = []
        swap(&taken, &items)
        return taken
    }
}

/// CLOCK_MONOTONIC readings, the clock the mailbox's timed waits use.
package enum MonotonicClock {
    package static func milliseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now.tv_sec * 1000 + now.tv_nsec / 1_000_000
    }

    static func deadline(afterMilliseconds milliseconds: Int) -> timespec {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let nanoseconds = deadline.tv_nsec + milliseconds % 1000 * 1_000_000
        deadline.tv_sec += milliseconds / 1000 + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        return deadline
    }
}

/// Starts a detached thread. `name` (at most 15 bytes, the kernel's limit) is what `top -H`,
/// gdb and /proc/PID/task/*/comm show; the thread has it when this returns.
package func startThread(named name: String? = nil, _ body: @escaping @Sendable () -> Void) {
    final class Box {
        let name: String?
        let body: @Sendable () -> Void
        let named = Mailbox<Bool>()
        init(_ name: String?, _ body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
    let made = Box(name, body)
    let box = Unmanaged.passRetained(made).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(
        &thread, nil,
        { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            // Named by itself (prctl), not by its creator: naming another thread writes
            // /proc/self/task/TID/comm, and each /proc entry so made costs the parent that
            // reaps the process about a millisecond (issue 33: 3-4 ms of a daemon's 3 threads).
            if let name = box.name {
                _ = cshims_name_current_thread(name)
                box.named.post(true)
            }
            box.body()
            return nil
        }, box)
    precondition(result == 0, "pthread_create failed: \(result)")
    if name != nil { _ = made.named.takeAll() }
    pthread_detach(thread)
}

/// Names the calling thread (truncated to the kernel's 15 bytes).
package func nameCurrentThread(_ name: String) {
    _ = cshims_name_current_thread(name)
}
