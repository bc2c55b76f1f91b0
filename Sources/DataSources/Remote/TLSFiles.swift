/// `remoteConfiguration.tls`: the PEM files a source's HTTPS connections use. Only paths
/// are kept here: the files are read by the HTTP layer when it connects (a renewed
/// certificate is picked up), and their shape is checked when the source is created.
package struct TLSFiles: Sendable, Equatable, Hashable {
    /// Certificates trusted in addition to the system's (or `SSL_CERT_FILE`'s) roots.
    package var caFile: String?
    /// The client certificate (PEM), for servers that ask for one; always with `keyFile`.
    package var certificateFile: String?
    /// The client certificate's private key (PEM, unencrypted).
    package var keyFile: String?

    package init(caFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil) {
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
    }

    package var isEmpty: Bool { caFile == nil && certificateFile == nil && keyFile == nil }
}
