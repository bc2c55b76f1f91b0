@testable import Daemon
@testable import DataSources
import JSONKit
import Testing

/// Issue 31's oracle: random displays, next and previous pages, failures and page arrivals over a
/// random list, a random page size, a random start and a random window (or none), checked after
/// every step against a model of the list. Each seed is one run; several hundred run in the suite.
@Suite struct PagingOracleTests {
    /// SplitMix64: the same sequence for the same seed on every machine.
    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Applies each change set to a copy of the rows as it is emitted, taking inserted and
    /// updated values from the source at that moment: the copy must be the source's rows.
    final class Mirror: DataSourceObserver {
        var rows: [JSON] = []
        var problems: [String] = []
        func dataSource(_ source: DataSource, emitted event: DataSourceEvent) {
            guard case .didChange(let changes) = event else { return }
            let now = source.allObjects
            var removed = Set(changes.deleted.map(\.item))
            removed.formUnion(changes.moved.map(\.from.item))
            var kept = rows.enumerated().filter { !removed.contains($0.offset) }.map(\.element)
            let arriving = (changes.inserted.map(\.item) + changes.moved.map(\.to.item)).sorted()
            for item in arriving where item <= kept.count { kept.insert(now[item], at: item) }
            for path in changes.updated where path.item < kept.count { kept[path.item] = now[path.item] }
            if kept != now { problems.append("after \(changes): copy \(kept.count) rows, source \(now.count)") }
            rows = now
        }
    }

    static let seeds = Array(0..<300)

    @Test(arguments: seeds) func randomPagingAgreesWithTheModel(seed: Int) throws {
        var random = Seeded(state: UInt64(seed) &* 0x2545_F491_4F6C_DD1D)
        let total = Int.random(in: 1...40, using: &random)
        let pageSize = Int.random(in: 1...5, using: &random)
        let pages = (total + pageSize - 1) / pageSize
        let initialPage = Int.random(in: 1...pages, using: &random)
        var extra: [(String, JSON)] = [("keyPath", "items"), ("initialPage", JSON(initialPage)), ("pageSize", JSON(pageSize))]
        let maxPages = Bool.random(using: &random) ? Int.random(in: 1...4, using: &random) : nil
        if let maxPages { extra.append(("window", ["maxPages": JSON(maxPages)])) }
        let (source, loader, _) = try PaginatedStateMachineTests.source(extra: extra)
        let mirror = Mirror()
        source.addObserver(mirror)
        let context =
            "seed \(seed): \(total) rows, pages of \(pageSize), from page \(initialPage), window \(maxPages.map(String.init) ?? "none")"

        func body(page: Int) -> JSON {
            let ids = ((page - 1) * pageSize..<min(total, page * pageSize)).map { JSON($0) }
            return ["items": .array(ids.map { ["id": $0] }), "number_of_pages": JSON(pages)]
        }
        func page(of url: String) -> Int {
            Int(url.split(separator: "?")[1].split(separator: "&").first { $0.hasPrefix("page=") }!.dropFirst(5))!
        }
        var answered = 0
        var everLoaded = Set<Int>()
        source.fetchData()
        for _ in 0..<40 {
            // Answer what is pending, or fail it once in a while.
            if answered < loader.pending.count {
                let url = loader.pending[answered].request.url
                if Int.random(in: 0..<8, using: &random) == 0 {
                    loader.fail(answered, FetchError(kind: .http, message: "HTTP status 500", url: url, status: 500))
                } else {
                    loader.respond(answered, json: body(page: page(of: url)))
                }
                answered += 1
            } else {
                switch Int.random(in: 0..<4, using: &random) {
                case 0: source.fetchNextPage()
                case 1: source.fetchPreviousPage()
                case 2: source.retry()
                default:
                    let count = source.numberOfObjects(inSection: 0)
                    if count > 0 { source.willDisplayObject(at: IndexPath(section: 0, item: Int.random(in: 0..<count, using: &random))) }
                }
            }
            // The model: the data rows are one run of consecutive ids, whole pages, within the window.
            let ids = source.allObjects.compactMap { $0["id"]?.integerValue }
            everLoaded.formUnion(ids)
            if let first = ids.first {
                #expect(ids == Array(first..<first + ids.count), "\(context): rows \(ids)")
                #expect(first % pageSize == 0, "\(context): starts inside a page: \(ids)")
                #expect(ids.count == ids.last! + 1 - first)
                if let maxPages { #expect(ids.count <= maxPages * pageSize, "\(context): \(ids.count) rows past the window") }
                let states = source.loadStates
                if !source.isFetching {
                    if first == 0 { #expect(states.prepend == .endReached || states.prepend.name == "error", "\(context)") }
                    if first > 0 { #expect(states.prepend != .endReached, "\(context): rows before \(first) but prepend ended") }
                    if ids.last == total - 1 { #expect(states.append != .idle, "\(context): the last row loaded, append idle") }
                }
            }
            if maxPages == nil { #expect(Set(ids) == everLoaded, "\(context): without a window nothing loaded is lost") }
            #expect(source.allObjects.filter { Placeholder.kind(of: $0) == .loading }.count <= 1)
        }
        #expect(mirror.problems.isEmpty, "\(context): \(mirror.problems.prefix(3))")
    }
}
