public enum DaemonInfo {
    public static let name = "datasourced"
    public static let version = "0.2.0"
    /// The version of Protocol.md (and Protocol/openrpc.json) this daemon speaks: the minor
    /// number grows with additive changes, the major one with changes that break clients.
    public static let protocolVersion = "1.4"
}
