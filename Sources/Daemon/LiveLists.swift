import Basics
import DataSources
import Dispatch
import JSONRPC

/// One timer per source, each due event naming the source and the timer's generation:
/// live lists' refreshes (never while the source loads, later after failures) and
/// `updateSource`'s debounced loads. Timers go with the source, `shutdown` and end of input.
final class SourceTimers {
    private struct Armed {
        let timer: DispatchSourceTimer
        let generation: Int
    }
    private var armed: [String: Armed] = [:]
    private var generation = 0
    private let mailbox: Mailbox<DaemonEvent>
    private let due: @Sendable (_ source: String, _ generation: Int) -> DaemonEvent
    static let longestDelaySeconds = 7 * 86_400.0

    init(mailbox: Mailbox<DaemonEvent>, due: @escaping @Sendable (_ source: String, _ generation: Int) -> DaemonEvent) {
        self.mailbox = mailbox
        self.due = due
    }

    /// Arms (or re-arms) `source`'s timer for `seconds` from now; returns its generation,
    /// which the due event carries so that a timer replaced meanwhile is recognised.
    func arm(_ source: String, after seconds: Double) {
        disarm(source)
        generation += 1
        let generation = self.generation, mailbox = self.mailbox, due = self.due
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + .milliseconds(Int(min(max(seconds, 0), Self.longestDelaySeconds) * 1000)))
        timer.setEventHandler { mailbox.post(due(source, generation)) }
        armed[source] = Armed(timer: timer, generation: generation)
        timer.resume()
    }

    /// Whether a due event is the one the source's current timer posted.
    func isCurrent(_ source: String, generation: Int) -> Bool {
        armed[source]?.generation == generation
    }

    func disarm(_ source: String) {
        armed.removeValue(forKey: source)?.timer.cancel()
    }

    func disarmAll() {
        for entry in armed.values { entry.timer.cancel() }
        armed.removeAll()
    }
}

extension Daemon {
    /// The delay before a live list's next refresh: the interval, doubled per failure in a row
    /// (up to an hour, or the interval when it is longer), at least what a server's
    /// `Retry-After` asked, give or take a tenth so that many lists do not refresh in step.
    static func refreshDelay(_ schedule: RefreshSchedule, jitter: Double) -> Double {
        let backoff = schedule.intervalSeconds * Double(1 << min(schedule.consecutiveFailures, 12))
        var delay = min(backoff, max(schedule.intervalSeconds, 3600))
        if let retryAfter = schedule.lastError?.retryAfterSeconds { delay = max(delay, retryAfter) }
        // A week at most, whatever a server's Retry-After says.
        return min(delay * (1 + 0.1 * min(max(jitter, -1), 1)), SourceTimers.longestDelaySeconds)
    }

    /// Starts, changes or stops (nil) `source`'s refreshes.
    func setRefreshInterval(_ seconds: Double?, of source: RemoteCollection) {
        refreshTimers.disarm(source.name)
        guard let seconds else {
            source.refreshSchedule = nil
            return
        }
        source.refreshSchedule = RefreshSchedule(intervalSeconds: seconds)
        scheduleRefresh(of: source)
    }

    private func scheduleRefresh(of source: RemoteCollection) {
        guard var schedule = source.refreshSchedule, lifecycle != .shutDown else { return }
        let delay = Daemon.refreshDelay(schedule, jitter: Double.random(in: -1...1))
        schedule.nextRefreshAt = WallClock.secondsSince1970() + delay
        source.refreshSchedule = schedule
        refreshTimers.arm(source.name, after: delay)
    }

    /// A refresh timer fired: refresh, unless the source is loading (then wait another interval).
    func refreshDue(_ name: String, generation: Int) {
        guard refreshTimers.isCurrent(name, generation: generation) else { return }
        refreshTimers.disarm(name)
        guard let source = try? registry.source(named: name) as? RemoteCollection, source.refreshSchedule != nil else { return }
        let started = source.refresh { [weak self, weak source] outcome in
            guard let self, let source, var schedule = source.refreshSchedule else { return }
            self.logger.debug("refreshed", metadata: ["source": "\(source.name)", "outcome": "\(outcome)"])
            switch outcome {
            case .unchanged, .changed:
                schedule.consecutiveFailures = 0
                schedule.lastError = nil
            case .failed(let error):
                schedule.consecutiveFailures += 1
                schedule.lastError = error
                self.logger.notice("refresh failed", metadata: ["source": "\(source.name)", "error": "\(error.message)"])
            case .superseded:
                break
            }
            source.refreshSchedule = schedule
            self.scheduleRefresh(of: source)
        }
        logger.debug(
            started ? "refreshing" : "refresh skipped: a load or a refresh is in flight, or nothing is loaded",
            metadata: ["source": "\(name)"])
        if !started { scheduleRefresh(of: source) }
    }
}
