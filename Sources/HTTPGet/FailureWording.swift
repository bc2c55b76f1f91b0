#if canImport(Glibc)
import Glibc
#endif
import AsyncHTTPClient
import DataSources
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// Why a GET failed, in words a person can act on. Every message of a failure on the wire
/// names the server's host and port; none carries a Swift type's name, a source path or a
/// library's error number (what `"\(error)"` gives for most of the errors below), so no
/// error is ever shown as its description: each is recognised, and one nobody foresaw is
/// worded by what was being done when it came.
enum FailureWording {
    /// `host:port`, the port the scheme's when the URL has none.
    static func target(of url: String) -> String {
        guard let parsed = URL(string: url) else { return "the server" }
        let scheme = parsed.scheme?.lowercased()
        let port = parsed.port ?? (scheme == "https" ? 443 : 80)
        let host = parsed.host ?? "?"
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    static func classify(_ error: Error, url: String, timeoutSeconds: Double, presentedCertificate: Bool) -> FetchError {
        let target = target(of: url)
        func transport(_ message: String) -> FetchError { FetchError(kind: .transport, message: message) }
        func tls(_ message: String) -> FetchError { FetchError(kind: .tls, message: message) }
        let timeout = FetchError(kind: .timeout, message: "no complete response within \(HTTPGetClient.format(timeoutSeconds)) s")
        let cutShort = transport("\(target) closed the connection before the response was complete")

        switch error {
        case let error as FetchError:
            return error
        case let error as HTTPClientError:
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout, .tlsHandshakeTimeout, .getConnectionFromPoolTimeout,
                .socksHandshakeTimeout, .httpProxyHandshakeTimeout:
                return timeout
            case .invalidURL, .emptyScheme, .emptyHost:
                return FetchError(kind: .transport, message: "invalid URL: not an http or https URL with a host")
            case .cancelled, .requestStreamCancelled:
                return FetchError(kind: .cancelled, message: "cancelled")
            case .remoteConnectionClosed:
                return cutShort
            case .uncleanShutdown:
                return transport("\(target) closed the connection without ending TLS: the response may have been cut short")
            case .alreadyShutdown:
                return transport("the HTTP client has shut down")
            case .bodyLengthMismatch, .contentLengthMissing:
                return transport("\(target) sent a body whose length does not match its Content-Length")
            case .identityCodingIncorrectlyPresent:
                return transport("\(target) sent a response with contradictory framing headers (Content-Length, Transfer-Encoding)")
            case .proxyAuthenticationRequired:
                return transport("the proxy for \(target) asks for credentials (407)")
            case .invalidProxyResponse:
                return transport("the proxy for \(target) refused to open a tunnel to it")
            default:
                // These carry values, so they are told apart by their description, which is
                // only matched here, never shown.
                if "\(error)".contains("invalidHeaderField") {
                    // Which value is never said: it may be a secret.
                    return transport(
                        "a request header for \(target) has a name or value HTTP does not allow (a control character or a line break)")
                }
                if "\(error)".contains("serverOfferedUnsupportedApplicationProtocol") {
                    return tls("\(target) chose an application protocol other than HTTP/1.1 and HTTP/2 in the TLS handshake")
                }
                return transport("the exchange with \(target) failed")
            }
        case let error as NIOSSLExtraError where error == .failedToValidateHostname:
            // Worded by CertificateProbe, which has the names the certificate is valid for.
            return CertificateProbe.wording(.wrongHost, host: host(of: url), target: target, chain: nil)
        case let error as NIOSSLExtraError where error == .serverHostnameImpossibleToMatch || error == .invalidSNIHostname:
            return tls("the host name of \(target) cannot be checked against a certificate (it is not a valid DNS name)")
        case let error as NIOSSLError:
            switch error {
            case .handshakeFailed(let failure):
                return handshake(failure, target: target, url: url, presentedCertificate: presentedCertificate)
                    ?? tls("the TLS handshake with \(target) failed")
            case .uncleanShutdown:
                return transport("\(target) closed the connection without ending TLS: the response may have been cut short")
            case .failedToLoadPrivateKey where presentedCertificate:
                // The key was read as PEM before the request (TLSTrust): what BoringSSL refuses
                // is the pair.
                return tls(
                    "could not set up TLS for \(target): the key in remoteConfiguration.tls.keyFile is not the key of the certificate in remoteConfiguration.tls.certificateFile"
                )
            case .noSuchFilesystemObject, .failedToLoadCertificate, .failedToLoadPrivateKey:
                return tls("could not set up TLS for \(target): a certificate or key file could not be loaded")
            default:
                return tls("the TLS connection to \(target) failed")
            }
        case let error as BoringSSLError:
            return handshake(error, target: target, url: url, presentedCertificate: presentedCertificate)
                ?? tls("the TLS connection to \(target) failed")
        case is NIOSSLExtraError, is NIOSSLCloseTimedOutError:
            return tls("the TLS connection to \(target) failed")
        case let error as NIOConnectionError:
            if error.dnsAError != nil || error.dnsAAAAError != nil, error.connectionErrors.isEmpty {
                return transport("could not connect to \(target): the host name is not known")
            }
            if let first = error.connectionErrors.first {
                return classify(first.error, url: url, timeoutSeconds: timeoutSeconds, presentedCertificate: presentedCertificate)
            }
            return transport("could not connect to \(target)")
        case is SocketAddressError, is SocketAddressError.UnknownHost:
            return transport("could not connect to \(target): the host name is not known")
        case let error as IOError:
            return transport(socketProblem(error.errnoCode, target: target))
        case let error as ChannelError:
            switch error {
            case .connectTimeout: return timeout
            case .eof, .ioOnClosedChannel, .alreadyClosed, .outputClosed, .inputClosed: return cutShort
            default: return transport("the connection to \(target) failed")
            }
        case let error as HTTPParserError:
            switch error {
            case .invalidEOFState, .closedConnection: return cutShort
            case .headerOverflow: return transport("\(target) sent response headers over 80 KB")
            default: return transport("\(target) sent a response that is not valid HTTP/1.1")
            }
        case is any NIOHTTP2Error:
            return transport("\(target) broke off the HTTP/2 exchange")
        default:
            return transport("the exchange with \(target) failed")
        }
    }

