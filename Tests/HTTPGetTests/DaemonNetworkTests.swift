#if canImport(Glibc)
import Glibc
#endif
import Basics
import Foundation
import JSONKit
import NIOHTTP1
import Replay
import Testing

/// The built daemon, spawned with an environment of the test's choosing, on loopback servers:
/// the User-Agent it sends, compression, a proxy from its environment, proxy credentials that
/// never show, and its memory under a gzip bomb.
@Suite struct DaemonNetworkTests {
    /// Answers every GET with an empty JSON list.
    static func emptyList() throws -> ScriptedHTTPServer {
        try ScriptedHTTPServer { _ in ScriptedHTTPServer.Reply(headers: [("Content-Type", "application/json")], parts: [Array("[]".utf8)]) }
    }

    @Test func theUserAgentNamesTheDaemonAndItsClientUnlessTheSourceSetsOne() throws {
        let server = try Self.emptyList()
        defer { server.stop() }
        for (clientInfo, expectedClient) in [
            (JSON.null, ""), (["name": "datasourced.nvim", "version": "0.4.0"], " datasourced.nvim/0.4.0"),
            (["name": "datasourced-client (python)"], " datasourced-client-python"),
        ] {
            let daemon = try SpawnedDaemon()
            let initialized = daemon.request("initialize", clientInfo.isNull ? [:] : ["clientInfo": clientInfo])
            let version = try #require(initialized["result"]?["serverInfo"]?["version"]?.stringValue)
            #expect(daemon.createRemote("plain", server.baseURL)["result"] != nil)
            #expect(daemon.createRemote("own", server.baseURL, remote: ["headers": ["User-Agent": "my-tool/2"]])["result"] != nil)
            for name in ["plain", "own"] {
                #expect(daemon.request("fetchData", ["source": JSON(name), "wait": true])["result"]?["outcome"] == "finished")
            }
            let agents = server.requests.suffix(2).map { $0.headers["user-agent"] }
            #expect(agents == [["datasourced/\(version)\(expectedClient)"], ["my-tool/2"]], "clientInfo \(clientInfo)")
        }
    }

    @Test func aServerThatGzipsUnaskedIsReadAndCompressionFalseSendsNoAcceptEncoding() throws {
        let rows = "[" + (1...500).map { "{\"id\": \($0)}" }.joined(separator: ",") + "]"
        let server = try ScriptedHTTPServer { _ in
            ScriptedHTTPServer.Reply(
                headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip")],
                parts: [Deflate.compress(Array(rows.utf8), .gzip)])
        }
        defer { server.stop() }
        let daemon = try SpawnedDaemon()
        _ = daemon.request("initialize")
        let created = daemon.createRemote("unasked", server.baseURL, remote: ["compression": false])
        #expect(created["result"]?["remoteConfiguration"]?["compression"] == false, "describeSource shows it")
        #expect(daemon.createRemote("asked", server.baseURL)["result"]?["remoteConfiguration"]?["compression"] == nil)
        for name in ["unasked", "asked"] {
            #expect(daemon.request("fetchData", ["source": JSON(name), "wait": true])["result"]?["outcome"] == "finished", "\(name)")
            #expect(daemon.request("allObjects", ["source": JSON(name)])["result"]?.count == 500, "\(name)")
        }
        #expect(server.requests.map { $0.headers["accept-encoding"] } == [[], ["gzip, deflate"]])
    }

    @Test func aGzipBombFailsTooLargeWhileTheDaemonsMemoryStaysBounded() throws {
        // 16 GiB of zeros, 16 MB gzipped; the limit is 8 MiB decoded.
        let bomb = Deflate.zeroBomb()
        let server = try ScriptedHTTPServer { _ in
            ScriptedHTTPServer.Reply(headers: [("Content-Encoding", "gzip")], parts: [bomb.head], repeated: (16 << 10, bomb.piece))
        }
        defer { server.stop() }
        let daemon = try SpawnedDaemon()
        _ = daemon.request("initialize")
        _ = daemon.createRemote("bomb", server.baseURL, extra: ["limits": ["maxBodyBytes": JSON(8 << 20)]])
        let result = daemon.request("fetchData", ["source": "bomb", "wait": true])["result"]
        #expect(result?["outcome"] == "failed")
        #expect(result?["error"]?["kind"] == "tooLarge")
        #expect(result?["error"]?["message"] == "the response body exceeds the limit of 8388608 bytes once decoded (gzip)")
        #expect(result?["error"]?["maxBodyBytes"] == 8388608)
        // The peak, not the present: decoding the whole body would have taken 16 GiB.
        let peak = try #require(daemon.statusKilobytes("VmHWM"))
        #expect(peak < 128 << 10, "the daemon's peak RSS was \(peak) kB")
        #expect(server.finishedResponses == 0)
    }

