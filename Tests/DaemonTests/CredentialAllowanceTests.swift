#if canImport(Glibc)
import Glibc
#endif
import Basics
@testable import Daemon
@testable import DataSources
import JSONKit
import JSONRPC
import Testing

/// Values read from the environment or a file go only to origins the person allowed; secrets
/// go only to the source's own origin; the allowances file is the daemon's, and read with care.
@Suite struct CredentialAllowanceTests {
    typealias Credentials = CredentialsTests

    /// An allowances file in a directory of the test's own (not yet made: `allow` makes it).
    static func allowances(in directory: TokenDirectory) -> CredentialAllowances {
        CredentialAllowances(path: directory.path + "/config/datasourced/allowed-credentials.json")
    }

    static func cleanUp(_ allowances: CredentialAllowances) {
        guard let path = allowances.path else { return }
        unlink(path)
        let folder = String(path[..<path.lastIndex(of: "/")!])
        rmdir(folder)
        rmdir(String(folder[..<folder.lastIndex(of: "/")!]))
    }

    @Test func aCredentialNotAllowedFailsTheLoadBeforeAnythingIsSentAndOneAllowedIsSent() throws {
        let directory = TokenDirectory()
        let allowances = Self.allowances(in: directory)
        defer { Self.cleanUp(allowances) }
        try ExternalValues.$environmentOverride.withValue(["DS_ALLOWED_TOKEN": "tok-allowed"]) {
            let (source, loader, recorder) = try Credentials.source(
                Credentials.params(headers: ["X-Api-Key": ["env": "DS_ALLOWED_TOKEN"]], baseURL: "https://api.example.com"))
            source.credentialPolicy = allowances
            source.fetchData()
            #expect(loader.pending.isEmpty, "nothing was sent")
            #expect(recorder.events.first == "p.will" && recorder.events.last == "p.failed")
            let error = try #require(recorder.errors.first)
            #expect(error["kind"] == "credentialNotAllowed")
            #expect(error["credential"] == ["env": "DS_ALLOWED_TOKEN"])
            #expect(error["origin"] == "https://api.example.com", "the default port is not written")
            #expect(error["message"]?.stringValue?.contains("the environment variable DS_ALLOWED_TOKEN") == true)
            #expect(!error.text().contains("tok-allowed"))

            // Allowed for another origin: still not sent here.
            try allowances.allow(.init(credential: .environment("DS_ALLOWED_TOKEN"), origin: "https://evil.example.com"))
            source.fetchData()
            #expect(loader.pending.isEmpty)

            try allowances.allow(.init(credential: .environment("DS_ALLOWED_TOKEN"), origin: "https://api.example.com"))
            source.fetchData()
            #expect(loader.header("X-Api-Key", of: 0) == "tok-allowed")
        }
    }

    @Test func aFileIsAllowedByItsPathWithTildeExpanded() throws {
        let directory = TokenDirectory()
        directory.write("token", "file-token")
        let allowances = Self.allowances(in: directory)
        defer { Self.cleanUp(allowances) }
        try ExternalValues.$environmentOverride.withValue(["HOME": directory.path]) {
            let (source, loader, recorder) = try Credentials.source(
                Credentials.params(headers: ["PRIVATE-TOKEN": ["file": "~/token"]], baseURL: "http://127.0.0.1:8080"))
            source.credentialPolicy = allowances
            source.fetchData()
            #expect(recorder.errors.first?["credential"] == ["file": JSON(directory.path + "/token")], "named as it is opened")
            #expect(recorder.errors.first?["origin"] == "http://127.0.0.1:8080")
            try allowances.allow(.init(credential: .file(directory.path + "/token"), origin: "http://127.0.0.1:8080"))
            source.fetchData()
            #expect(loader.header("PRIVATE-TOKEN", of: 0) == "file-token")
        }
    }