    private static func host(of url: String) -> String {
        URL(string: url)?.host ?? "?"
    }

    /// A failed connect, read or write, by its errno: words, never the number alone.
    static func socketProblem(_ code: Int32, target: String) -> String {
        switch code {
        case ECONNREFUSED: return "could not connect to \(target): connection refused"
        case ECONNRESET: return "\(target) reset the connection"
        case EPIPE: return "\(target) closed the connection while the request was being sent"
        case ETIMEDOUT: return "the connection to \(target) timed out"
        case EHOSTUNREACH: return "could not connect to \(target): no route to the host"
        case ENETUNREACH: return "could not connect to \(target): the network is unreachable"
        case EADDRNOTAVAIL: return "could not connect to \(target): the address is not available"
        default: return "the connection to \(target) failed: \(String(cString: strerror(code)).lowercased())"
        }
    }

    /// BoringSSL's reasons, the last part of its error strings
    /// (`error:1000007d:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED`); the rest
    /// of those strings (numbers, BoringSSL's source paths) is never shown.
    static func reasons(_ error: BoringSSLError) -> [String] {
        let stack: NIOBoringSSLErrorStack
        switch error {
        case .sslError(let errors), .unknownError(let errors), .invalidSNIName(let errors), .failedToSetALPN(let errors): stack = errors
        default: return []
        }
        return stack.compactMap { entry in
            // "Error: <code> error:<hex>:<library>:OPENSSL_internal:<REASON> at <path>:<line>"
            let text = "\(entry)"
            guard let start = text.range(of: "error:") else { return nil }
            let fields = text[start.upperBound...].split(separator: ":", maxSplits: 4, omittingEmptySubsequences: false)
            guard fields.count >= 4, let reason = fields[3].split(separator: " ").first,
                reason.allSatisfy({ $0.isUppercase || $0.isNumber || $0 == "_" })
            else { return nil }
            return String(reason)
        }
    }

