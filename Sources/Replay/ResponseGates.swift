import Dispatch
import Basics

/// Named gates for fixture routes with `hold`: a held response is sent only once a
/// transcript's `release` step opens its gate. A recorded session releases each response
/// where it arrived in the recording, so the replayed daemon sees its HTTP completions in
/// the recorded order relative to the client's messages, however fast the fixture server is.
final class ResponseGates: Sendable {
    private struct State {
        var opened: Set<String> = []
        /// What to run when a gate opens (a held response to send).
        var pending: [String: [@Sendable () -> Void]] = [:]
        /// Held routes a request has claimed.
        var requested: Set<String> = []
        /// Whoever waits for a held route to be requested.
        var requestWaiters: [String: DispatchSemaphore] = [:]
    }

    private let state = LockedValue(State())

    /// Runs `action` once the gate `name` is open: now if it is, else when it opens.
    func whenOpen(_ name: String, _ action: @escaping @Sendable () -> Void) {
        let isOpen = state.withLock { state in
            if state.opened.contains(name) { return true }
            state.pending[name, default: []].append(action)
            return false
        }
        if isOpen { action() }
    }

    func open(_ name: String) {
        let actions = state.withLock { state in
            state.opened.insert(name)
            return state.pending.removeValue(forKey: name) ?? []
        }
        actions.forEach { $0() }
    }

    /// A request claimed the route held under `name`.
    func noteRequested(_ name: String) {
        let waiter = state.withLock { state in
            state.requested.insert(name)
            return state.requestWaiters[name]
        }
        waiter?.signal()
    }

    /// Waits until a request claims the route held under `name`; false after `milliseconds`.
    func waitUntilRequested(_ name: String, milliseconds: Int) -> Bool {
        let waiter = state.withLock { state -> DispatchSemaphore? in
            if state.requested.contains(name) { return nil }
            let semaphore = state.requestWaiters[name] ?? DispatchSemaphore(value: 0)
            state.requestWaiters[name] = semaphore
            return semaphore
        }
        guard let waiter else { return true }
        guard waiter.wait(timeout: .now() + .milliseconds(milliseconds)) == .success else { return false }
        waiter.signal()  // for anyone else waiting on the same name
        return true
    }
}