    /// A link a cloned repository ships is asked about, and allowed, as the file it leads to;
    /// pointed elsewhere later, it is not allowed any more.
    @Test func aFileIsAllowedAsTheFileItsLinksLeadTo() throws {
        let directory = TokenDirectory()
        let target = directory.write("credentials", "secret-in-target")
        let other = directory.write("other", "other-secret")
        let link = directory.path + "/token-link"
        #expect(symlink(target, link) == 0)
        defer { unlink(link) }
        let allowances = Self.allowances(in: directory)
        defer { Self.cleanUp(allowances) }
        let (source, loader, recorder) = try Credentials.source(
            Credentials.params(headers: ["PRIVATE-TOKEN": ["file": JSON(link)]], baseURL: "https://api.example.com"))
        source.credentialPolicy = allowances
        source.fetchData()
        #expect(recorder.errors.first?["credential"] == ["file": JSON(target)], "the file the link leads to")
        #expect(recorder.errors.first?["message"]?.stringValue?.contains("the file \(link) (\(target))") == true)
        // Allowed through the link's path: held as the target.
        try allowances.allow(.init(credential: .file(link), origin: "https://api.example.com"))
        #expect(allowances.entries == [.init(credential: .file(target), origin: "https://api.example.com")])
        source.fetchData()
        #expect(loader.header("PRIVATE-TOKEN", of: 0) == "secret-in-target")
        // The link pointed at another file: not allowed.
        unlink(link)
        #expect(symlink(other, link) == 0)
        recorder.reset()
        source.fetchData()
        #expect(loader.pending.count == 1, "nothing more was sent")
        #expect(recorder.errors.last?["credential"] == ["file": JSON(other)])
    }

    /// A value read from outside is not routed through the spec's own proxy where that proxy
    /// could read it; the environment's proxy is the person's own.
    @Test func aSpecsOwnProxyIsRefusedForCredentialsItCouldRead() throws {
        let directory = TokenDirectory()
        let ca = directory.write("ca.pem", "-----BEGIN CERTIFICATE-----\nTUlJQmFzZTY0\nPT0=\n-----END CERTIFICATE-----\n")
        try ExternalValues.$environmentOverride.withValue(["DS_PROXY_TOKEN": "t"]) {
            let header: JSON = ["X-Api-Key": ["env": "DS_PROXY_TOKEN"]]
            func params(_ baseURL: String, proxy: JSON?, tls: JSON? = nil) -> JSON {
                var remote: [(String, JSON)] = [("baseURL", JSON(baseURL)), ("headers", header)]
                if let proxy { remote.append(("proxy", proxy)) }
                if let tls { remote.append(("tls", tls)) }
                return ["name": "p", "kind": "remote", "remoteConfiguration": .object(remote), "apiPath": "/x"]
            }
            for refused in [
                params("http://api.example.com", proxy: "http://evil.example:3128"),
                params("https://api.example.com", proxy: "http://evil.example:3128", tls: ["caFile": JSON(ca)]),
            ] {
                do {
                    _ = try SourceSpec.decoding(createSourceParams: refused)
                    Issue.record("accepted: \(refused)")
                } catch let error as ResponseError {
                    #expect(error.data?["field"] == "remoteConfiguration.proxy", "\(error)")
                }
            }
            for accepted in [
                params("https://api.example.com", proxy: "http://corporate.example:3128"),
                params("http://api.example.com", proxy: nil), params("http://api.example.com", proxy: .null),
            ] {
                #expect(throws: Never.self) { try SourceSpec.decoding(createSourceParams: accepted) }
            }
        }
    }

