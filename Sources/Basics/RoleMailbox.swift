/// A mailbox whose events are handled, with the state they act on (`Owner`), by whichever
/// thread holds the mailbox's role: the consumer that waits for them (`claimAll`), or a
/// producer that finds the role free (`claimOrPost`) and handles what it brings itself. The
/// owner is reached only inside those calls' bodies, so a non-`Sendable` owner (the daemon)
/// is touched by one thread at a time, whichever it is, and the compiler keeps it from being
/// reached any other way: this is the only `Sendable` path to it.
///
/// Unchecked, and why that is safe: `owner` is read only inside the bodies of
/// `claimAll` and `claimOrPost`, by the thread that holds the role of `mailbox`; one thread at
/// a time holds it, and the mailbox takes and hands it back under its lock, so one holder's
/// accesses happen before the next one's. It is set by `init`, before anyone can claim the
/// role, and emptied by `claimAll` when its body retires the owner, with the role kept by that
/// thread for good.
package final class RoleMailbox<Event: Sendable, Owner: AnyObject>: @unchecked Sendable {
    package let mailbox: Mailbox<Event>
    private var owner: Owner?

    /// `owner` is reached from now on only through the role.
    package init(_ mailbox: Mailbox<Event>, owner: Owner) {
        self.mailbox = mailbox
        self.owner = owner
    }

    /// Waits for events and the role, then handles them: `body` returns true to end, keeping
    /// the role for good (no event is handled after these) and letting go of the owner; false
    /// hands the role back. Returns what `body` returned.
    package func claimAll(_ body: (Owner, [Event]) -> Bool) -> Bool {
        let events = mailbox.claimAll()
        guard let owner else { preconditionFailure("the role was claimed after its owner retired") }
        if body(owner, events) {
            self.owner = nil
            return true
        }
        mailbox.release()
        return false
    }

    /// When no thread holds the role: takes it and hands `body` what was queued followed by
    /// `events`, then hands the role back, waking the consumer when `body` returns true (an
    /// event ended the owner's work: the consumer is to see it). Otherwise queues `events`
    /// for the thread that holds the role.
    package func claimOrPost(contentsOf events: [Event], _ body: (Owner, [Event]) -> Bool) {
        guard let claimed = mailbox.claimOrPost(contentsOf: events) else { return }
        // The role is free only while the owner has not retired (retiring keeps it for good).
        guard let owner else { preconditionFailure("the role was free after its owner retired") }
        let waking = body(owner, claimed)
        mailbox.release(waking: waking)
    }
}
