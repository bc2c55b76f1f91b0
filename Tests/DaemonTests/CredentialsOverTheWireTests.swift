#if canImport(Glibc)
import Glibc
#endif
@testable import Daemon
import DataSources
import JSONKit
import JSONRPC
import Testing

/// Issue 28 over the wire: `createSource` refuses header values it cannot read, naming the
/// variable or the file, and loses nothing already loaded; a value read from a file is
/// described by where it comes from, and a file gone fails the fetch, not the daemon.
@Suite struct CredentialsOverTheWireTests {
    static let url = "http://fixture.invalid/items"

    static func params(_ name: String, _ authorization: JSON) -> JSON {
        [
            "name": JSON(name), "kind": "remote",
            "remoteConfiguration": ["baseURL": "http://fixture.invalid", "headers": ["Authorization": authorization]],
            "apiPath": "items",
        ]
    }

    @Test func badValuesAreRefusedAndNothingLoadedIsLost() throws {
        var template = Array("/tmp/datasourced-wire-token-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        try #require(descriptor >= 0)
        let file = String(cString: template)
        defer { unlink(file) }
        _ = Array("wire-secret-token\n".utf8).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)

        let client = WireClient(
            fetcher: ScriptedFetcher([
                Self.url: .success(
                    RemoteResponse(url: Self.url, status: 200, contentType: "application/json", body: Array(#"[{"id":1}]"#.utf8)))
            ]))
        _ = client.request("initialize")
        #expect(client.request("createSource", Self.params("kept", ["file": JSON(file), "prefix": "Bearer "]))["result"] != nil)
        #expect(client.request("fetchData", ["source": "kept", "wait": true])["result"] != nil)

        let unset = client.request("createSource", Self.params("unset", ["env": "DATASOURCED_TEST_NEVER_SET_28"]))
        #expect(unset["error"]?["code"] == JSON(ErrorCode.invalidParams))
        #expect(
            unset["error"]?["message"]
                == "Invalid params: \"remoteConfiguration.headers.Authorization.env\": the environment variable DATASOURCED_TEST_NEVER_SET_28 is not set"
        )
        #expect(unset["error"]?["data"]?["field"] == "remoteConfiguration.headers.Authorization.env")
        #expect(unset["error"]?["data"]?["got"] == "DATASOURCED_TEST_NEVER_SET_28")
        let missing = client.request("createSource", Self.params("missing", ["file": JSON(file + ".gone")]))
        #expect(
            missing["error"]?["message"]
                == JSON("Invalid params: \"remoteConfiguration.headers.Authorization.file\": the file \(file).gone does not exist"))
        let mistyped = client.request("createSource", Self.params("mistyped", ["file": JSON(file), "prefix": ["Bearer "]]))
        #expect(mistyped["error"]?["data"]?["field"] == "remoteConfiguration.headers.Authorization.prefix")

        // Nothing already loaded is lost.
        #expect(client.request("listSources")["result"] == [["name": "kept", "kind": "remote"]])
        #expect(client.request("allObjects", ["source": "kept"])["result"] == [["id": 1]])
        let described = client.request("describeSource", ["source": "kept"])
        #expect(described["result"]?["remoteConfiguration"]?["headers"]?["Authorization"] == ["file": JSON(file), "prefix": "Bearer "])
        #expect(!described.text().contains("wire-secret-token"))

        // The file gone: the fetch fails, naming it; the rows stay.
        unlink(file)
        let failed = client.request("fetchData", ["source": "kept", "wait": true])
        #expect(failed["result"]?["error"]?["kind"] == "transport", "\(failed)")
        #expect(failed["result"]?["error"]?["message"] == JSON("header \"Authorization\" was not sent: the file \(file) does not exist"))
        #expect(client.request("allObjects", ["source": "kept"])["result"] == [["id": 1]])
    }
}
