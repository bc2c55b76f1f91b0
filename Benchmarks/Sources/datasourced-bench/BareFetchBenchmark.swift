// barefetch: what a page costs a fresh process that does nothing with it but fetch it and
// parse it with jansson (json_loadb + json_decref, as Benchmarks/c/parse_loop.c does). It
// maps nothing, keeps nothing and writes nothing, so its CPU per page, set against the
// daemon's in the same run (Benchmarks/pagefetch.py --bare), tells the platform's share of
// a page (the Swift runtime, AsyncHTTPClient and NIO, a process's first touch of its
// memory) from the daemon's own.
//
// --interface httpget (the default) fetches with the daemon's client (HTTPGet, which reads
// with AsyncHTTPClient's delegate interface); --interface async with AsyncHTTPClient's async
// interface, as HTTPGet did before the ninth round, to measure what the change saved.

#if canImport(Glibc)
import Glibc
#endif
import AsyncHTTPClient
import Basics
import CJansson
import DataSources
import HTTPGet
import JSONRPC
import NIOCore

/// CPU seconds of this process, all threads, to the nanosecond (getrusage counts in
/// microseconds, too coarse for a first page).
private func processCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
}

/// Parses a body and drops it; false when it is not JSON.
private func parseAndDrop(_ body: [UInt8]) -> Bool {
    var error = json_error_t()
    let value = body.withUnsafeBytes { bytes in
        json_loadb(bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count, Int(JSON_DECODE_ANY | JSON_ALLOW_NUL), &error)
    }
    guard let value else { return false }
    json_decref(value)
    return true
}

/// Fetches a URL and calls back once, off the event loop, with its body if it came with a 200.
private protocol BareFetcher {
    func fetch(_ url: String, then: @escaping @Sendable ([UInt8]?) -> Void)
    func shutdown()
}

private struct DaemonClientFetcher: BareFetcher {
    let client = HTTPGetClient()

    func fetch(_ url: String, then: @escaping @Sendable ([UInt8]?) -> Void) {
        let request = RemoteRequest(url: url, headers: [], timeoutSeconds: 30, maximumBodySize: 1 << 30)
        _ = client.fetch(request) { result in
            guard case .success(let response) = result, response.status == 200 else { return then(nil) }
            then(response.body)
        }
    }

    func shutdown() { client.shutdown() }
}

/// AsyncHTTPClient's async interface, configured as HTTPGet configures its client: a task a
/// request, the body gathered chunk by chunk in the task.
private struct AsyncInterfaceFetcher: BareFetcher {
    let client: HTTPClient = {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    func fetch(_ url: String, then: @escaping @Sendable ([UInt8]?) -> Void) {
        let client = self.client
        Task {
            guard let response = try? await client.execute(HTTPClientRequest(url: url), deadline: .now() + .seconds(30)),
                response.status == .ok
            else { return then(nil) }
            var body: [UInt8] = []
            if let announced = response.headers.first(name: "content-length").flatMap({ Int($0) }) { body.reserveCapacity(announced) }
            do {
                for try await chunk in response.body { body.append(contentsOf: chunk.readableBytesView) }
            } catch {
                return then(nil)
            }
            then(body)
        }
    }

    func shutdown() { try? client.syncShutdown() }
}

func bareFetchBenchmark(_ options: Options) {
    guard let base = options.string("--base") else { fail("barefetch needs --base URL (the fixture API)") }
    let path = options.string("--path", default: "/items")
    let pages = options.int("--pages", default: 10)
    let checkpoints = Set(options.string("--checkpoints", default: "1,10").split(separator: ",").compactMap { Int($0) })
    // The client exists before the first page, as the daemon's does (made when it starts).
    let fetcher: BareFetcher
    switch options.string("--interface", default: "httpget") {
    case "httpget": fetcher = DaemonClientFetcher()
    case "async": fetcher = AsyncInterfaceFetcher()
    default: fail("--interface is httpget or async")
    }
    defer { fetcher.shutdown() }
    // Page numbers of parsed pages, or 0 for a page that failed.
    let done = Mailbox<Int>()
    let start = processCPUSeconds()
    var line = "RESULT barefetch pages=\(pages)"
    for page in 1...pages {
        // Parsed where the daemon decodes a page: in the fetch's completion.
        fetcher.fetch("\(base)\(path)?page=\(page)") { body in
            done.post(body.map(parseAndDrop) == true ? page : 0)
        }
        guard done.takeAll().first == page else { fail("page \(page) was not fetched and parsed") }
        if checkpoints.contains(page) {
            line += " cpu_ms_per_page_\(page)=\(fixed((processCPUSeconds() - start) * 1000 / Double(page), 3))"
        }
    }
    say(line)
}
