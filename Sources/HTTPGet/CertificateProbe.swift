#if canImport(Glibc)
import Glibc
#endif
import DataSources
import NIOCore
import NIOPosix
import NIOSSL

/// Says why a server's certificate was refused, in words: expired on which date, issued by
/// which authority nobody trusts, valid for which host names.
///
/// AsyncHTTPClient reports only that verification failed (BoringSSL's
/// `CERTIFICATE_VERIFY_FAILED`, or NIOSSL's failed host name check) and keeps the
/// certificates to itself. So, after such a failure, and only then, the probe connects to
/// the server once more and starts a handshake whose verification callback takes the
/// certificates the server presents and refuses them: the handshake never completes and
/// nothing is sent over it. The request has already failed; the probe only words the
/// failure, and when it cannot (the server is gone, a proxy stands between), the message
/// says what is known without the details.
enum CertificateProbe {
    /// What was refused.
    enum Refusal: Sendable {
        /// The chain did not verify: an unknown issuer, or a certificate out of its dates.
        case untrusted
        /// The chain verified, but names other hosts.
        case wrongHost
    }

    /// The refusal `error` reports, if it is one.
    static func refusal(_ error: Error) -> Refusal? {
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname { return .wrongHost }
        let failure: BoringSSLError
        switch error {
        case NIOSSLError.handshakeFailed(let error): failure = error
        case let error as BoringSSLError: failure = error
        default: return nil
        }
        return FailureWording.reasons(failure).contains("CERTIFICATE_VERIFY_FAILED") ? .untrusted : nil
    }

    /// The longest a probe may take, within the exchange's own deadline.
    static let maximumWait = TimeAmount.seconds(10)

    /// Calls `completion` once, on `loop`, with the error to report.
    static func explain(
        _ refusal: Refusal, host: String, port: Int, target: String, on loop: any EventLoop, deadline: NIODeadline,
        completion: @escaping @Sendable (FetchError) -> Void
    ) {
        guard let context = probeContext else {
            return completion(wording(refusal, host: host, target: target, chain: nil))
        }
        // Completed once by whichever comes first: the certificates, a failed connection, a
        // closed one, or the timeout (a promise completed again ignores it).
        let chain = loop.makePromise(of: [NIOSSLCertificate].self)
        let wait = min(deadline, .now() + maximumWait)
        let timeout = loop.scheduleTask(deadline: wait) { chain.fail(ChannelError.connectTimeout(maximumWait)) }
        // SNI takes a name, never an address (as AsyncHTTPClient sends it).
        let serverName = isAddress(host) ? nil : host
        let connection = ClientBootstrap(group: loop)
            .connectTimeout(.seconds(5))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = try NIOSSLClientHandler(
                        context: context, serverHostname: serverName,
                        customVerificationCallback: { certificates, verdict in
                            chain.succeed(certificates)
                            verdict.succeed(.failed)
                        })
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
            .connect(host: host, port: port)
        connection.whenFailure { chain.fail($0) }
        connection.whenSuccess { channel in
            channel.closeFuture.whenComplete { _ in chain.fail(ChannelError.alreadyClosed) }
        }
        chain.futureResult.whenComplete { result in
            timeout.cancel()
            connection.whenSuccess { $0.close(promise: nil) }
            completion(wording(refusal, host: host, target: target, chain: try? result.get()))
        }
    }

    /// Verification is the callback's, so no roots are loaded (the system store's would be, by default).
    private static let probeContext: NIOSSLContext? = {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates([])
        return try? NIOSSLContext(configuration: configuration)
    }()

