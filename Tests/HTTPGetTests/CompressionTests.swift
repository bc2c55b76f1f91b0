import DataSources
import HTTPGet
import NIOHTTP1
import Testing

/// Accept-Encoding, and gzip and deflate bodies decoded as they arrive, asked for or not,
/// within the limit on the decoded size.
@Suite(.serialized) final class CompressionTests {
    let client = HTTPGetClient(environment: [:])

    deinit { client.shutdown() }

    static let page: [UInt8] = Array(
        ("{\"items\": [" + (1...2000).map { "{\"id\": \($0), \"name\": \"item \($0)\"}" }.joined(separator: ", ") + "]}").utf8)

    func get(
        _ url: String, headers: [(name: String, value: String)] = [], compression: Bool = true,
        maximumBodySize: Int = 1 << 20
    ) async -> Result<RemoteResponse, FetchError> {
        var request = RemoteRequest(url: url, headers: headers, timeoutSeconds: 20, maximumBodySize: maximumBodySize)
        request.compression = compression
        return await withCheckedContinuation { continuation in
            _ = client.fetch(request) { continuation.resume(returning: $0) }
        }
    }

    /// A server that answers every GET with `body` under `Content-Encoding: coding`, in parts
    /// of `partSize` bytes, whatever the request asked for.
    static func server(coding: String, body: [UInt8], partSize: Int = 1 << 14, contentLength: Bool = true) throws -> ScriptedHTTPServer {
        try ScriptedHTTPServer { _ in
            var headers = [("Content-Type", "application/json"), ("Content-Encoding", coding)]
            if contentLength { headers.append(("Content-Length", "\(body.count)")) }
            let parts = stride(from: 0, to: body.count, by: partSize).map { Array(body[$0..<min($0 + partSize, body.count)]) }
            return ScriptedHTTPServer.Reply(headers: headers, parts: parts)
        }
    }

    @Test func acceptEncodingIsSentUnlessTurnedOffOrGivenByTheCaller() async throws {
        let server = try ScriptedHTTPServer { _ in ScriptedHTTPServer.Reply(parts: [Array("{}".utf8)]) }
        defer { server.stop() }
        _ = await get(server.baseURL + "/asked")
        _ = await get(server.baseURL + "/off", compression: false)
        _ = await get(server.baseURL + "/own", headers: [(name: "Accept-Encoding", value: "identity")])
        let sent = server.requests.map { ($0.uri, $0.headers["accept-encoding"]) }
        #expect(sent.map(\.0) == ["/asked", "/off", "/own"])
        #expect(sent.map(\.1) == [["gzip, deflate"], [], ["identity"]])
    }

    @Test func aGzipBodyIsDecodedWhetherItWasAskedForOrNot() async throws {
        let server = try Self.server(coding: "gzip", body: Deflate.compress(Self.page, .gzip))
        defer { server.stop() }
        for compression in [true, false] {
            guard case .success(let response) = await get(server.baseURL + "/items", compression: compression) else {
                Issue.record("compression \(compression): failed")
                continue
            }
            #expect(response.body == Self.page, "compression \(compression)")
            // They describe the wire; the body handed on is the decoded one.
            #expect(response.headerValues("content-encoding").first == nil)
            #expect(response.headerValues("content-length").first == nil)
            #expect(response.headerValues("content-type").first == "application/json")
        }
    }

    @Test func deflateIsDecodedInItsZlibAndRawForms() async throws {
        for (coding, format) in [("deflate", Deflate.Format.zlib), ("deflate", .raw), ("x-gzip", .gzip), ("GZIP", .gzip), ("gzip", .zlib)] {
            let server = try Self.server(coding: coding, body: Deflate.compress(Self.page, format))
            defer { server.stop() }
            guard case .success(let response) = await get(server.baseURL + "/items") else {
                Issue.record("\(coding) \(format) failed")
                continue
            }
            #expect(response.body == Self.page, "\(coding) \(format)")
        }
    }

    @Test func aBodyArrivingAByteAtATimeDecodes() async throws {
        // The format is told from two bytes: the first waits for the second.
        let server = try Self.server(
            coding: "deflate", body: Deflate.compress(Array(Self.page.prefix(3000)), .raw), partSize: 1,
            contentLength: false)
        defer { server.stop() }
        guard case .success(let response) = await get(server.baseURL + "/items") else {
            Issue.record("failed")
            return
        }
        #expect(response.body == Array(Self.page.prefix(3000)))
    }