    /// jansson's parse error quotes the text where it stopped: an echoed token's start was
    /// shown in `message` (found by the redaction review); and a server echoing the token of a
    /// literal `Authorization: Bearer TOKEN` showed it.
    @Test func aParseErrorAndAnEchoedBearerTokenShowNoSecret() throws {
        try ExternalValues.$environmentOverride.withValue(["DS_PARSE_TOKEN": "ghp_ab/cd+ef/GH12"]) {
            let (source, loader, recorder) = try Credentials.source(
                Credentials.params(headers: ["X-Api-Key": ["env": "DS_PARSE_TOKEN"]]))
            source.fetchData()
            let body = Array(#"{"ok": true "ghp_ab/cd+ef/GH12 is yours"}"#.utf8)
            let response = RemoteResponse(url: loader.requestedURLs[0], status: 200, contentType: "application/json", body: body)
            loader.pending[0].completion(loader.pending[0].decode(response))
            let error = try #require(recorder.errors.first)
            #expect(error["kind"] == "decode")
            #expect(!error.text().contains("ghp_ab"), "\(error)")
            #expect(error["column"] != nil, "where it stopped is still said")
        }
        let (source, loader, recorder) = try Credentials.source(
            Credentials.params(headers: ["Authorization": "Bearer literal-token-42"]))
        source.fetchData()
        loader.respond(0, status: 401, json: ["message": "literal-token-42 has expired"])
        let error = try #require(recorder.errors.first)
        #expect(error["serverMessage"] == "<redacted> has expired")
        #expect(!error.text().contains("literal-token-42"))
    }

    @Test func theFileIsMadePrivateAndAnotherDaemonsAllowanceIsSeen() throws {
        let directory = TokenDirectory()
        let mine = Self.allowances(in: directory)
        defer { Self.cleanUp(mine) }
        let path = try #require(mine.path)
        #expect(!mine.allows(.environment("A"), to: "https://a.example"))
        // Another daemon (another value over the same file) allows it.
        let other = CredentialAllowances(path: path)
        try other.allow(.init(credential: .environment("A"), origin: "https://a.example"))
        try other.allow(.init(credential: .environment("B"), origin: "https://b.example:8443"))
        #expect(mine.allows(.environment("A"), to: "https://a.example"), "read again once it changed")
        #expect(mine.allows(.environment("B"), to: "https://b.example:8443"))
        #expect(!mine.allows(.environment("B"), to: "https://b.example"))
        var status = stat()
        #expect(stat(path, &status) == 0 && status.st_mode & 0o777 == 0o600)
        let folder = String(path[..<path.lastIndex(of: "/")!])
        #expect(stat(folder, &status) == 0 && status.st_mode & 0o777 == 0o700)
        let bytes = try #require(FileDescriptor.readWhole(path))
        let text = try #require(String(validating: bytes, as: UTF8.self))
        #expect(text.contains(#""version": 1"#) && text.contains(#""env": "B""#))
        #expect(FileManagerless.entries(folder) == ["allowed-credentials.json"], "no temporary file is left")
    }

    @Test func aFileOthersMayWriteOrOfAnotherFormAllowsNothing() throws {
        let directory = TokenDirectory()
        let good = #"{"version": 1, "allowed": [{"env": "A", "origin": "https://a.example"}]}"#
        let file = directory.write("allowed.json", good)
        let allowances = CredentialAllowances(path: file)
        #expect(allowances.allows(.environment("A"), to: "https://a.example"))

        chmod(file, 0o666)
        directory.write("allowed.json", good + " ")  // a change, so that it is read again
        chmod(file, 0o666)
        #expect(!allowances.allows(.environment("A"), to: "https://a.example"), "writable by others: not trusted")

        for bad in [
            #"{"version": 2, "allowed": [{"env": "A", "origin": "https://a.example"}]}"#,
            #"{"version": 1, "allowed": [{"env": "A", "file": "/x", "origin": "https://a.example"}]}"#,
            #"{"version": 1, "allowed": [{"env": "A", "origin": "https://a.example/path"}]}"#,
            #"{"version": 1, "allowed": [{"file": "relative", "origin": "https://a.example"}]}"#,
            "[1,2", String(repeating: "[", count: 100),
        ] {
            let path = directory.write("bad.json", bad)
            chmod(path, 0o600)
            #expect(!CredentialAllowances(path: path).allows(.environment("A"), to: "https://a.example"), "\(bad)")
            if case .success = CredentialAllowances.read(path) { Issue.record("\(bad) was read") }
        }
        // A file that cannot be trusted is not written over either.
        let refused = directory.write("refused.json", "[1,2")
        #expect(throws: CredentialAllowances.WriteProblem.self) {
            try CredentialAllowances(path: refused).allow(.init(credential: .environment("A"), origin: "https://a.example"))
        }
    }