    /// A handshake (or a TLS alert after it) in words; nil when BoringSSL gave no reason.
    /// `untrusted` is worded by CertificateProbe, which has the certificates.
    static func handshake(_ error: BoringSSLError, target: String, url: String, presentedCertificate: Bool) -> FetchError? {
        guard let reason = reasons(error).first(where: { $0 != "HANDSHAKE_FAILURE_ON_CLIENT_HELLO" }) ?? reasons(error).first else {
            return nil
        }
        func tls(_ message: String) -> FetchError { FetchError(kind: .tls, message: message) }
        let clientCertificateAlerts: Set = [
            "TLSV1_ALERT_UNKNOWN_CA", "SSLV3_ALERT_BAD_CERTIFICATE", "SSLV3_ALERT_CERTIFICATE_UNKNOWN",
            "SSLV3_ALERT_UNSUPPORTED_CERTIFICATE", "SSLV3_ALERT_CERTIFICATE_EXPIRED",
            "SSLV3_ALERT_CERTIFICATE_REVOKED", "TLSV1_ALERT_ACCESS_DENIED",
        ]
        switch reason {
        case "CERTIFICATE_VERIFY_FAILED":
            return CertificateProbe.wording(.untrusted, host: host(of: url), target: target, chain: nil)
        case "TLSV1_ALERT_CERTIFICATE_REQUIRED":
            return tls(
                presentedCertificate
                    ? "\(target) asks for a client certificate and did not take the one presented (remoteConfiguration.tls.certificateFile)"
                    : "\(target) asks for a client certificate: name one in remoteConfiguration.tls.certificateFile and its key in remoteConfiguration.tls.keyFile"
            )
        case _ where clientCertificateAlerts.contains(reason):
            let alert = words(reason)
            return tls(
                presentedCertificate
                    ? "\(target) refused the client certificate (remoteConfiguration.tls.certificateFile): it answered \"\(alert)\""
                    : "\(target) refused the TLS handshake (\"\(alert)\"): it may want a client certificate, named in remoteConfiguration.tls.certificateFile and remoteConfiguration.tls.keyFile"
            )
        case "WRONG_VERSION_NUMBER", "HTTP_REQUEST", "HTTPS_PROXY_REQUEST":
            return tls("\(target) does not answer in TLS: is it plain HTTP (an http:// URL)?")
        case "UNSUPPORTED_PROTOCOL", "TLSV1_ALERT_PROTOCOL_VERSION", "WRONG_SSL_VERSION", "UNKNOWN_PROTOCOL":
            return tls(
                "the TLS handshake with \(target) failed: the server and the daemon have no TLS version in common (the daemon speaks TLS 1.0 to 1.3)"
            )
        case "NO_SHARED_CIPHER", "NO_CIPHERS_AVAILABLE", "NO_CIPHER_MATCH", "TLSV1_ALERT_INSUFFICIENT_SECURITY", "NO_SHARED_GROUP",
            "WRONG_CIPHER_RETURNED", "UNKNOWN_CIPHER_RETURNED":
            return tls("the TLS handshake with \(target) failed: the server and the daemon have no cipher in common")
        case "SSLV3_ALERT_HANDSHAKE_FAILURE":
            return tls(
                "\(target) refused the TLS handshake (\"handshake failure\"): no TLS version or cipher in common, or it wants a client certificate"
            )
        case "KEY_VALUES_MISMATCH":
            return tls(
                "could not set up TLS for \(target): the key in remoteConfiguration.tls.keyFile is not the key of the certificate in remoteConfiguration.tls.certificateFile"
            )
        default:
            if reason.hasPrefix("TLSV1_ALERT_") || reason.hasPrefix("SSLV3_ALERT_") {
                return tls("the TLS handshake with \(target) failed: the server answered \"\(words(reason))\"")
            }
            return tls("the TLS handshake with \(target) failed: \(words(reason))")
        }
    }

    /// `SSLV3_ALERT_BAD_CERTIFICATE` → `bad certificate`.
    static func words(_ reason: String) -> String {
        var text = Substring(reason)
        for prefix in ["TLSV1_ALERT_", "SSLV3_ALERT_", "TLSV13_ALERT_"] where text.hasPrefix(prefix) { text = text.dropFirst(prefix.count) }
        return text.lowercased().replacingOccurrences(of: "_", with: " ")
    }
}
