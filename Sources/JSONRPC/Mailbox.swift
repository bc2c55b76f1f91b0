#if canImport(Glibc)
import Glibc
#endif

/// An unbounded, blocking, many-producer queue. The daemon's one mailbox: the stdin
/// reader, timers and network completions push; the main loop takes everything queued
/// at once, so a burst of pipelined requests costs one wake-up, not one per message.
public final class Mailbox<Element: Sendable>: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var items: [Element] = []

    public init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&condition, nil)
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    public func post(_ item: Element) {
        pthread_mutex_lock(&mutex)
        items.append(item)
        if items.count == 1 { pthread_cond_signal(&condition) }
        pthread_mutex_unlock(&mutex)
    }

    public func post(contentsOf newItems: [Element]) {
        guard !newItems.isEmpty else { return }
        pthread_mutex_lock(&mutex)
        let wasEmpty = items.isEmpty
        items.append(contentsOf: newItems)
        if wasEmpty { pthread_cond_signal(&condition) }
        pthread_mutex_unlock(&mutex)
    }

    /// Everything queued, in order; blocks while nothing is.
    public func takeAll() -> [Element] {
        pthread_mutex_lock(&mutex)
        while items.isEmpty { pthread_cond_wait(&condition, &mutex) }
        let taken = items
        items.removeAll(keepingCapacity: true)
        pthread_mutex_unlock(&mutex)
        return taken
    }

    /// Everything queued, waiting at most `milliseconds` for the first item.
    public func takeAll(waitingAtMost milliseconds: Int) -> [Element] {
        pthread_mutex_lock(&mutex)
        if items.isEmpty {
            var deadline = timespec()
            clock_gettime(CLOCK_REALTIME, &deadline)
            let nanoseconds = deadline.tv_nsec + milliseconds % 1000 * 1_000_000
            deadline.tv_sec += milliseconds / 1000 + nanoseconds / 1_000_000_000
            deadline.tv_nsec = nanoseconds % 1_000_000_000
            while items.isEmpty {
                if pthread_cond_timedwait(&condition, &mutex, &deadline) == ETIMEDOUT { break }
            }
        }
        let taken = items
        items.removeAll(keepingCapacity: true)
        pthread_mutex_unlock(&mutex)
        return taken
    }
}

/// Starts a detached thread.
public func startThread(_ body: @escaping @Sendable () -> Void) {
    final class Box { let body: @Sendable () -> Void; init(_ body: @escaping @Sendable () -> Void) { self.body = body } }
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(&thread, nil, { raw in
        let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
        box.body()
        return nil
    }, box)
    precondition(result == 0, "pthread_create failed: \(result)")
    pthread_detach(thread)
}
