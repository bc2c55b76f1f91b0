#if canImport(Glibc)
import Glibc
#endif
import CSystemShims

/// An unbounded, blocking, many-producer queue. The daemon's one mailbox: the stdin
/// reader, timers and network completions push; the main loop takes everything queued
/// at once, so a burst of pipelined requests costs one wake-up, not one per message.
public final class Mailbox<Element: Sendable>: @unchecked Sendable {
    // A pthread mutex or condition must not move once initialised, and Swift promises no
    // stable address for `&property` of a class: both live in memory allocated for them.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var items: [Element] = []

    public init() {
        pthread_mutex_init(mutex, nil)
        // Timed waits measure the monotonic clock: a wall-clock step (NTP, a user) must not
        // make a wait end early or last for hours.
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    public func post(_ item: Element) {
        pthread_mutex_lock(mutex)
        items.append(item)
        if items.count == 1 { pthread_cond_signal(condition) }
        pthread_mutex_unlock(mutex)
    }

    /// Posts `item`, or folds it into the last item still queued. A mailbox of counts that
    /// is seldom taken from (the writer's tally of frames written, read only by a flush)
    /// then holds one count, where `post` would keep one per batch for good.
    public func post(_ item: Element, foldingInto fold: (inout Element, Element) -> Void) {
        pthread_mutex_lock(mutex)
        if items.isEmpty {
            items.append(item)
            pthread_cond_signal(condition)
        } else {
            fold(&items[items.count - 1], item)
        }
        pthread_mutex_unlock(mutex)
    }

    /// How many items are queued now (for tests: a snapshot that may change at once).
    var queuedCount: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return items.count
    }

    public func post(contentsOf newItems: [Element]) {
        guard !newItems.isEmpty else { return }
        pthread_mutex_lock(mutex)
        let wasEmpty = items.isEmpty
        items.append(contentsOf: newItems)
        if wasEmpty { pthread_cond_signal(condition) }
        pthread_mutex_unlock(mutex)
    }

    /// Everything queued, in order; blocks while nothing is.
    public func takeAll() -> [Element] {
        pthread_mutex_lock(mutex)
        while items.isEmpty { pthread_cond_wait(condition, mutex) }
        // Handed over whole: keeping the capacity would copy-allocate a burst's peak size
        // on every take, for good.
        var taken: [Element] = []
        swap(&taken, &items)
        pthread_mutex_unlock(mutex)
        return taken
    }

    /// Everything queued, waiting at most `milliseconds` for the first item.
    public func takeAll(waitingAtMost milliseconds: Int) -> [Element] {
        pthread_mutex_lock(mutex)
        if items.isEmpty, milliseconds > 0 {
            var deadline = MonotonicClock.deadline(afterMilliseconds: milliseconds)
            while items.isEmpty {
                if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { break }
            }
        }
        // Handed over whole: keeping the capacity would copy-allocate a burst's peak size
        // on every take, for good.
        var taken: [Element] = []
        swap(&taken, &items)
        pthread_mutex_unlock(mutex)
        return taken
    }
}

/// CLOCK_MONOTONIC readings, the clock the mailbox's timed waits use.
public enum MonotonicClock {
    public static func milliseconds() -> Int {
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
public func startThread(named name: String? = nil, _ body: @escaping @Sendable () -> Void) {
    final class Box {
        let name: String?
        let body: @Sendable () -> Void
        init(_ name: String?, _ body: @escaping @Sendable () -> Void) { self.name = name; self.body = body }
    }
    let box = Unmanaged.passRetained(Box(name, body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(&thread, nil, { raw in
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
public func nameCurrentThread(_ name: String) {
    _ = cshims_name_current_thread(name)
}
