// The actions benchmarks: figures, never pass/fail (BENCHMARKS.md, "Actions").
//
//   actions   in this process, over a list of N rows: one optimistic insert; a rollback with
//             100 other mutations pending; a page of 100 rows arriving under 100 pending
//             mutations (of rows held) and under none. The on-screen floor (performAction to its didChange
//             against a ping) is Benchmarks/actions.py, over stdio.

import Daemon
import DataSources
import JSONKit

/// Holds every request until the benchmark answers it, as the daemon's loader would.
private final class HeldLoader: RemoteLoading {
    var pending:
        [(
            request: RemoteRequest, decode: @Sendable (RemoteResponse) -> Result<DecodedResponse, FetchError>,
            completion: (Result<DecodedResponse, FetchError>) -> Void
        )] = []

    func load(
        _ request: RemoteRequest, decode: @escaping @Sendable (RemoteResponse) -> Result<DecodedResponse, FetchError>,
        completion: @escaping (Result<DecodedResponse, FetchError>) -> Void
    ) -> FetchHandle {
        pending.append((request, decode, completion))
        return FetchHandle()
    }

    /// The decoded answer to request `index` (decoding is the loader thread's work, not timed).
    func decoded(_ index: Int, status: Int = 200, body: [UInt8]) -> Result<DecodedResponse, FetchError> {
        let request = pending[index]
        return request.decode(
            RemoteResponse(url: request.request.url, status: status, headers: [("Content-Type", "application/json")], body: body))
    }
}

private let benchActions: JSON = [
    "rename": [
        "method": "PATCH", "path": "/items/{id}", "body": ["title": "{$values.title}"],
        "values": ["title": ["type": "string", "required": true]], "optimistic": "update",
    ],
    "add": [
        "method": "POST", "path": "/items", "body": ["title": "{$values.title}"],
        "values": ["title": ["type": "string", "required": true]], "optimistic": "insert",
    ],
]

/// A paginated source of `rows` rows (one first page), then pages of 100 by next URL.
private func loadedSource(rows: Int) -> (PaginatedDataSource, HeldLoader) {
    let loader = HeldLoader()
    let params: JSON = [
        "name": "bench", "kind": "paginated", "identityKey": "id", "keyPath": "items",
        "remoteConfiguration": ["baseURL": "http://bench.invalid"], "apiPath": "/items",
        "pagination": ["strategy": "nextURL", "nextURLPath": "next"], "actions": benchActions,
        "limits": ["maxObjectsPerPage": 1_000_000],
    ]
    guard case .paginated(let configuration, let paginator) = try? SourceSpec.decoding(createSourceParams: params).kind else {
        fail("the benchmark's source does not decode")
    }
    let source = PaginatedDataSource(
        name: "bench", identity: Identity(key: JSONKeyPath("id")), configuration: configuration, paginator: paginator, loader: loader)
    source.fetchData()
    var body = Array("{\"next\":\"/items?after=\(rows)\",\"items\":".utf8)
    body += objectsText(0..<rows, groups: 100)
    body.append(UInt8(ascii: "}"))
    loader.pending[0].completion(loader.decoded(0, body: body))
    guard source.numberOfObjects(inSection: 0) >= rows else { fail("the first page did not load") }
    return (source, loader)
}

/// The next page's body: rows `ids`.
private func pageBody(_ ids: Range<Int>) -> [UInt8] {
    Array("{\"next\":\"/items?after=\(ids.upperBound)\",\"items\":".utf8) + objectsText(ids, groups: 100) + [UInt8(ascii: "}")]
}

func actionsBenchmark(_ options: Options) {
    let rows = options.int("--rows", default: 300_000)
    let runs = options.int("--runs", default: 5)
    let others = options.int("--pending", default: 100)
    var inserts: [Double] = [], rollbacks: [Double] = [], plainPages: [Double] = [], rebasedPages: [Double] = []
    for run in 0..<runs {
        var random = SplitMix(seed: UInt64(run))
        // One optimistic insert, then a rollback of the first of `others` pending renames.
        do {
            let (source, loader) = loadedSource(rows: rows)
            var start = Clock.now()
            _ = try? source.performAction("add", identity: nil, values: ["title": "new"])
            inserts.append(Clock.now() - start)
            // The insert's answer commits it; then `others` renames wait behind the first.
            loader.pending[1].completion(loader.decoded(1, status: 201, body: Array("{\"id\":-1,\"title\":\"new\"}".utf8)))
            for _ in 0...others {
                _ = try? source.performAction("rename", identity: JSON(random.below(rows)), values: ["title": "renamed"])
            }
            let refused = loader.decoded(2, status: 422, body: Array("{\"detail\":\"no\"}".utf8))
            start = Clock.now()
            loader.pending[2].completion(refused)
            rollbacks.append(Clock.now() - start)
        }
        // A page of 100 arriving under `others` pending renames (of rows held), and under none.
        for pending in [false, true] {
            let (source, loader) = loadedSource(rows: rows)
            if pending {
                for _ in 0..<others {
                    _ = try? source.performAction("rename", identity: JSON(random.below(rows)), values: ["title": "renamed"])
                }
            }
            _ = source.fetchNextPage()
            guard let page = loader.pending.lastIndex(where: { $0.request.method == .get }) else { fail("no page request") }
            let arriving = loader.decoded(page, body: pageBody(rows..<rows + 100))
            let start = Clock.now()
            loader.pending[page].completion(arriving)
            let elapsed = Clock.now() - start
            if pending { rebasedPages.append(elapsed) } else { plainPages.append(elapsed) }
            guard source.numberOfObjects(inSection: 0) >= rows + 100 else { fail("the page did not arrive") }
        }
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    func ms(_ value: Double) -> String { String(format3(value * 1000)) }
    say("actions: \(rows) rows, \(runs) runs, medians")
    say("  one optimistic insert: \(ms(median(inserts))) ms")
    say("  a rollback with \(others) other mutations pending: \(ms(median(rollbacks))) ms")
    say("  a page of 100 under \(others) pending mutations: \(ms(median(rebasedPages))) ms; under none: \(ms(median(plainPages))) ms")
    say(
        "RESULT actions rows=\(rows) rollback_over_insert=\(format3(median(rollbacks) / median(inserts))) "
            + "rebase_over_plain=\(format3(median(rebasedPages) / median(plainPages)))")
}

private func format3(_ value: Double) -> String {
    let scaled = (value * 1000).rounded() / 1000
    return "\(scaled)"
}