    @Test func theDaemonGoesThroughTheProxyItsEnvironmentNamesUnlessTheSourceSaysNull() throws {
        let proxy = try ConnectProxy(), server = try Self.emptyList()
        defer {
            proxy.stop()
            server.stop()
        }
        let daemon = try SpawnedDaemon(environment: ["HTTP_PROXY": "http://127.0.0.1:\(proxy.port)"])
        _ = daemon.request("initialize")
        _ = daemon.createRemote("proxied", server.baseURL)
        let direct = daemon.createRemote("direct", server.baseURL, remote: ["proxy": .null])
        #expect(direct["result"]?["remoteConfiguration"]?["proxy"] == .null)
        #expect(daemon.request("fetchData", ["source": "proxied", "wait": true])["result"]?["outcome"] == "finished")
        #expect(proxy.connects == ["127.0.0.1:\(server.port)"])
        #expect(daemon.request("fetchData", ["source": "direct", "wait": true])["result"]?["outcome"] == "finished")
        #expect(proxy.connects.count == 1, "proxy: null is a direct connection")
        #expect(server.requests.count == 2)
    }

    @Test func proxyCredentialsAppearInNoMessageLogOrDescription() throws {
        let required = "Basic " + Array("alice:right-password".utf8).base64
        let proxy = try ConnectProxy(.init(requiredAuthorization: required))
        let server = try Self.emptyList()
        defer {
            proxy.stop()
            server.stop()
        }
        let recording = FileManager.default.temporaryDirectory.appendingPathComponent("proxy-credentials-\(getpid()).json").path
        defer { try? FileManager.default.removeItem(atPath: recording) }
        let daemon = try SpawnedDaemon(arguments: ["--log-level", "trace", "--record", recording])
        _ = daemon.request("initialize")
        let wrong = daemon.createRemote(
            "wrong", server.baseURL, remote: ["proxy": JSON("http://alice:s3cr3t-wrong@127.0.0.1:\(proxy.port)")])
        #expect(wrong["result"]?["remoteConfiguration"]?["proxy"] == JSON("http://127.0.0.1:\(proxy.port)"))
        _ = daemon.createRemote("right", server.baseURL, remote: ["proxy": JSON("http://alice:right-password@127.0.0.1:\(proxy.port)/")])
        let failed = daemon.request("fetchData", ["source": "wrong", "wait": true])["result"]
        #expect(failed?["error"]?["kind"] == "proxy")
        #expect(
            failed?["error"]?["message"]
                == JSON(
                    "the proxy 127.0.0.1:\(proxy.port) answered 407 Proxy Authentication Required: it refused the credentials in the proxy URL"
                ))
        #expect(daemon.request("fetchData", ["source": "right", "wait": true])["result"]?["outcome"] == "finished")
        #expect(proxy.authorizations.last == required)
        _ = daemon.request("describeSource", ["source": "wrong"])
        _ = daemon.request("listSources")
        // A refusal at createSource echoes the URL without them too.
        let refused = daemon.createRemote("socks", server.baseURL, remote: ["proxy": "socks5://alice:s3cr3t-wrong@127.0.0.1:1080"])
        #expect(refused["error"]?["data"]?["field"] == "remoteConfiguration.proxy")
        #expect(refused["error"]?["data"]?["got"] == "socks5://127.0.0.1:1080")
        let logged = daemon.finish()
        let recorded = try String(contentsOfFile: recording, encoding: .utf8)
        #expect(recorded.contains("127.0.0.1:\(proxy.port)"), "the recording holds the session")
        let said = daemon.received.map { $0.text() }.joined(separator: "\n") + logged + recorded
        for secret in ["s3cr3t-wrong", "right-password", Array("alice:s3cr3t-wrong".utf8).base64, String(required.dropFirst(6))] {
            #expect(!said.contains(secret), "\(secret) appeared")
        }
    }
}

