import Basics
import DataSources
import Foundation
@testable import HTTPGet
import NIOCore
import NIOHTTP1
import Replay
import Testing

/// HTTPS against servers on 127.0.0.1 with certificates made for the test: trust from
/// `caFile`, `SSL_CERT_FILE` and `SSL_CERT_DIR`, refusals worded for people, client
/// certificates, and HTTP/2.
@Suite(.serialized) final class TLSTests {
    let pki: TestPKI

    init() throws {
        pki = try TestPKI()
    }

    deinit { pki.remove() }

    /// One GET with a client of its own, whose environment is `environment` (never the test
    /// process's: this machine's may set SSL_CERT_FILE).
    func get(_ url: String, tls: TLSFiles? = nil, environment: [String: String] = [:]) async -> Result<RemoteResponse, FetchError> {
        let client = HTTPGetClient(environment: environment)
        defer { client.shutdown() }
        var request = RemoteRequest(url: url, headers: [], timeoutSeconds: 20, maximumBodySize: 1 << 20)
        request.tls = tls
        return await withCheckedContinuation { continuation in
            _ = client.fetch(request) { continuation.resume(returning: $0) }
        }
    }

    func failure(_ result: Result<RemoteResponse, FetchError>, sourceLocation: SourceLocation = #_sourceLocation) -> FetchError? {
        switch result {
        case .success(let response):
            Issue.record("expected a failure, got status \(response.status)", sourceLocation: sourceLocation)
            return nil
        case .failure(let error):
            return error
        }
    }

    func body(_ result: Result<RemoteResponse, FetchError>, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        switch result {
        case .success(let response):
            return String(decoding: response.body, as: UTF8.self)
        case .failure(let error):
            Issue.record("expected a page, got \(error.kind): \(error.message)", sourceLocation: sourceLocation)
            return nil
        }
    }

