package enum DaemonInfo {
    package static let name = "datasourced"
    package static let version = "0.2.0"
    /// The version of Protocol.md (and Protocol/openrpc.json) this daemon speaks: the minor
    /// number grows with additive changes, the major one with changes that break clients.
    package static let protocolVersion = "1.10"
}
