// swift-tools-version:6.0
import Foundation
import PackageDescription

/// Release links of the shipped binary: the runtime and Foundation as static libraries.
let staticRuntime = [
    "-static-stdlib", "-lCoreFoundation", "-l_FoundationCShims", "-l_FoundationCollections", "-l_FoundationICU", "-lswiftSynchronization",
]

let package = Package(
    name: "datasourced",
    products: [
        .executable(name: "datasourced", targets: ["datasourced"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // 1.16: StreamLogHandler takes a stream of ours (the daemon's never blocks on stderr).
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.20.0"),
        // Already built for AsyncHTTPClient; named here for the fixture server's HTTP/1 side.
        .package(url: "https://github.com/apple/swift-nio", from: "2.65.0"),
        // SQLite for the persisted page cache (CACHE.md says why GRDB, and what it costs to build).
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // Already built for AsyncHTTPClient: HTTPGet sets trust roots and client certificates
        // (NIOSSL); the HTTP/2 test server uses NIOHTTP2.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.30.0"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.36.0"),
        // FileDescriptor reads and writes whole files and pipes (Basics); about 8 s of a clean debug build
        // (SwiftNIO uses it only in NIOFileSystem, which this package does not build: BENCHMARKS.md, "First build").
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
    ],
    targets: [
        // libjansson, the only JSON codec on the message path.
        .systemLibrary(
            name: "CJansson",
            pkgConfig: "jansson",
            providers: [.apt(["libjansson-dev"])]
        ),
        // zlib (the system's): HTTPGet decodes gzip and deflate bodies as they arrive, bounded by
        // the decoded size (AsyncHTTPClient's decompression is per client, and limits a ratio).
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // pipe2, pthread_setname_np, malloc_trim: C calls the Glibc module leaves out.
        .target(name: "CSystemShims"),
        // jansson's allocator: arenas for values made and dropped in one scope (CJSONArena.h says how).
        .target(name: "CJSONArena", dependencies: ["CJansson"]),
        // Byte scans of JSON text before jansson parses it (the nesting limit).
        .target(name: "CJSONScan"),
        // What every target may import, each chore done one way: the lock (checked pthread calls),
        // HTTP text (dates, OWS, header lookup), URLs without credentials, whole-file reads and writes,
        // child processes (pipe2 and a spawn's working directory from CSystemShims).
        .target(name: "Basics", dependencies: ["CSystemShims", .product(name: "SystemPackage", package: "swift-system")]),
        // A Swift value over json_t; jansson's reference rules live here and nowhere else.
        .target(name: "JSONKit", dependencies: ["CJansson", "CJSONArena", "CJSONScan", "Basics"]),
        // LSP base-protocol framing, the JSON-RPC 2.0 message model and the stdio transport.
        .target(name: "JSONRPC", dependencies: ["JSONKit", "CSystemShims", "Basics"]),
        // Instant Cocoa's data-source model over JSON values; knows nothing of JSON-RPC.
        .target(name: "DataSources", dependencies: ["JSONKit", "Basics"]),
        // GET over HTTP(S) with an overall deadline, a streamed size cap (decoded, for gzip and deflate), proxies
        // and cancellation (AsyncHTTPClient).
        // Answers the model's RemoteRequest with its RemoteResponse or FetchError (DataSources).
        .target(
            name: "HTTPGet",
            dependencies: [
                "CZlib", "DataSources", "Basics",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ]),
        // The wire's declared shapes: each field with its range, default and doc, from which both the
        // range-checked decoding (ObjectReader) and the JSON Schema of Protocol/openrpc.json come.
        .target(name: "WireSchema", dependencies: ["JSONKit", "DataSources", "Basics"]),
        // The method table, lifecycle and registry: decode params, call the model, encode results.
        // HTTP is injected (HTTPFetching): the daemon core builds and fuzzes without SwiftNIO.
        .target(
            name: "Daemon",
            dependencies: [
                "JSONKit", "JSONRPC", "DataSources", "WireSchema", "Basics",
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The persisted page cache (PageCacheStore) on SQLite: one file two daemons share (CACHE.md).
        .target(
            name: "PageCache",
            dependencies: [
                "Basics", "DataSources",
                .product(name: "GRDB", package: "GRDB.swift"),
                // sqlite3_db_readonly, which GRDB does not wrap.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // --record: writes a served session down as a transcript, HTTP exchanges included.
        .target(name: "Recording", dependencies: ["Daemon", "DataSources", "JSONKit", "JSONRPC", "Basics"]),
        // The transcript and fixture file formats, decoded with the daemon's range-checked reader;
        // without SwiftNIO, so the transcript fuzzer builds it with the core.
        .target(name: "TranscriptFormat", dependencies: ["WireSchema", "DataSources", "JSONKit", "Basics"]),
        // Transcript replay: drives a spawned daemon and matches what it says.
        .target(
            name: "Replay",
            dependencies: [
                "TranscriptFormat", "JSONKit", "JSONRPC", "DataSources", "CSystemShims", "Basics",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]),
        .executableTarget(
            name: "datasourced",
            dependencies: [
                "Basics", "Daemon", "Recording", "Replay", "TranscriptFormat", "JSONKit", "JSONRPC", "DataSources", "HTTPGet", "PageCache",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The Swift runtime and Foundation linked in (BENCHMARKS.md, start-up): the loader
            // then binds a few thousand symbols, not 20 libraries' worth, and a daemon starts
            // in 6 ms of CPU instead of 15. Foundation stays (AsyncHTTPClient and GRDB import
            // it); its static libraries name their own dependencies only when the modules are
            // compiled for static linking, so those are listed here.
            linkerSettings: [.unsafeFlags(staticRuntime, .when(platforms: [.linux], configuration: .release))]),
        // Figures, never pass/fail: see BENCHMARKS.md.
        .executableTarget(
            name: "datasourced-bench",
            dependencies: [
                "Basics", "JSONKit", "JSONRPC", "DataSources", "Daemon", "HTTPGet", "CJansson",
                .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "NIOCore", package: "swift-nio"),
            ], path: "Benchmarks/Sources/datasourced-bench"),
        .testTarget(name: "BasicsTests", dependencies: ["Basics"]),
        .testTarget(name: "JSONKitTests", dependencies: ["JSONKit", "Basics"]),
        .testTarget(name: "JSONRPCTests", dependencies: ["JSONRPC", "JSONKit", "Basics"]),
        // The model alone: no wire encoding, no decoding of params (those tests are DaemonTests).
        .testTarget(name: "DataSourcesTests", dependencies: ["DataSources", "JSONKit", "Basics"]),
        // The daemon in process, and the model driven through the daemon's decoding and encoding.
        .testTarget(
            name: "DaemonTests",
            dependencies: [
                "Daemon", "DataSources", "WireSchema", "JSONKit", "JSONRPC", "Basics", .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(name: "ReplayTests", dependencies: ["Replay", "TranscriptFormat", "JSONKit", "JSONRPC", "Basics"]),
        // Also drives the built daemon (User-Agent, proxies from its environment, a gzip bomb's RSS).
        .testTarget(
            name: "HTTPGetTests",
            dependencies: [
                "HTTPGet", "DataSources", "Replay", "JSONKit", "CZlib", "Basics", "datasourced",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ]),
        .testTarget(name: "TranscriptTests", dependencies: ["Replay", "JSONKit", "Basics", "datasourced"]),
        // A cache file driven as the data-safety tests need, one process per writer; built for
        // the tests, never shipped.
        .executableTarget(
            name: "datasourced-cache-exercise",
            dependencies: [
                "DataSources", "PageCache", "Replay",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ], path: "Tests/Support/CacheExercise"),
        // In-process store tests, and process-level ones that drive `datasourced-cache-exercise`.
        .testTarget(
            name: "PageCacheTests",
            dependencies: [
                "PageCache", "DataSources", "Basics", "datasourced-cache-exercise",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(name: "RecordingTests", dependencies: ["Recording", "Replay", "TranscriptFormat", "JSONKit", "Basics", "datasourced"]),
    ]
)

let environment = ProcessInfo.processInfo.environment

// The core alone (DATASOURCED_CORE_ONLY=1): the Basics, JSONKit, JSONRPC, DataSources and Daemon
// tests and what they depend on, without the command line, recording, replay and HTTP
// (AsyncHTTPClient, SwiftNIO). scripts/sanitizers.sh and scripts/fuzz.sh build this way:
// small builds, nothing of NIO's under the sanitizers.
if environment["DATASOURCED_CORE_ONLY"] == "1" || environment["DATASOURCED_FUZZ"] == "1" {
    var kept: Set<String> = [], packagesUsed: Set<String> = []
    var pending = ["BasicsTests", "JSONKitTests", "JSONRPCTests", "DataSourcesTests", "DaemonTests"]
    // What fuzz-transcript (below) decodes, with the core.
    if environment["DATASOURCED_FUZZ"] == "1" { pending.append("TranscriptFormat") }
    while let name = pending.popLast() {
        guard kept.insert(name).inserted, let target = package.targets.first(where: { $0.name == name }) else { continue }
        for dependency in target.dependencies {
            switch dependency {
            case .targetItem(let name, _), .byNameItem(let name, _): pending.append(name)
            case .productItem(_, let package, _, _): packagesUsed.insert(package ?? "")
            @unknown default: break
            }
        }
    }
    package.targets.removeAll { !kept.contains($0.name) }
    package.products.removeAll()
    package.dependencies.removeAll { dependency in
        guard case .sourceControl(_, let location, _) = dependency.kind else { return true }
        return !packagesUsed.contains { location.hasSuffix("/\($0)") }
    }
}

// libFuzzer targets (FUZZING.md), only when scripts/fuzz.sh asks for them: they link only
// with -sanitize=fuzzer and import the daemon @testable (debug builds), so the ordinary
// build and `swift build -c release` never see them.
if environment["DATASOURCED_FUZZ"] == "1" {
    // No top-level code: each target's entry point starts libFuzzer's driver (see its *Fuzzer.swift).
    let fuzzerSettings: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]
    package.targets += [
        .target(name: "FuzzSupport", path: "Fuzz/Support"),
        .executableTarget(
            name: "fuzz-framer", dependencies: ["FuzzSupport", "JSONRPC"], path: "Fuzz/Framer", swiftSettings: fuzzerSettings),
        .executableTarget(
            name: "fuzz-payload", dependencies: ["FuzzSupport", "JSONRPC", "JSONKit"], path: "Fuzz/Payload", swiftSettings: fuzzerSettings),
        .executableTarget(
            name: "fuzz-session",
            dependencies: [
                "FuzzSupport", "Daemon", "DataSources", "JSONKit", "JSONRPC", .product(name: "Logging", package: "swift-log"),
            ], path: "Fuzz/Session", swiftSettings: fuzzerSettings),
        .executableTarget(
            name: "fuzz-cacheentry", dependencies: ["FuzzSupport", "DataSources", "JSONKit"], path: "Fuzz/CacheEntry",
            swiftSettings: fuzzerSettings),
        .executableTarget(
            name: "fuzz-transcript", dependencies: ["FuzzSupport", "TranscriptFormat", "JSONKit"], path: "Fuzz/Transcript",
            swiftSettings: fuzzerSettings),
        .executableTarget(
            name: "fuzz-redaction", dependencies: ["FuzzSupport", "Basics"], path: "Fuzz/Redaction", swiftSettings: fuzzerSettings),
    ]
}