    @Test func aCertificateFromAnUnknownAuthorityIsRefusedNamingTheAuthorityAndHowToTrustIt() async throws {
        let server = try TLSPageServer(certificate: pki.serverCertificate, key: pki.serverKey)
        defer { server.stop() }
        guard let error = failure(await get(server.baseURL + "/items?page=1")) else { return }
        #expect(error.kind == .tls)
        // Before: "handshakeFailed(NIOSSL.BoringSSLError.sslError([Error: 268435581 error:1000007d:SSL
        // routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED at .../handshake.cc:...]))".
        #expect(
            error.message
                == "the certificate of 127.0.0.1:\(server.port) is issued by \"datasourced test CA\", which is not a trusted certificate authority: to trust it, name that authority's certificate (PEM) in remoteConfiguration.tls.caFile or SSL_CERT_FILE"
        )
    }

    @Test func caFileTrustsAPrivateAuthority() async throws {
        let server = try TLSPageServer(certificate: pki.serverCertificate, key: pki.serverKey)
        defer { server.stop() }
        #expect(body(await get(server.baseURL + "/items?page=1", tls: TLSFiles(caFile: pki.caFile))) == #"[{"page":1}]"#)
        // By host name too: the certificate names localhost.
        #expect(body(await get("https://localhost:\(server.port)/items?page=2", tls: TLSFiles(caFile: pki.caFile))) == #"[{"page":2}]"#)
        // Added to the roots, not in place of them: another authority's certificate is still refused.
        let other = try TLSPageServer(certificate: pki.otherCACertificate, key: pki.serverKey)
        defer { other.stop() }
        guard let error = failure(await get(other.baseURL + "/items?page=1", tls: TLSFiles(caFile: pki.caFile))) else { return }
        #expect(
            error.message.contains("is issued by \"datasourced other CA\", which is not a trusted certificate authority"),
            "\(error.message)")
    }

    @Test func sslCertFileAndSSLCertDirFromTheEnvironmentAreTrusted() async throws {
        let server = try TLSPageServer(certificate: pki.serverCertificate, key: pki.serverKey)
        defer { server.stop() }
        #expect(body(await get(server.baseURL + "/items?page=3", environment: ["SSL_CERT_FILE": pki.caFile])) == #"[{"page":3}]"#)

        // A directory as `openssl rehash` (c_rehash) leaves it: certificates under their subject's hash.
        guard let directory = TemporaryDirectory(prefix: "datasourced-certdir") else {
            Issue.record("no directory")
            return
        }
        defer { directory.remove() }
        try FileManager.default.copyItem(atPath: pki.caFile, toPath: directory.path + "/ca.pem")
        let rehash = try SpawnedProcess.run(["/usr/bin/env", "openssl", "rehash", directory.path])
        #expect(rehash.termination == .exited(0), "\(String(decoding: rehash.standardError, as: UTF8.self))")
        #expect(body(await get(server.baseURL + "/items?page=4", environment: ["SSL_CERT_DIR": directory.path])) == #"[{"page":4}]"#)

        // SSL_CERT_FILE stands in for the system store (as for OpenSSL and curl), and caFile adds to it.
        let other = try TLSPageServer(certificate: pki.otherCACertificate, key: pki.serverKey)
        defer { other.stop() }
        #expect(
            body(
                await get(
                    other.baseURL + "/items?page=5", tls: TLSFiles(caFile: pki.otherCAFile),
                    environment: ["SSL_CERT_FILE": pki.caFile])) == #"[{"page":5}]"#)
    }

    @Test func anUnusableSSLCertFileOrCAFileFailsNamingIt() async throws {
        let server = try TLSPageServer(certificate: pki.serverCertificate, key: pki.serverKey)
        defer { server.stop() }
        let target = "127.0.0.1:\(server.port)"
        let missing = pki.path + "/missing.pem"
        guard let fromEnvironment = failure(await get(server.baseURL + "/x", environment: ["SSL_CERT_FILE": missing])) else { return }
        #expect(fromEnvironment.kind == .tls)
        #expect(fromEnvironment.message == "could not set up TLS for \(target): SSL_CERT_FILE \(missing) does not exist")

        let notPEM = pki.path + "/ca.cnf"
        guard let fromSource = failure(await get(server.baseURL + "/x", tls: TLSFiles(caFile: notPEM))) else { return }
        #expect(fromSource.kind == .tls)
        #expect(
            fromSource.message
                == "could not set up TLS for \(target): remoteConfiguration.tls.caFile \(notPEM) holds no PEM certificate that can be read")

        guard let directory = failure(await get(server.baseURL + "/x", environment: ["SSL_CERT_DIR": pki.caFile])) else { return }
        #expect(directory.message == "could not set up TLS for \(target): SSL_CERT_DIR \(pki.caFile) is not a directory")
    }

    @Test func anExpiredCertificateIsRefusedWithItsDate() async throws {
        let server = try TLSPageServer(certificate: pki.expiredCertificate, key: pki.serverKey)
        defer { server.stop() }
        guard let error = failure(await get(server.baseURL + "/items", tls: TLSFiles(caFile: pki.caFile))) else { return }
        #expect(error.kind == .tls)
        #expect(error.message == "the certificate of 127.0.0.1:\(server.port) expired on 2021-01-01 00:00:00 UTC")
    }

    @Test func aCertificateForAnotherHostIsRefusedNamingTheHostsItIsFor() async throws {
        let server = try TLSPageServer(certificate: pki.wrongHostCertificate, key: pki.serverKey)
        defer { server.stop() }
        guard let error = failure(await get(server.baseURL + "/items", tls: TLSFiles(caFile: pki.caFile))) else { return }
        #expect(error.kind == .tls)
        #expect(
            error.message
                == "the certificate of 127.0.0.1:\(server.port) is not valid for the host name \"127.0.0.1\": it is valid for wrong.example, www.wrong.example"
        )
        guard let byName = failure(await get("https://localhost:\(server.port)/items", tls: TLSFiles(caFile: pki.caFile))) else { return }
        #expect(
            byName.message
                == "the certificate of localhost:\(server.port) is not valid for the host name \"localhost\": it is valid for wrong.example, www.wrong.example"
        )
    }

    @Test func aServerThatRequiresAClientCertificateGetsOneFromCertificateFileAndKeyFile() async throws {
        let server = try TLSPageServer(certificate: pki.serverCertificate, key: pki.serverKey, clientCA: pki.caFile)
        defer { server.stop() }
        let target = "127.0.0.1:\(server.port)"
        guard let without = failure(await get(server.baseURL + "/items?page=1", tls: TLSFiles(caFile: pki.caFile))) else { return }
        #expect(without.kind == .tls)
        #expect(
            without.message
                == "\(target) asks for a client certificate: name one in remoteConfiguration.tls.certificateFile and its key in remoteConfiguration.tls.keyFile"
        )

        let client = TLSFiles(caFile: pki.caFile, certificateFile: pki.clientCertificate, keyFile: pki.clientKey)
        #expect(body(await get(server.baseURL + "/items?page=2", tls: client)) == #"[{"page":2}]"#)

        // A certificate from an authority the server does not trust.
        let stranger = TLSFiles(caFile: pki.caFile, certificateFile: pki.otherCACertificate, keyFile: pki.serverKey)
        guard let refused = failure(await get(server.baseURL + "/items?page=3", tls: stranger)) else { return }
        #expect(refused.kind == .tls)
        #expect(
            refused.message
                == "\(target) refused the client certificate (remoteConfiguration.tls.certificateFile): it answered \"unknown ca\"")

        // A key that is not the certificate's.
        let mismatched = TLSFiles(caFile: pki.caFile, certificateFile: pki.clientCertificate, keyFile: pki.serverKey)
        guard let mismatch = failure(await get(server.baseURL + "/items?page=4", tls: mismatched)) else { return }
        #expect(mismatch.kind == .tls)
        #expect(
            mismatch.message
                == "could not set up TLS for \(target): the key in remoteConfiguration.tls.keyFile is not the key of the certificate in remoteConfiguration.tls.certificateFile"
        )
    }

    /// In TLS 1.3 the client's handshake is over before the server checks its certificate:
    /// the server's alert comes after the request went out, on HTTP/2 as on HTTP/1.1.
    @Test(arguments: [false, true])
    func aMissingOrRefusedClientCertificateIsATLSErrorOverHTTP2Too(offerHTTP2: Bool) async throws {
        let server = try TLSPageServer(
            certificate: pki.serverCertificate, key: pki.serverKey, offerHTTP2: offerHTTP2, clientCA: pki.caFile)
        defer { server.stop() }
        let target = "127.0.0.1:\(server.port)"
        guard let without = failure(await get(server.baseURL + "/items?page=1", tls: TLSFiles(caFile: pki.caFile))) else { return }
        #expect(without.kind == .tls, "HTTP/2 offered: \(offerHTTP2)")
        #expect(
            without.message
                == "\(target) asks for a client certificate: name one in remoteConfiguration.tls.certificateFile and its key in remoteConfiguration.tls.keyFile",
            "HTTP/2 offered: \(offerHTTP2)")
        let stranger = TLSFiles(caFile: pki.caFile, certificateFile: pki.otherCACertificate, keyFile: pki.serverKey)
        guard let refused = failure(await get(server.baseURL + "/items?page=3", tls: stranger)) else { return }
        #expect(refused.kind == .tls, "HTTP/2 offered: \(offerHTTP2)")
        #expect(
            refused.message
                == "\(target) refused the client certificate (remoteConfiguration.tls.certificateFile): it answered \"unknown ca\"",
            "HTTP/2 offered: \(offerHTTP2)")
    }

    @Test func pagesTravelOverHTTP2WhereTheServerOffersIt() async throws {
        let server = try TLSPageServer(certificate: pki.serverCertificate, key: pki.serverKey, offerHTTP2: true)
        defer { server.stop() }
        let client = HTTPGetClient(environment: [:])
        defer { client.shutdown() }
        for page in 1...5 {
            var request = RemoteRequest(
                url: server.baseURL + "/items?page=\(page)", headers: [("Accept", "application/json")],
                timeoutSeconds: 20, maximumBodySize: 1 << 20)
            request.tls = TLSFiles(caFile: pki.caFile)
            let result = await withCheckedContinuation { continuation in
                _ = client.fetch(request) { continuation.resume(returning: $0) }
            }
            #expect(body(result) == #"[{"page":\#(page)}]"#)
        }
        #expect(server.versions == Array(repeating: HTTPVersion(major: 2, minor: 0), count: 5), "\(server.versions)")
        // Every page on one connection, as streams of it.
        #expect(server.connections == 1)
    }

    /// A POST (a GraphQL query) goes over TLS with its body, on HTTP/1.1 and as HTTP/2
    /// streams alike.
    @Test func aPostTravelsOverTLSWithItsBody() async throws {
        for offerHTTP2 in [false, true] {
            let server = try TLSPageServer(certificate: pki.serverCertificate, key: pki.serverKey, offerHTTP2: offerHTTP2)
            defer { server.stop() }
            let client = HTTPGetClient(environment: [:])
            defer { client.shutdown() }
            for cursor in ["YXJyYXk6MA==", "YXJyYXk6MTk="] {
                let body = #"{"query":"{ books { id } }","variables":{"after":"\#(cursor)","first":20}}"#
                var request = RemoteRequest(url: server.baseURL + "/graphql", headers: [], timeoutSeconds: 20, maximumBodySize: 1 << 20)
                request.tls = TLSFiles(caFile: pki.caFile)
                request.method = .post
                request.body = Array(body.utf8)
                let result = await withCheckedContinuation { continuation in
                    _ = client.fetch(request) { continuation.resume(returning: $0) }
                }
                #expect(self.body(result) == #"{"method":"POST","body":\#(body)}"#, "HTTP/2 offered: \(offerHTTP2)")
            }
            #expect(server.versions == Array(repeating: HTTPVersion(major: offerHTTP2 ? 2 : 1, minor: offerHTTP2 ? 0 : 1), count: 2))
        }
    }

    @Test func aPlainHTTPServerAtAnHTTPSURLIsNamedAsSuch() async throws {
        let server = try FixtureServer(fixtures: [["path": "/x", "body": ["ok": true]]])
        defer { server.stop() }
        let port = server.baseURL.split(separator: ":").last.map(String.init) ?? ""
        guard let error = failure(await get("https://127.0.0.1:\(port)/x")) else { return }
        #expect(error.kind == .tls)
        #expect(error.message == "127.0.0.1:\(port) does not answer in TLS: is it plain HTTP (an http:// URL)?")
    }
}
