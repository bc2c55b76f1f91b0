#if canImport(Glibc)
import Glibc
#endif
import Daemon
import DataSources
import Foundation
import JSONKit
import Basics
import Testing

/// `remoteConfiguration.tls` at `createSource`: a file that is missing, not a file or not
/// PEM is refused there, naming the member; good files reach the fetcher with every request;
/// a `tls` fetch error reaches the client as such.
@Suite final class TLSMemberTests {
    let directory: String
    let client: WireClient
    let fetcher = TLSRecordingFetcher()

    init() throws {
        var template = Array("/tmp/datasourced-tls-members.XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else { throw CocoaError(.fileWriteUnknown) }
        directory = String(cString: made)
        client = WireClient(fetcher: fetcher)
        _ = client.request("initialize")
        // PEM in shape only: the daemon core checks shapes; HTTPGet's tests use real certificates.
        try write("-----BEGIN CERTIFICATE-----\nTUlJQmFzZTY0\nPT0=\n-----END CERTIFICATE-----\n", "ca.pem")
        try write("-----BEGIN PRIVATE KEY-----\nTUlJQmFzZTY0\n-----END PRIVATE KEY-----\n", "client.key")
        try write("[ca]\ndefault_ca = test\n", "not-pem.cnf")
        try write("-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n", "bad-base64.pem")
        try write("-----BEGIN CERTIFICATE-----\nTUlJQmFzZTY0\n", "no-end.pem")
        try write("-----BEGIN ENCRYPTED PRIVATE KEY-----\nTUlJQmFzZTY0\n-----END ENCRYPTED PRIVATE KEY-----\n", "encrypted.key")
        try write(
            "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\nTUlJQmFzZTY0\n-----END RSA PRIVATE KEY-----\n",
            "legacy.key")
        mkdir(directory + "/sub", 0o700)
        mkfifo(directory + "/fifo", 0o600)
    }

    deinit {
        for name in ["ca.pem", "client.key", "not-pem.cnf", "bad-base64.pem", "no-end.pem", "encrypted.key", "legacy.key"] {
            unlink("\(directory)/\(name)")
        }
        unlink(directory + "/fifo")
        rmdir(directory + "/sub")
        rmdir(directory)
    }

    func write(_ text: String, _ name: String) throws {
        try text.write(toFile: "\(directory)/\(name)", atomically: false, encoding: .utf8)
    }

    func create(_ name: String, tls: JSON) -> JSON {
        client.request(
            "createSource",
            [
                "name": JSON(name), "kind": "remote", "apiPath": "/items",
                "remoteConfiguration": ["baseURL": "https://api.example.com", "tls": tls],
            ])
    }

    /// The refusal's message and field, after checking it is one.
    func refusal(_ response: JSON, sourceLocation: SourceLocation = #_sourceLocation) -> (message: String, field: String)? {
        guard let error = response["error"], error["code"] == -32602 else {
            Issue.record("expected -32602, got \(response)", sourceLocation: sourceLocation)
            return nil
        }
        return (error["message"]?.stringValue ?? "", error["data"]?["field"]?.stringValue ?? "")
    }

    @Test func filesThatAreMissingNotFilesOrNotPEMAreRefusedNamingTheMember() throws {
        let cases: [(tls: JSON, field: String, message: String)] = [
            (
                ["caFile": JSON("\(directory)/missing.pem")], "remoteConfiguration.tls.caFile",
                "\"remoteConfiguration.tls.caFile\" names \(directory)/missing.pem, which does not exist"
            ),
            (
                ["caFile": JSON("\(directory)/sub")], "remoteConfiguration.tls.caFile",
                "\"remoteConfiguration.tls.caFile\" names \(directory)/sub, which is a directory, not a file"
            ),
            (
                ["caFile": JSON("\(directory)/fifo")], "remoteConfiguration.tls.caFile",
                "\"remoteConfiguration.tls.caFile\" names \(directory)/fifo, which is not a regular file"
            ),
            (
                ["caFile": JSON("\(directory)/not-pem.cnf")], "remoteConfiguration.tls.caFile",
                "\"remoteConfiguration.tls.caFile\" names \(directory)/not-pem.cnf, which holds no PEM certificate (a \"-----BEGIN CERTIFICATE-----\" block)"
            ),
            (
                ["caFile": JSON("\(directory)/bad-base64.pem")], "remoteConfiguration.tls.caFile",
                "\"remoteConfiguration.tls.caFile\" names \(directory)/bad-base64.pem, which holds a \"-----BEGIN CERTIFICATE-----\" block that is not base64 or has no END line"
            ),
            (
                ["caFile": JSON("\(directory)/no-end.pem")], "remoteConfiguration.tls.caFile",
                "\"remoteConfiguration.tls.caFile\" names \(directory)/no-end.pem, which holds a \"-----BEGIN CERTIFICATE-----\" block that is not base64 or has no END line"
            ),
            (
                ["certificateFile": JSON("\(directory)/ca.pem"), "keyFile": JSON("\(directory)/ca.pem")], "remoteConfiguration.tls.keyFile",
                "\"remoteConfiguration.tls.keyFile\" names \(directory)/ca.pem, which holds no PEM private key (a \"-----BEGIN PRIVATE KEY-----\" block)"
            ),
            (
                ["certificateFile": JSON("\(directory)/ca.pem"), "keyFile": JSON("\(directory)/encrypted.key")],
                "remoteConfiguration.tls.keyFile",
                "\"remoteConfiguration.tls.keyFile\" names \(directory)/encrypted.key, which holds an encrypted private key: the daemon has no passphrase to decrypt it with; give it the key unencrypted"
            ),
            (
                ["certificateFile": JSON("\(directory)/ca.pem"), "keyFile": JSON("\(directory)/legacy.key")],
                "remoteConfiguration.tls.keyFile",
                "\"remoteConfiguration.tls.keyFile\" names \(directory)/legacy.key, which holds an encrypted private key: the daemon has no passphrase to decrypt it with; give it the key unencrypted"
            ),
            (
                ["certificateFile": JSON("\(directory)/missing.pem"), "keyFile": JSON("\(directory)/client.key")],
                "remoteConfiguration.tls.certificateFile",
                "\"remoteConfiguration.tls.certificateFile\" names \(directory)/missing.pem, which does not exist"
            ),
            (
                ["certificateFile": JSON("\(directory)/ca.pem")], "remoteConfiguration.tls.keyFile",
                "\"remoteConfiguration.tls.certificateFile\" needs \"remoteConfiguration.tls.keyFile\": the PEM file of the client certificate's private key"
            ),
            (
                ["keyFile": JSON("\(directory)/client.key")], "remoteConfiguration.tls.certificateFile",
                "\"remoteConfiguration.tls.keyFile\" needs \"remoteConfiguration.tls.certificateFile\": the PEM file of the client certificate"
            ),
            (
                ["caFile": "certs/ca.pem"], "remoteConfiguration.tls.caFile",
                "\"remoteConfiguration.tls.caFile\" must be an absolute path, or one starting with ~/, got \"certs/ca.pem\""
            ),
            (["caFile": ""], "remoteConfiguration.tls.caFile", "\"remoteConfiguration.tls.caFile\" must be a non-empty string, got \"\""),
            (
                ["caFile": 3], "remoteConfiguration.tls.caFile",
                "\"remoteConfiguration.tls.caFile\" must be a non-empty string, got an integer"
            ),
            (
                "ca.pem", "remoteConfiguration.tls",
                "\"remoteConfiguration.tls\" must be an object {caFile?, certificateFile?, keyFile?}, got a string"
            ),
            (
                ["cafile": JSON("\(directory)/ca.pem")], "remoteConfiguration.tls.cafile",
                "unknown member \"remoteConfiguration.tls.cafile\"; did you mean \"remoteConfiguration.tls.caFile\"?"
            ),
            (["insecure": true], "remoteConfiguration.tls.insecure", "unknown member \"remoteConfiguration.tls.insecure\""),
        ]
        for (index, testCase) in cases.enumerated() {
            guard let (message, field) = refusal(create("s\(index)", tls: testCase.tls)) else { continue }
            #expect(field == testCase.field, "\(testCase.tls)")
            #expect(message == "Invalid params: " + testCase.message, "\(testCase.tls)")
        }
        // Nothing was created, and nothing was fetched.
        #expect(client.request("listSources")["result"]?.arrayValue?.isEmpty ?? false, "\(client.request("listSources"))")
        #expect(fetcher.requests.isEmpty)
    }

    @Test func goodFilesReachTheFetcherAndATLSFailureReachesTheClientAsKindTLS() throws {
        let tls: JSON = [
            "caFile": JSON("\(directory)/ca.pem"), "certificateFile": JSON("\(directory)/ca.pem"),
            "keyFile": JSON("\(directory)/client.key"),
        ]
        #expect(create("secure", tls: tls)["result"] != nil)
        let loaded = client.request("fetchData", ["source": "secure", "wait": true])
        let error = loaded["result"]?["error"]
        #expect(error?["kind"] == "tls", "\(loaded)")
        #expect(error?["message"] == "the certificate of api.example.com:443 expired on 2021-01-01 00:00:00 UTC", "\(loaded)")
        #expect(
            fetcher.requests.first
                == TLSFiles(
                    caFile: "\(directory)/ca.pem", certificateFile: "\(directory)/ca.pem",
                    keyFile: "\(directory)/client.key"))
        // No tls member: none sent.
        #expect(
            client.request(
                "createSource",
                [
                    "name": "plain", "kind": "remote", "apiPath": "/items",
                    "remoteConfiguration": ["baseURL": "https://api.example.com"],
                ])["result"] != nil)
        _ = client.request("fetchData", ["source": "plain", "wait": true])
        #expect(fetcher.requests.count == 2 && fetcher.requests[1] == nil)
    }
}

/// Keeps each request's `tls` and fails it as an expired certificate would.
final class TLSRecordingFetcher: HTTPFetching {
    private let recorded = LockedValue<[TLSFiles?]>([])
    var requests: [TLSFiles?] { recorded.withLock { $0 } }

    func fetch(_ request: RemoteRequest, completion: @escaping @Sendable (Result<RemoteResponse, FetchError>) -> Void) -> FetchHandle {
        recorded.withLock { $0.append(request.tls) }
        let failure = FetchError(
            kind: .tls, message: "the certificate of api.example.com:443 expired on 2021-01-01 00:00:00 UTC", url: request.url)
        Thread.detachNewThread { completion(.failure(failure)) }
        return FetchHandle {}
    }

    func shutdown() {}
}
