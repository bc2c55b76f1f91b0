#if canImport(Glibc)
import Glibc
#endif
import CSystemShims

/// A thread of our own (`startJoinableThread`): `join` waits for it to end. Join it exactly
/// once; a thread never joined keeps its stack until the process ends.
package struct JoinableThread: Sendable {
    private let thread: pthread_t

    fileprivate init(_ thread: pthread_t) { self.thread = thread }

    /// Lets the thread end without anyone joining it.
    fileprivate func detach() {
        let result = pthread_detach(thread)
        precondition(result == 0, "pthread_detach failed: \(result)")
    }

    /// Waits until the thread's body has returned.
    package func join() {
        let result = pthread_join(thread, nil)
        precondition(result == 0, "pthread_join failed: \(result)")
    }
}

/// Starts a thread that its caller joins. `name` (at most 15 bytes, the kernel's limit) is
/// what `top -H`, gdb and /proc/PID/task/*/comm show; the thread has it when this returns.
package func startJoinableThread(named name: String? = nil, _ body: @escaping @Sendable () -> Void) -> JoinableThread {
    final class Box: Sendable {
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
    return JoinableThread(thread)
}

/// Starts a detached thread (nobody waits for its end), named as `startJoinableThread` says.
package func startThread(named name: String? = nil, _ body: @escaping @Sendable () -> Void) {
    let thread = startJoinableThread(named: name, body)
    thread.detach()
}

/// Names the calling thread (truncated to the kernel's 15 bytes).
package func nameCurrentThread(_ name: String) {
    _ = cshims_name_current_thread(name)
}
