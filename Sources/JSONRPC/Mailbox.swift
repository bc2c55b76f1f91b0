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
/// gdb and /proc/PID/task/*/comm show.
package func startThread(named name: String? = nil, _ body: @escaping @Sendable () -> Void) {
    final class Box {
        let name: String?
        let body: @Sendable () -> Void
        init(_ name: String?, _ body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
    let box = Unmanaged.passRetained(Box(name, body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(
        &thread, nil,
        { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            box.body()
            return nil
        }, box)
    precondition(result == 0, "pthread_create failed: \(result)")
    // Named here, by its creator: when this returns, the thread has its name.
    if let name { _ = cshims_name_thread(thread, name) }
    pthread_detach(thread)
}

/// Names the calling thread (truncated to the kernel's 15 bytes).
package func nameCurrentThread(_ name: String) {
    _ = cshims_name_current_thread(name)
}
