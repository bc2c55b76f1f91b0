import JSONRPC

/// Sees what the daemon's main loop handles and what it writes, in that order, on the main
/// loop's thread: what `--record` needs to write a session down as it happens.
package protocol DaemonObserver: AnyObject {
    /// Called before the main loop handles `event` (a client's payload, an HTTP completion...).
    func daemonWillHandle(_ event: DaemonEvent)
    /// Called once `event` is handled: everything it made the daemon say has been sent.
    func daemonDidHandle(_ event: DaemonEvent)
    /// Called as `outgoing` is handed to the transport, before it is written.
    func daemonWillSend(_ outgoing: Outgoing)
}