    static func isAddress(_ host: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    static let trustAdvice = "to trust it, name that authority's certificate (PEM) in remoteConfiguration.tls.caFile or SSL_CERT_FILE"

    /// The message for `refusal`, from the certificates the server presents (leaf first),
    /// when the probe got them.
    ///
    /// For an untrusted chain, a certificate out of its dates is named before an unknown
    /// issuer (BoringSSL checks the issuer first, but does not say which it found): an
    /// expired certificate is the server's to renew whoever issued it, and once renewed, an
    /// issuer still unknown is reported as such.
    static func wording(
        _ refusal: Refusal, host: String, target: String, chain: [NIOSSLCertificate]?, now: time_t = time(nil)
    ) -> FetchError {
        let subject = "the certificate of \(target)"
        guard let chain, let leaf = chain.first else {
            switch refusal {
            case .untrusted:
                return FetchError(
                    kind: .tls,
                    message:
                        "\(subject) could not be verified: its issuer is not a trusted certificate authority, or it is out of its dates; \(trustAdvice)"
                )
            case .wrongHost:
                return FetchError(kind: .tls, message: "\(subject) is not valid for the host name \"\(host)\"")
            }
        }
        switch refusal {
        case .wrongHost:
            let names = hostNames(of: leaf)
            let valid = names.isEmpty ? "it names no host" : "it is valid for \(listed(names))"
            return FetchError(kind: .tls, message: "\(subject) is not valid for the host name \"\(host)\": \(valid)")
        case .untrusted:
            if leaf.notValidAfter < now {
                return FetchError(kind: .tls, message: "\(subject) expired on \(date(leaf.notValidAfter))")
            }
            if leaf.notValidBefore > now {
                return FetchError(kind: .tls, message: "\(subject) is not valid before \(date(leaf.notValidBefore))")
            }
            for issuer in chain.dropFirst() where issuer.notValidAfter < now {
                return FetchError(
                    kind: .tls,
                    message:
                        "\(subject) is issued by \(quoted(name(issuer.subjectName))), whose own certificate expired on \(date(issuer.notValidAfter))"
                )
            }
            let issuer = name(leaf.issuerName)
            if leaf.issuerName == leaf.subjectName {
                return FetchError(
                    kind: .tls,
                    message:
                        "\(subject) is self-signed (\(quoted(issuer))) and not trusted: to trust it, name it (PEM) in remoteConfiguration.tls.caFile or SSL_CERT_FILE"
                )
            }
            return FetchError(
                kind: .tls,
                message: "\(subject) is issued by \(quoted(issuer)), which is not a trusted certificate authority: \(trustAdvice)")
        }
    }

    /// The DNS names and IP addresses a certificate is valid for; its subject's common name
    /// when it has none (the last resort of older clients, not of NIOSSL).
    static func hostNames(of certificate: NIOSSLCertificate) -> [String] {
        var names: [String] = []
        for name in certificate._subjectAlternativeNames() {
            switch name.nameType {
            case .dnsName:
                names.append(printable(Array(name.contents)))
            case .ipAddress:
                let bytes = Array(name.contents)
                if bytes.count == 4 {
                    names.append(bytes.map(String.init).joined(separator: "."))
                } else if bytes.count == 16 {
                    var address = in6_addr()
                    withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes) }
                    var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
                    if inet_ntop(AF_INET6, &address, &text, socklen_t(text.count)) != nil {
                        names.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
                    }
                }
            default:
                break
            }
        }
        return names
    }

    /// A certificate's name as people read it: its common name, else its organization.
    static func name(_ parts: [SSLCertificateName]) -> String {
        let chosen = parts.first { $0.type == .commonName } ?? parts.first { $0.type == .organization }
        return chosen.map { printable(Array($0.value.utf8)) } ?? "an unnamed authority"
    }

    private static func quoted(_ text: String) -> String {
        text == "an unnamed authority" ? text : "\"\(text)\""
    }

    /// At most ten names: a certificate may carry hundreds.
    static func listed(_ names: [String]) -> String {
        let shown = names.prefix(10).joined(separator: ", ")
        return names.count > 10 ? "\(shown) and \(names.count - 10) more" : shown
    }

    /// Text from a certificate is the server's: control characters are dropped, and the length bounded.
    private static func printable(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.prefix(200), as: UTF8.self).filter { !$0.isASCII || ($0.asciiValue! >= 0x20 && $0.asciiValue! != 0x7F) }
    }

    /// `2021-01-01 00:00:00 UTC`.
    static func date(_ seconds: time_t) -> String {
        var time = seconds, parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return "an unreadable date" }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return
            "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) UTC"
    }
}