/// `datasourced serve` with an environment of the test's choosing (no proxy variable
/// unless given), driven a request at a time.
final class SpawnedDaemon {
    private let process: SpawnedProcess
    private var inputIsOpen = true, reaped = false
    private var buffer: [UInt8] = []
    private var nextID = 1
    /// Every message the daemon sent, in order.
    private(set) var received: [JSON] = []

    /// The daemon built beside the tests, or $DATASOURCED (as Tests/Schema takes it: to run these against another build).
    static let path =
        ProcessInfo.processInfo.environment["DATASOURCED"]
        ?? URL(fileURLWithPath: Replayer.currentExecutable()).deletingLastPathComponent().appendingPathComponent("datasourced").path

    init(environment: [String: String] = [:], arguments: [String] = []) throws {
        var inherited = ProcessInfo.processInfo.environment.filter { !$0.key.lowercased().hasSuffix("_proxy") }
        inherited.merge(environment) { $1 }
        process = try SpawnedProcess(
            command: [Self.path, "serve", "--no-cache"] + arguments, environment: inherited.map { "\($0.key)=\($0.value)" })
    }

    deinit {
        closeInput()
        if !reaped {
            process.kill()
            process.wait()
        }
        close(process.standardOutput)
        close(process.standardError)
    }

    private func closeInput() {
        if inputIsOpen { close(process.standardInput) }
        inputIsOpen = false
    }

    /// Sends a request and returns its response, or `{}` after 30 s without one.
    @discardableResult
    func request(_ method: String, _ params: JSON = [:]) -> JSON {
        let id = nextID
        nextID += 1
        let body = Array(JSON.object([("jsonrpc", "2.0"), ("id", JSON(id)), ("method", JSON(method)), ("params", params)]).encoded())
        _ = try? FileDescriptor(rawValue: process.standardInput).writeAll(Array("Content-Length: \(body.count)\r\n\r\n".utf8) + body)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            guard let message = nextMessage(until: deadline) else { break }
            received.append(message)
            if message["id"] == JSON(id) { return message }
        }
        Issue.record("no answer to \(method)")
        return [:]
    }

    func createRemote(_ name: String, _ baseURL: String, remote: JSON = [:], extra: JSON = [:]) -> JSON {
        var configuration = remote.setting("baseURL", to: JSON(baseURL))
        if configuration["headers"] == nil { configuration = configuration.setting("headers", to: [:]) }
        var params: JSON = ["name": JSON(name), "kind": "remote", "apiPath": "/items", "remoteConfiguration": configuration]
        for (key, value) in extra.objectMembers ?? [] { params = params.setting(key, to: value) }
        return request("createSource", params)
    }

    /// A line of /proc/PID/status such as VmHWM, in kB.
    func statusKilobytes(_ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(process.pid)/status", encoding: .utf8) else { return nil }
        let line = text.split(separator: "\n").first { $0.hasPrefix(field + ":") }
        return line?.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    }

    /// Ends the session (stdin closed) and returns what the daemon wrote on stderr.
    func finish() -> String {
        closeInput()
        // Both read before the wait: a daemon whose stdout or stderr pipe is full would never exit.
        let logged = process.readOutputs().standardError
        process.wait()
        reaped = true
        return String(decoding: logged, as: UTF8.self)
    }

    private func nextMessage(until deadline: Date) -> JSON? {
        let descriptor = process.standardOutput
        while true {
            if let message = frame() { return message }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let remaining = Int32(max(0, min(1000, deadline.timeIntervalSinceNow * 1000)))
            guard remaining > 0 else { return nil }
            guard poll(&poller, 1, remaining) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            buffer += chunk[..<count]
        }
    }

    /// The first whole frame in `buffer`, taken out of it.
    private func frame() -> JSON? {
        guard let end = buffer.firstRange(of: Array("\r\n\r\n".utf8)) else { return nil }
        let header = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
        guard let line = header.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("content-length:") }),
            let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)),
            buffer.count - end.upperBound >= length
        else { return nil }
        let body = Array(buffer[end.upperBound..<end.upperBound + length])
        buffer.removeFirst(end.upperBound + length)
        return try? JSON.parse(body)
    }
}
