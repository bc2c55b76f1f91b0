import Basics
import Foundation
import Replay

/// A throwaway certificate authority and the certificates the TLS tests use, made with the
/// `openssl` command in a directory of their own (removed by `remove`). Keys are P-256:
/// quick to make.
struct TestPKI {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let directory: TemporaryDirectory
    var path: String { directory.path }

    /// The authority's certificate, and a second authority nobody trusts.
    var caFile: String { "\(path)/ca.pem" }
    var otherCAFile: String { "\(path)/other-ca.pem" }
    /// For 127.0.0.1 and localhost, issued by the authority, valid now.
    var serverCertificate: String { "\(path)/server.pem" }
    var serverKey: String { "\(path)/server.key" }
    /// For 127.0.0.1 and localhost, issued by the authority, valid only in 2020.
    var expiredCertificate: String { "\(path)/expired.pem" }
    /// For wrong.example and www.wrong.example only, issued by the authority.
    var wrongHostCertificate: String { "\(path)/wrong-host.pem" }
    /// For 127.0.0.1 and localhost, issued by the other authority.
    var otherCACertificate: String { "\(path)/other-server.pem" }
    /// A client's, issued by the authority (for mTLS), and its key.
    var clientCertificate: String { "\(path)/client.pem" }
    var clientKey: String { "\(path)/client.key" }

    static let caName = "datasourced test CA"
    static let otherCAName = "datasourced other CA"

    init() throws {
        guard let directory = TemporaryDirectory(prefix: "datasourced-pki") else { throw Failure(description: "no temporary directory") }
        self.directory = directory
        do {
            try make()
        } catch {
            directory.remove()
            throw error
        }
    }

    func remove() { directory.remove() }

    private func make() throws {
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try openssl(["req", "-x509"] + key + ["-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=\(Self.caName)", "-days", "30"])
        try openssl(
            ["req", "-x509"] + key + ["-keyout", "other-ca.key", "-out", "other-ca.pem", "-subj", "/CN=\(Self.otherCAName)", "-days", "30"])
        try write("subjectAltName=IP:127.0.0.1,DNS:localhost\n", to: "local.ext")
        try write("subjectAltName=DNS:wrong.example,DNS:www.wrong.example\n", to: "wrong.ext")
        try write("extendedKeyUsage=clientAuth\n", to: "client.ext")

        try openssl(["req", "-new"] + key + ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"])
        try sign("server.csr", by: "ca", extensions: "local.ext", into: "server.pem")
        try sign("server.csr", by: "other-ca", extensions: "local.ext", into: "other-server.pem")
        try sign("server.csr", by: "ca", extensions: "wrong.ext", into: "wrong-host.pem")
        try openssl(["req", "-new"] + key + ["-keyout", "client.key", "-out", "client.csr", "-subj", "/CN=datasourced test client"])
        try sign("client.csr", by: "ca", extensions: "client.ext", into: "client.pem")

        // `openssl x509` cannot date a certificate in the past; `openssl ca` can.
        try write(
            """
            [ca]
            default_ca = test
            [test]
            database = index.txt
            new_certs_dir = .
            certificate = ca.pem
            private_key = ca.key
            serial = serial
            default_md = sha256
            policy = any
            [any]
            commonName = supplied

            """, to: "ca.cnf")
        try write("", to: "index.txt")
        try write("1000\n", to: "serial")
        try openssl([
            "ca", "-config", "ca.cnf", "-batch", "-notext", "-startdate", "20200101000000Z", "-enddate", "20210101000000Z",
            "-extfile", "local.ext", "-in", "server.csr", "-out", "expired.pem",
        ])
    }

    private func sign(_ request: String, by authority: String, extensions: String, into output: String) throws {
        try openssl([
            "x509", "-req", "-in", request, "-CA", "\(authority).pem", "-CAkey", "\(authority).key", "-CAcreateserial",
            "-days", "30", "-extfile", extensions, "-out", output,
        ])
    }

    private func write(_ text: String, to name: String) throws {
        try text.write(toFile: "\(path)/\(name)", atomically: false, encoding: .utf8)
    }

    private func openssl(_ arguments: [String]) throws {
        let run = try SpawnedProcess.run(["/usr/bin/env", "openssl"] + arguments, workingDirectory: path)
        guard run.termination == .exited(0) else {
            throw Failure(description: "openssl \(arguments.joined(separator: " ")): \(String(decoding: run.standardError, as: UTF8.self))")
        }
    }
}