    @Test func originsAreNormalizedAndEverythingElseRefused() {
        #expect(CredentialAllowances.origin("https://API.GitHub.com") == "https://api.github.com")
        #expect(CredentialAllowances.origin("https://api.github.com:443/") == "https://api.github.com")
        #expect(CredentialAllowances.origin("http://127.0.0.1:8080") == "http://127.0.0.1:8080")
        #expect(CredentialAllowances.origin("http://[::1]:80") == "http://[::1]")
        for bad in [
            "ftp://a.example", "https://a.example/x", "https://u:p@a.example", "https://a.example?q", "https://", "https://a.example:0",
            "https://a.example:99999", "a.example", "https://a .example", "https://a.example#f",
        ] {
            #expect(CredentialAllowances.origin(bad) == nil, "\(bad)")
        }
    }

    /// A next URL that `allowCrossOrigin` lets leave gets no secret: no value read from
    /// outside, no header secret by its name, no Basic authorization. Seen failing before the
    /// fix, when every header went with it.
    @Test func aNextURLOnAnotherOriginGetsNoSecretEvenWhenAllowed() throws {
        try ExternalValues.$environmentOverride.withValue(["DS_NEXT_TOKEN": "next-token"]) {
            let (source, loader, _) = try Credentials.source(
                Credentials.params(
                    headers: ["X-Api-Key": ["env": "DS_NEXT_TOKEN"], "X-Auth-Token": "literal-token", "X-Trace": "t"],
                    baseURL: "https://user:pw@api.example.com",
                    extra: [
                        ("pagination", ["strategy": "nextURL", "nextURLPath": "next", "allowCrossOrigin": true]), ("keyPath", "items"),
                        ("queryParameters", ["api_key": "query-secret", "q": "x"]),
                    ]))
            source.fetchData()
            #expect(loader.header("X-Api-Key", of: 0) == "next-token")
            #expect(loader.header("X-Auth-Token", of: 0) == "literal-token")
            #expect(loader.header("Authorization", of: 0)?.hasPrefix("Basic ") == true)
            #expect(loader.pending[0].request.originBoundHeaders == ["x-api-key", "x-auth-token", "authorization"])
            loader.respond(0, json: ["items": [["id": 1]], "next": "https://cdn.example.net/items?page=2"])
            #expect(source.fetchNextPage())
            #expect(loader.requestedURLs[0].contains("api_key=query-secret"), "the source's own origin gets it")
            #expect(loader.requestedURLs.last == "https://cdn.example.net/items?page=2&q=x", "no secret query parameter")
            #expect(loader.header("X-Api-Key", of: 1) == nil)
            #expect(loader.header("X-Auth-Token", of: 1) == nil)
            #expect(loader.header("Authorization", of: 1) == nil)
            #expect(loader.header("X-Trace", of: 1) == "t", "a header that is not secret still goes")
        }
    }

    /// Seen failing before the fix: each of these failed as `crossOrigin`.
    @Test func anUnusableNextURLFailsAsTransport() throws {
        for next in ["file:///etc/passwd", "javascript:alert(1)", "http://api.invalid:0/x", "http://api.invalid:99999/x", "http://[::1"] {
            let (source, loader, recorder) = try Credentials.source(
                Credentials.params(
                    headers: [:], extra: [("pagination", ["strategy": "nextURL", "nextURLPath": "next"]), ("keyPath", "items")]))
            source.fetchData()
            loader.respond(0, json: ["items": [["id": 1]], "next": JSON(next)])
            #expect(source.fetchNextPage() || recorder.errors.count == 1)
            let error = try #require(recorder.errors.last, "\(next)")
            #expect(error["kind"] == "transport", "\(next): \(error)")
            #expect(loader.pending.count == 1, "\(next) was not requested")
        }
    }

