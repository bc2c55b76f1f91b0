/// `remoteConfiguration.tls`: the PEM files a source's HTTPS connections use. Only paths
/// are kept here: the files are read by the HTTP layer when it connects (a renewed
/// certificate is picked up), and their shape is checked when the source is created.
public struct TLSFiles: Sendable, Equatable, Hashable {
    /// Certificates trusted in addition to the system's (or `SSL_CERT_FILE`'s) roots.
    public var caFile: String?
    /// The client certificate (PEM), for servers that ask for one; always with `keyFile`.
    public var certificateFile: String?
    /// The client certificate's private key (PEM, unencrypted).
    public var keyFile: String?

    public init(caFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil) {
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
    }

    public var isEmpty: Bool { caFile == nil && certificateFile == nil && keyFile == nil }
}
