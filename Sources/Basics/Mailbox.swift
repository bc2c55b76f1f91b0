#if canImport(Glibc)
import Glibc
#endif

/// An unbounded, blocking, many-producer queue. The daemon's one mailbox: the stdin
/// reader, timers and network completions push; the main loop takes everything queued
/// at once, so a burst of pipelined requests costs one wake-up, not one per message.
///
/// `Sendable` as the compiler checks it: its state is one `LockedValue`, and its items are.
package final class Mailbox<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        /// Some thread holds the role of the one that handles the items (`claimAll`,
        /// `claimOrPost`).
        var claimed = false
        /// `release(waking: true)` asked the waiting consumer to look, items or not.
        var woken = false

        // Handed over whole: keeping the capacity would copy-allocate a burst's peak size
        // on every take, for good.
        mutating func takeQueued() -> [Element] {
            var taken: [Element] = []
            swap(&taken, &items)
            return taken
        }
    }

    private let state = LockedValue(State())

    /// Tests: sees each role step on the thread that takes it, and may hold that thread there
    /// to order it against another one, except at `consumerWaits` (the lock is held: it may
    /// only note the step, and must not touch this mailbox).
    package let roleSteps: (@Sendable (RoleStep) -> Void)?

    package init(roleSteps: (@Sendable (RoleStep) -> Void)? = nil) {
        self.roleSteps = roleSteps
    }

    package func post(_ item: Element) {
        state.withLock {
            $0.items.append(item)
            if $0.items.count == 1 { state.signal() }
        }
    }

    /// Posts `item`, or folds it into the last item still queued. A mailbox of counts that
    /// is seldom taken from (the writer's tally of frames written, read only by a flush)
    /// then holds one count, where `post` would keep one per batch for good.
    package func post(_ item: Element, foldingInto fold: (inout Element, Element) -> Void) {
        state.withLock {
            if $0.items.isEmpty {
                $0.items.append(item)
                state.signal()
            } else {
                fold(&$0.items[$0.items.count - 1], item)
            }
        }
    }

    /// How many items are queued now (for tests: a snapshot that may change at once).
    package var queuedCount: Int {
        state.withLock { $0.items.count }
    }

    package func post(contentsOf newItems: [Element]) {
        guard !newItems.isEmpty else { return }
        state.withLock {
            let wasEmpty = $0.items.isEmpty
            $0.items.append(contentsOf: newItems)
            if wasEmpty { state.signal() }
        }
    }

    /// Everything queued, in order; blocks while nothing is.
    package func takeAll() -> [Element] {
        state.withLock(waitingUntil: { !$0.items.isEmpty }) { $0.takeQueued() }
    }

    /// Everything queued, waiting at most `milliseconds` for the first item.
    package func takeAll(waitingAtMost milliseconds: Int) -> [Element] {
        guard milliseconds > 0 else { return state.withLock { $0.takeQueued() } }
        let deadline = MonotonicClock.deadline(afterMilliseconds: milliseconds)
        return state.withLock(waitingUntil: { !$0.items.isEmpty }, deadline: deadline) { $0.takeQueued() }
    }

    // MARK: The consumer's role, for a mailbox whose items a producer may handle itself

    /// Blocks until items are queued (or `release(waking:)` says to look) and no other thread
    /// holds the role; then takes the role and everything queued. Hand the role back with
    /// `release`.
    package func claimAll() -> [Element] {
        roleSteps?(.consumerWillClaim)
        return state.withLock(
            waitingUntil: { (!$0.items.isEmpty || $0.woken) && !$0.claimed },
            beforeEachWait: { roleSteps?(.consumerWaits) }
        ) {
            $0.woken = false
            $0.claimed = true
            return $0.takeQueued()
        }
    }

    /// When no thread holds the role: takes it, and returns everything queued followed by
    /// `newItems`, for the caller to handle itself (then `release`). Otherwise queues
    /// `newItems` for the thread that holds it and returns nil. A producer that can handle
    /// what it brings (the stdin reader) then saves the wake-up of another thread.
    package func claimOrPost(contentsOf newItems: [Element]) -> [Element]? {
        let taken: [Element]? = state.withLock {
            if $0.claimed {
                let wasEmpty = $0.items.isEmpty
                $0.items.append(contentsOf: newItems)
                if wasEmpty, !$0.items.isEmpty { state.signal() }
                return nil
            }
            $0.claimed = true
            var taken = $0.takeQueued()
            taken.append(contentsOf: newItems)
            return taken
        }
        if taken != nil { roleSteps?(.producerClaimed) }
        return taken
    }

    /// Hands the role back. Items queued meanwhile (or `waking`) wake the thread waiting in
    /// `claimAll`.
    package func release(waking: Bool = false) {
        state.withLock {
            $0.claimed = false
            if waking { $0.woken = true }
            // A wake-up still pending is signalled again: the consumer may have woken to it,
            // found the role taken meanwhile by a producer, and gone back to waiting.
            if !$0.items.isEmpty || $0.woken { state.signal() }
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
}

/// CLOCK_MONOTONIC readings, the clock the mailbox's timed waits use.
package enum MonotonicClock {
    package static func milliseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now.tv_sec * 1000 + now.tv_nsec / 1_000_000
    }

    package static func deadline(afterMilliseconds milliseconds: Int) -> timespec {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let nanoseconds = deadline.tv_nsec + milliseconds % 1000 * 1_000_000
        deadline.tv_sec += milliseconds / 1000 + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        return deadline
    }
}