    @Test func allowCredentialOverTheWireRecordsTheAllowanceAndRefusesBadParams() throws {
        let directory = TokenDirectory()
        let allowances = Self.allowances(in: directory)
        defer { Self.cleanUp(allowances) }
        let client = WireClient(
            fetcher: ScriptedFetcher(), options: DaemonOptions(credentialAllowances: allowances, requiresCredentialAllowance: true))
        _ = client.request("initialize")
        let allowed = client.request("allowCredential", ["env": "GITHUB_TOKEN", "origin": "https://API.github.com/"])
        #expect(
            allowed["result"] == ["env": "GITHUB_TOKEN", "origin": "https://api.github.com", "path": JSON(allowances.path!)])
        #expect(allowances.entries == [.init(credential: .environment("GITHUB_TOKEN"), origin: "https://api.github.com")])
        let cases: [(JSON, String)] = [
            (["origin": "https://a.example"], "env"),
            (["env": "A", "file": "/x", "origin": "https://a.example"], "file"),
            (["env": "A=B", "origin": "https://a.example"], "env"),
            (["file": "relative/token", "origin": "https://a.example"], "file"),
            (["env": "A"], "origin"),
            (["env": "A", "origin": "https://bob:hunter2@a.example"], "origin"),
            (["env": "A", "origin": "https://a.example", "extra": 1], "extra"),
        ]
        for (params, field) in cases {
            let answer = client.request("allowCredential", params)
            #expect(answer["error"]?["code"] == JSON(ErrorCode.invalidParams), "\(params)")
            #expect(answer["error"]?["data"]?["field"] == JSON(field), "\(params): \(answer)")
            #expect(!answer.text().contains("hunter2"), "a password is never shown")
        }
        #expect(allowances.entries.count == 1, "nothing refused was recorded")
    }

    @Test func withoutAPlaceForAllowancesAllowCredentialIsAnInternalErrorAndNothingIsAllowed() {
        let nowhere = CredentialAllowances(path: nil)
        #expect(!nowhere.allows(.environment("A"), to: "https://a.example"))
        let client = WireClient(
            fetcher: ScriptedFetcher(), options: DaemonOptions(credentialAllowances: nowhere, requiresCredentialAllowance: true))
        _ = client.request("initialize")
        let answer = client.request("allowCredential", ["env": "A", "origin": "https://a.example"])
        #expect(answer["error"]?["code"] == JSON(ErrorCode.internalError))
        #expect(answer["error"]?["message"]?.stringValue?.contains("set HOME or XDG_CONFIG_HOME") == true)
    }

    @Test func theDefaultPathFollowsXDG() {
        #expect(
            CredentialAllowances.defaultPath(environment: ["XDG_CONFIG_HOME": "/x/config", "HOME": "/home/me"].get)
                == "/x/config/datasourced/allowed-credentials.json")
        #expect(
            CredentialAllowances.defaultPath(environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/home/me"].get)
                == "/home/me/.config/datasourced/allowed-credentials.json")
        #expect(CredentialAllowances.defaultPath(environment: [:].get) == nil)
    }

    /// Seen failing before the fix: the password was echoed in createSource's and
    /// describeSource's results, and never sent.
    @Test func credentialsInAnAPIPathAreRefusedWithoutShowingThePassword() {
        for apiPath in ["http://bob:PW-secret@api.example.com/x", "//bob:PW-secret@api.example.com/x", "https://bob@api.example.com/x"] {
            let params: JSON = [
                "name": "p", "kind": "remote", "remoteConfiguration": ["baseURL": "http://api.example.com"], "apiPath": JSON(apiPath),
            ]
            do {
                _ = try SourceSpec.decoding(createSourceParams: params)
                Issue.record("\(apiPath) was accepted")
            } catch let error as ResponseError {
                #expect(error.data?["field"] == "apiPath", "\(error)")
                #expect(!error.message.contains("PW-secret") && !(error.data?.text().contains("PW-secret") ?? false), "\(error)")
            } catch {
                Issue.record("\(apiPath): \(error)")
            }
        }
    }
}

extension Dictionary where Key == String, Value == String {
    /// The value for a name: an environment as `defaultPath(environment:)` reads one.
    var get: (String) -> String? { { self[$0] } }
}

/// What the tests ask of the file system without Foundation.
enum FileManagerless {
    /// The names in a directory, sorted, without `.` and `..`.
    static func entries(_ directory: String) -> [String] {
        guard let handle = opendir(directory) else { return [] }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != ".", name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}

extension FileDescriptor {
    /// The whole file at `path`, nil when it cannot be read.
    static func readWhole(_ path: String) -> [UInt8]? {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { Glibc.close(descriptor) }
        return try? FileDescriptor(rawValue: descriptor).readToEnd()
    }
}
