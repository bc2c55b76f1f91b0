import Basics
import Foundation
import JSONKit
import Replay
import Testing

/// The built daemon, as a user runs it, against an HTTPS server with a private CA: trusted
/// through `SSL_CERT_FILE` in its environment or `remoteConfiguration.tls.caFile`, refused
/// with a `tls` error in words otherwise.
@Suite(.serialized) final class DaemonTLSTests {
    let pki: TestPKI
    let server: TLSPageServer

    init() throws {
        pki = try TestPKI()
        server = try TLSPageServer(certificate: pki.serverCertificate, key: pki.serverKey, offerHTTP2: true)
    }

    deinit {
        server.stop()
        pki.remove()
    }

    /// Built beside this test bundle by `swift build --build-tests` (other test targets depend on it).
    static let daemonPath = URL(fileURLWithPath: Replayer.currentExecutable()).deletingLastPathComponent().appendingPathComponent(
        "datasourced"
    ).path

    /// `initialize`, `createSource` of a remote source on the server, `fetchData` with
    /// `wait`: the `fetchData` result, and the source's objects then.
    func fetch(environment: [String: String], remoteConfiguration: JSON) throws -> (result: JSON?, objects: JSON?) {
        let daemon = try DaemonProcess(path: Self.daemonPath, environment: environment)
        defer { daemon.end() }
        _ = daemon.request(1, "initialize", [:])
        let created = daemon.request(
            2, "createSource",
            [
                "name": "items", "kind": "remote", "apiPath": "/items?page=1",
                "remoteConfiguration": remoteConfiguration,
            ])
        #expect(created?["result"] != nil, "\(created?.description ?? "no answer")")
        let result = daemon.request(3, "fetchData", ["source": "items", "wait": true])?["result"]
        return (result, daemon.request(4, "allObjects", ["source": "items"])?["result"])
    }

    /// The test process's environment without the variables under test (this machine's may set them).
    static var cleanEnvironment: [String: String] {
        ProcessInfo.processInfo.environment.filter { !["SSL_CERT_FILE", "SSL_CERT_DIR"].contains($0.key) }
    }

    @Test func sslCertFileInTheDaemonsEnvironmentTrustsAPrivateCA() throws {
        let configuration: JSON = ["baseURL": JSON(server.baseURL), "timeoutSeconds": 20]

        let (refused, none) = try fetch(environment: Self.cleanEnvironment, remoteConfiguration: configuration)
        #expect(none?.arrayValue?.isEmpty == true, "\(none?.description ?? "no answer")")
        #expect(refused?["outcome"] == "failed", "\(refused?.description ?? "no answer")")
        #expect(refused?["error"]?["kind"] == "tls")
        #expect(
            refused?["error"]?["message"]
                == JSON(
                    "the certificate of 127.0.0.1:\(server.port) is issued by \"\(TestPKI.caName)\", which is not a trusted certificate authority: to trust it, name that authority's certificate (PEM) in remoteConfiguration.tls.caFile or SSL_CERT_FILE"
                ))

        var environment = Self.cleanEnvironment
        environment["SSL_CERT_FILE"] = pki.caFile
        let (trusted, objects) = try fetch(environment: environment, remoteConfiguration: configuration)
        #expect(trusted?["outcome"] == "finished", "\(trusted?.description ?? "no answer")")
        #expect(objects?.text() == #"[{"page":1}]"#, "\(objects?.description ?? "no answer")")

        let (throughCAFile, alike) = try fetch(
            environment: Self.cleanEnvironment,
            remoteConfiguration: ["baseURL": JSON(server.baseURL), "timeoutSeconds": 20, "tls": ["caFile": JSON(pki.caFile)]])
        #expect(throughCAFile?["outcome"] == "finished", "\(throughCAFile?.description ?? "no answer")")
        #expect(alike?.text() == #"[{"page":1}]"#, "\(alike?.description ?? "no answer")")

        // `~/` is the daemon's HOME.
        var home = Self.cleanEnvironment
        home["HOME"] = pki.path
        let (fromHome, same) = try fetch(
            environment: home, remoteConfiguration: ["baseURL": JSON(server.baseURL), "tls": ["caFile": "~/ca.pem"]])
        #expect(fromHome?["outcome"] == "finished", "\(fromHome?.description ?? "no answer")")
        #expect(same?.text() == #"[{"page":1}]"#)

        // Over HTTP/2, as the server offers it.
        #expect(server.versions.allSatisfy { $0.major == 2 } && server.versions.count == 3, "\(server.versions)")
    }
}

/// `datasourced serve` on pipes, spoken to one request at a time.
final class DaemonProcess {
    private let process: SpawnedProcess
    private var received: [UInt8] = []
    private var ended = false

    init(path: String, environment: [String: String]) throws {
        process = try SpawnedProcess(
            command: [path, "serve"], environment: environment.map { "\($0.key)=\($0.value)" }, standardError: .discarded)
    }

    deinit { end() }

    /// The response to request `id` (notifications before it are passed over); nil if the daemon ends first.
    func request(_ id: Int, _ method: String, _ params: JSON) -> JSON? {
        let body = JSON.object([("jsonrpc", "2.0"), ("id", JSON(id)), ("method", JSON(method)), ("params", params)]).encoded()
        _ = try? FileDescriptor(rawValue: process.standardInput).writeAll(Array("Content-Length: \(body.count)\r\n\r\n".utf8) + body)
        while true {
            while let message = nextFrame() {
                if message["id"] == JSON(id) { return message }
            }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            let count = (try? chunk.withUnsafeMutableBytes { try FileDescriptor(rawValue: process.standardOutput).read(into: $0) }) ?? 0
            guard count > 0 else { return nil }
            received += chunk[..<count]
        }
    }

    private func nextFrame() -> JSON? {
        let separator = Array("\r\n\r\n".utf8)
        guard
            let end = (0...max(0, received.count - separator.count)).first(where: {
                received[$0..<min($0 + 4, received.count)].elementsEqual(separator)
            }),
            received.count >= 4
        else { return nil }
        let header = String(decoding: received[..<end], as: UTF8.self)
        guard
            let length = header.split(separator: "\r\n").compactMap({ line -> Int? in
                let parts = line.split(separator: ":", maxSplits: 1)
                return parts.count == 2 && parts[0].lowercased() == "content-length"
                    ? Int(parts[1].trimmingCharacters(in: .whitespaces)) : nil
            }).first, received.count >= end + 4 + length
        else { return nil }
        let body = Array(received[(end + 4)..<(end + 4 + length)])
        received.removeFirst(end + 4 + length)
        return try? JSON.parse(body)
    }

    /// Closes its stdin and waits for it to exit (a daemon exits at the end of its input).
    func end() {
        guard !ended else { return }
        ended = true
        close(process.standardInput)
        // Read before the wait: a daemon whose stdout pipe is full would never exit.
        _ = process.readOutputs()
        process.wait()
        close(process.standardOutput)
    }
}
