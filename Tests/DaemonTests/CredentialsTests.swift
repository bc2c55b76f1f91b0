#if canImport(Glibc)
import Glibc
#endif
@testable import Daemon
@testable import DataSources
import JSONKit
import WireSchema
import JSONRPC
import Testing

/// A directory of the test's own, removed with everything in it when the value goes.
final class TokenDirectory {
    let path: String

    init() {
        var template = Array("/tmp/datasourced-credentials-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit {
        for name in (try? entries()) ?? [] { unlink(path + "/" + name) }
        rmdir(path)
    }

    private func entries() throws -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// Writes `bytes` to `name` in the directory (replacing it), and returns its path.
    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) -> String {
        let file = path + "/" + name
        let descriptor = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        precondition(descriptor >= 0, "cannot create \(file)")
        _ = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        return file
    }

    @discardableResult
    func write(_ name: String, _ text: String) -> String { write(name, Array(text.utf8)) }

    func remove(_ name: String) { unlink(path + "/" + name) }
}

/// Issue 28: header values from the environment or a file, read for each request, secret
/// everywhere, part of the cache key; Basic authorization from the base URL's credentials.
@Suite struct CredentialsTests {
    static func params(headers: JSON, baseURL: String = "http://api.invalid", extra: [(String, JSON)] = []) -> JSON {
        .object(
            [
                ("name", "p"), ("kind", "paginated"), ("identityKey", "id"),
                ("remoteConfiguration", ["baseURL": JSON(baseURL), "headers": headers]), ("apiPath", "/items"),
                ("pageSize", 2),
            ] + extra)
    }

    static func source(_ params: JSON, store: MemoryPageStore? = nil) throws -> (PaginatedDataSource, FakeLoader, Recorder) {
        let loader = FakeLoader()
        guard case .paginated(let configuration, let paginator) = try SourceSpec.decoding(createSourceParams: params).kind else {
            throw FieldError(field: "kind", expected: "paginated", got: nil, message: "not paginated")
        }
        let source = PaginatedDataSource(
            name: "p", identity: Identity(key: JSONKeyPath("id")), configuration: configuration,
            paginator: paginator, loader: loader)
        if let store { source.attachCache(store, key: CacheAndRefreshTests.key) }
        return (source, loader, Recorder().observing(source))
    }

    static let page = PaginatedStateMachineTests.page

    @Test func aValueFromTheEnvironmentIsReadForEachRequestWithoutItsTrailingNewline() throws {
        try ExternalValues.$environmentOverride.withValue(["DS_TEST_TOKEN": "tok-1\n"]) {
            let (source, loader, _) = try Self.source(
                Self.params(headers: ["Authorization": ["env": "DS_TEST_TOKEN", "prefix": "Bearer "]]))
            source.fetchData()
            #expect(loader.header("Authorization", of: 0) == "Bearer tok-1")
            loader.respond(0, json: Self.page([1, 2]))
            ExternalValues.$environmentOverride.withValue(["DS_TEST_TOKEN": "tok-2"]) {
                #expect(source.fetchNextPage())
                #expect(loader.header("Authorization", of: 1) == "Bearer tok-2", "a rotated token is used by the next request")
            }
        }
    }

    @Test func aValueFromAFileIsReadForEachRequestAndAFileGoneFailsTheFetchNamingIt() throws {
        let directory = TokenDirectory()
        let file = directory.write("token", "file-token-1\r\n")
        let (source, loader, recorder) = try Self.source(Self.params(headers: ["X-Workspace": ["file": JSON(file), "prefix": "ws "]]))
        source.fetchData()
        #expect(loader.header("X-Workspace", of: 0) == "ws file-token-1")
        loader.respond(0, json: Self.page([1, 2]))
        directory.write("token", "file-token-2\n")
        try #require(source.fetchNextPage())
        #expect(loader.header("X-Workspace", of: 1) == "ws file-token-2")
        loader.respond(1, json: Self.page([3, 4]))

        directory.remove("token")
        recorder.reset()
        #expect(source.fetchNextPage())
        #expect(loader.pending.count == 2, "nothing was sent")
        #expect(recorder.events.first == "p.will" && recorder.events.last == "p.failed")
        let error = try #require(recorder.errors.first)
        #expect(error["kind"] == "transport")
        #expect(error["message"]?.stringValue == "header \"X-Workspace\" was not sent: the file \(file) does not exist")
        #expect(error["url"] == "http://api.invalid/items?page=3&page_size=2")
        #expect(CacheAndRefreshTests.ids(source) == [1, 2, 3, 4], "the loaded rows stay")
        // Back again: the failed page is asked for again, with the file's value.
        directory.write("token", "file-token-3")
        try #require(source.fetchNextPage())
        #expect(loader.header("X-Workspace", of: 2) == "ws file-token-3")
    }