    @Test func gzipMembersOneAfterAnotherAreAllDecoded() async throws {
        let first = Array(Self.page.prefix(1000)), second = Array(Self.page.dropFirst(1000))
        let server = try Self.server(coding: "gzip", body: Deflate.compress(first, .gzip) + Deflate.compress(second, .gzip))
        defer { server.stop() }
        guard case .success(let response) = await get(server.baseURL + "/items") else {
            Issue.record("failed")
            return
        }
        #expect(response.body == Self.page)
    }

    @Test func theLimitBoundsTheDecodedSize() async throws {
        let server = try Self.server(coding: "gzip", body: Deflate.compress(Self.page, .gzip))
        defer { server.stop() }
        guard case .success = await get(server.baseURL + "/items", maximumBodySize: Self.page.count) else {
            Issue.record("a body of exactly the limit was refused")
            return
        }
        guard case .failure(let error) = await get(server.baseURL + "/items", maximumBodySize: Self.page.count - 1) else {
            Issue.record("a body one byte over the limit once decoded was accepted")
            return
        }
        #expect(error.kind == .tooLarge)
        #expect(error.message == "the response body exceeds the limit of \(Self.page.count - 1) bytes once decoded (gzip)")
    }

    @Test func aGzipBombFailsTooLargeAndIsNotReadToItsEnd() async throws {
        // 16 GiB of zeros, 16 MB gzipped, sent a piece at a time as the client reads.
        let bomb = Deflate.zeroBomb()
        let pieces = 16 << 10
        let compressedSize = bomb.head.count + pieces * bomb.piece.count
        let server = try ScriptedHTTPServer { _ in
            ScriptedHTTPServer.Reply(headers: [("Content-Encoding", "gzip")], parts: [bomb.head], repeated: (pieces, bomb.piece))
        }
        defer { server.stop() }
        guard case .failure(let error) = await get(server.baseURL + "/bomb", maximumBodySize: 4 << 20) else {
            Issue.record("a gzip bomb was accepted")
            return
        }
        #expect(error.kind == .tooLarge)
        #expect(error.message == "the response body exceeds the limit of 4194304 bytes once decoded (gzip)")
        // Reading stopped at the limit: what left the server is a few socket buffers, not the bomb.
        #expect(server.finishedResponses == 0)
        #expect(server.bodyBytesSent < compressedSize / 2, "\(server.bodyBytesSent) of \(compressedSize) bytes sent")
    }

    @Test func corruptAndTruncatedBodiesFailAsDecode() async throws {
        let whole = Deflate.compress(Self.page, .gzip)
        let truncated = try Self.server(coding: "gzip", body: Array(whole.prefix(whole.count / 2)))
        defer { truncated.stop() }
        guard case .failure(let cut) = await get(truncated.baseURL + "/items") else {
            Issue.record("a truncated body was accepted")
            return
        }
        #expect(cut.kind == .decode)
        #expect(cut.message == "the gzip response body ends before its compressed data does")

        var damaged = whole
        for index in 20..<60 { damaged[index] ^= 0x5a }
        let corrupt = try Self.server(coding: "gzip", body: damaged)
        defer { corrupt.stop() }
        guard case .failure(let bad) = await get(corrupt.baseURL + "/items") else {
            Issue.record("a corrupt body was accepted")
            return
        }
        #expect(bad.kind == .decode)
        #expect(bad.message.hasPrefix("the gzip response body does not decode: "), "\(bad.message)")

        let plain = try Self.server(coding: "gzip", body: Self.page)
        defer { plain.stop() }
        guard case .failure(let mislabelled) = await get(plain.baseURL + "/items") else {
            Issue.record("JSON labelled gzip was accepted")
            return
        }
        #expect(mislabelled.kind == .decode)
        #expect(mislabelled.message == "the gzip response body does not decode: it does not start as gzip data does")
    }

    @Test func aCodingNotAskedForAndNotKnownFailsAsDecode() async throws {
        let server = try Self.server(coding: "br", body: [1, 2, 3])
        defer { server.stop() }
        guard case .failure(let error) = await get(server.baseURL + "/items") else {
            Issue.record("a br body was accepted")
            return
        }
        #expect(error.kind == .decode)
        #expect(error.message == "the response is encoded as \"br\", which is not gzip or deflate: it cannot be decoded")
        let identity = try Self.server(coding: "identity", body: Self.page)
        defer { identity.stop() }
        guard case .success(let response) = await get(identity.baseURL + "/items") else {
            Issue.record("identity failed")
            return
        }
        #expect(response.body == Self.page)
    }
}