    @Test func aTildeIsTheHomeDirectory() throws {
        let directory = TokenDirectory()
        directory.write("token", "home-token\n")
        try ExternalValues.$environmentOverride.withValue(["HOME": directory.path]) {
            let (source, loader, _) = try Self.source(Self.params(headers: ["Authorization": ["file": "~/token", "prefix": "token "]]))
            source.fetchData()
            #expect(loader.header("Authorization", of: 0) == "token home-token")
            // describeSource names the file as given, never what it holds.
            #expect(
                source.summary["remoteConfiguration"]?["headers"] == [
                    "Accept": "application/json", "Authorization": ["file": "~/token", "prefix": "token "],
                ])
        }
    }

    @Test func aVariableUnsetAfterCreationFailsTheFetchNamingIt() throws {
        let params = Self.params(headers: ["Authorization": ["env": "DS_TEST_ROTATED", "prefix": "Bearer "]])
        let (source, loader, recorder) = try ExternalValues.$environmentOverride.withValue(["DS_TEST_ROTATED": "t0ps3cret"]) {
            try Self.source(params)
        }
        try ExternalValues.$environmentOverride.withValue([:]) {
            source.fetchData()
            #expect(loader.pending.isEmpty, "nothing was sent")
            #expect(recorder.events.first == "p.will" && recorder.events.last == "p.failed")
            let error = try #require(recorder.errors.first)
            #expect(
                error == [
                    "kind": "transport",
                    "message": "header \"Authorization\" was not sent: the environment variable DS_TEST_ROTATED is not set",
                    "url": "http://api.invalid/items?page=1&page_size=2",
                ])
            #expect(source.allObjects.isEmpty)
        }
    }

    @Test func valuesReadAreSecretInErrorsAndDescriptionsWhateverTheHeadersName() throws {
        try ExternalValues.$environmentOverride.withValue(["DS_TEST_WORKSPACE": "workspace-4711"]) {
            let (source, loader, recorder) = try Self.source(
                Self.params(headers: ["X-Workspace": ["env": "DS_TEST_WORKSPACE", "prefix": "ws "]]))
            source.fetchData()
            // What was read is secret on its own too: a server echoes the token, not "Bearer token".
            #expect(loader.pending[0].request.secretValues == ["ws workspace-4711", "workspace-4711"], "a recording learns them")
            loader.respond(0, status: 403, json: ["message": "workspace-4711 is not yours"])
            let error = try #require(recorder.errors.first)
            #expect(error["serverMessage"] == "<redacted> is not yours")
            #expect(error["body"] == #"{"message":"<redacted> is not yours"}"#)
            #expect(!source.summary.text().contains("workspace-4711"))
            #expect(source.summary["remoteConfiguration"]?["headers"]?["X-Workspace"] == ["env": "DS_TEST_WORKSPACE", "prefix": "ws "])
        }
    }

    /// Two tokens never share cached rows, and a response is stored under the token its request
    /// was sent with, even when the file changed while it was in flight.
    @Test func theValuesReadArePartOfTheCacheKey() throws {
        let directory = TokenDirectory()
        let file = directory.write("token", "alice")
        let params = Self.params(
            headers: ["Authorization": ["file": JSON(file), "prefix": "Bearer "]], extra: [("cache", ["enabled": true])])
        let store = MemoryPageStore()

        let (alice, aliceLoader, _) = try Self.source(params, store: store)
        alice.fetchData()
        directory.write("token", "bob")
        aliceLoader.respond(0, json: Self.page([1, 2]))
        #expect(store.entries.count == 1)
        #expect(store.entries.keys.first?.material == "test\ncredentials 12:Bearer alice", "stored under the value it was fetched with")
        #expect(store.entries.keys.first?.label == CacheAndRefreshTests.key.label)

        let (bob, bobLoader, _) = try Self.source(params, store: store)
        bob.fetchData()
        #expect(!bob.isStale && bob.allObjects == [Placeholder.loadingRow], "bob does not see alice's rows")
        bobLoader.respond(0, json: Self.page([7, 8]))
        #expect(store.entries.count == 2)

        directory.write("token", "alice")
        let (again, _, _) = try Self.source(params, store: store)
        again.fetchData()
        #expect(again.isStale && CacheAndRefreshTests.ids(again) == [1, 2, nil], "alice's rows, for alice")
    }

    @Test func aBaseURLsCredentialsAreSentAsBasicAuthorizationToItsOriginOnly() throws {
        let (source, loader, recorder) = try Self.source(
            Self.params(
                headers: [:], baseURL: "http://us%40er:p%3Ass-word@api.invalid",
                extra: [("pagination", ["strategy": "linkHeader", "allowCrossOrigin": true])]))
        source.fetchData()
        // base64("us@er:p:ss-word"): percent-decoded, as curl sends them.
        #expect(loader.header("Authorization", of: 0) == "Basic dXNAZXI6cDpzcy13b3Jk")
        loader.respond(0, json: Self.page([1, 2]), headers: [("Link", "<http://other.invalid/items?page=2>; rel=\"next\"")])
        try #require(source.fetchNextPage())
        #expect(loader.header("Authorization", of: 1) == nil, "never to another origin")
        loader.respond(1, status: 401, json: ["message": "p:ss-word is wrong"])
        #expect(recorder.errors.last?["serverMessage"] == "<redacted> is wrong", "the decoded password is secret too")

        let (explicit, explicitLoader, _) = try Self.source(
            Self.params(headers: ["Authorization": "Bearer given"], baseURL: "http://u:pw@api.invalid"))
        explicit.fetchData()
        #expect(explicitLoader.header("Authorization", of: 0) == "Bearer given", "a header the source sets wins, as curl's -H over -u")
    }

    @Test func base64IsRFC4648() {
        let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=", "foobar": "Zm9vYmFy"]
        for (text, encoded) in vectors { #expect(Base64.encoded(Array(text.utf8)) == encoded, "\(text)") }
        #expect(Base64.encoded([0xFF, 0xFE, 0xFD]) == "//79")
    }

    /// Every way a header value from outside can be wrong is refused at `createSource`, naming
    /// the member and the variable or file, never the value.
    @Test func createSourceRefusesEachBadValueNamingTheVariableOrFile() throws {
        let directory = TokenDirectory()
        let good = directory.write("good", "secret-in-file")
        let empty = directory.write("empty", "\n")
        let control = directory.write("control", "line-one\nline-two\n")
        let binary = directory.write("binary", [0x61, 0xFF, 0x62])
        let large = directory.write("large", [UInt8](repeating: 0x61, count: ExternalValues.maximumFileBytes + 1))
        let fifo = directory.path + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let field = "remoteConfiguration.headers.Authorization"
        let environment = ["DS_SET": "s3cret-env-value", "DS_EMPTY": "", "DS_CONTROL": "s3cret\nvalue"]
        let cases: [(JSON, String, String)] = [
            (3, field, "\"\(field)\" must be a string, or an object {env, prefix?} or {file, prefix?}, got an integer"),
            (
                [:], field + ".env",
                "missing \"\(field).env\": expected one of \"env\" (a variable of the daemon's environment) and \"file\" (a path)"
            ),
            (["env": 1], field + ".env", "\"\(field).env\" must be a string, got an integer"),
            (["env": "DS_SET", "file": JSON(good)], field + ".file", "\"\(field)\" must have one of \"env\" and \"file\", not both"),
            (["env": "A=B"], field + ".env", "\"\(field).env\" must be the name of an environment variable, got \"A=B\""),
            (["env": "DS_UNSET_28"], field + ".env", "\"\(field).env\": the environment variable DS_UNSET_28 is not set"),
            (["env": "DS_EMPTY"], field + ".env", "\"\(field).env\": the environment variable DS_EMPTY is empty"),
            (
                ["env": "DS_CONTROL"], field + ".env",
                "\"\(field).env\": the environment variable DS_CONTROL holds a line break or another control character, which a header value cannot carry"
            ),
            (["env": "DS_SET", "prefix": 1], field + ".prefix", "\"\(field).prefix\" must be a string, got an integer"),
            (
                ["env": "DS_SET", "prefix": "Bearer\r\n"], field + ".prefix",
                "\"\(field).prefix\" must not hold line breaks or other control characters"
            ),
            (
                ["env": "DS_SET", "prefx": "Bearer "], field + ".prefx",
                "unknown member \"\(field).prefx\"; did you mean \"\(field).prefix\"?"
            ),
            (
                ["file": "relative/token"], field + ".file",
                "\"\(field).file\": the path is relative: write an absolute path, or one from ~/ (the daemon's working directory is not the client's)"
            ),
            (
                ["file": "~bob/token"], field + ".file",
                "\"\(field).file\": the path starts with ~name, which is not expanded: write the path in full, or from ~/"
            ),
            (
                ["file": JSON(directory.path + "/missing")], field + ".file",
                "\"\(field).file\": the file \(directory.path)/missing does not exist"
            ),
            (
                ["file": JSON(good + "/x")], field + ".file",
                "\"\(field).file\": the file \(good)/x does not exist (a part of its path is not a directory)"
            ),
            (["file": JSON(directory.path)], field + ".file", "\"\(field).file\": the file \(directory.path) is a directory, not a file"),
            (
                ["file": JSON(fifo)], field + ".file",
                "\"\(field).file\": the file \(fifo) is not a regular file (a device, a FIFO or a socket)"
            ),
            (["file": JSON(large)], field + ".file", "\"\(field).file\": the file \(large) is larger than 65536 bytes"),
            (["file": JSON(empty)], field + ".file", "\"\(field).file\": the file \(empty) is empty"),
            (
                ["file": JSON(control)], field + ".file",
                "\"\(field).file\": the file \(control) holds a line break or another control character, which a header value cannot carry"
            ),
            (["file": JSON(binary)], field + ".file", "\"\(field).file\": the file \(binary) is not UTF-8 text"),
        ]
        try ExternalValues.$environmentOverride.withValue(environment) {
            for (value, expectedField, message) in cases {
                let refusal = try #require(
                    wireRefusal { _ = try SourceSpec.decoding(createSourceParams: Self.params(headers: ["Authorization": value])) },
                    "\(value) was accepted")
                #expect(refusal.code == ErrorCode.invalidParams, "\(value)")
                #expect(refusal.data?["field"] == JSON(expectedField), "\(value)")
                #expect(refusal.message == "Invalid params: " + message, "\(value)")
                let text = JSON(refusal.message).text() + (refusal.data?.text() ?? "")
                #expect(!text.contains("s3cret") && !text.contains("secret-in-file") && !text.contains("line-one"), "\(value): \(text)")
            }
            // The good ones are accepted.
            _ = try SourceSpec.decoding(createSourceParams: Self.params(headers: ["Authorization": ["env": "DS_SET"]]))
            _ = try SourceSpec.decoding(
                createSourceParams: Self.params(headers: ["Authorization": ["file": JSON(good), "prefix": "Bearer "]]))
        }
    }

    @Test func anUnsetHomeIsNamed() throws {
        ExternalValues.$environmentOverride.withValue(["HOME": ""]) {
            switch ExternalValues.expandedPath("~/token") {
            case .success(let path):
                // Without HOME the password database answers; either way the path is absolute.
                #expect(path.hasPrefix("/") && path.hasSuffix("/token"))
            case .failure(let problem):
                #expect(problem.message == "starts with ~, but the daemon has no home directory (HOME is not set)")
            }
        }
    }
}

/// A credential or TLS file is read whole up to its limit and refused past it; a file that
/// reports no size (as /proc's do) is read to its end.
@Suite struct ExternalFileReadingTests {
    @Test func aFileIsReadWholeUpToTheLimitAndRefusedPastIt() throws {
        let directory = TokenDirectory()
        let limit = ExternalValues.maximumFileBytes
        let full = directory.write("full", [UInt8](repeating: 0x61, count: limit))
        #expect(try ExternalValues.readFile(full).get().count == limit)
        let over = directory.write("over", [UInt8](repeating: 0x61, count: limit + 1))
        guard case .failure(let problem) = ExternalValues.readFile(over) else {
            Issue.record("a file past the limit was read")
            return
        }
        #expect(problem.message == "is larger than \(limit) bytes")
        // /proc files report a size of 0 and are read to their end: the limit holds by reading.
        #expect(try ExternalValues.readFile("/proc/self/status").get().isEmpty == false)
    }
}
