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

    static let seeds = Array(DaemonTests.seeds(300))

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

/// The same oracle for counted placeholders and jumps: the list has its full size from the first
/// page on, every row is the object at its position or `{"$placeholder": "unloaded", "index": N}`,
/// index paths never shift (no insert or delete but at the end, while an estimated size settles),
/// and displaying a far row loads its page and none between.
@Suite struct CountedPagingOracleTests {
    typealias Seeded = PagingOracleTests.Seeded

    @Test(arguments: PagingOracleTests.seeds) func randomCountedPagingAgreesWithTheModel(seed: Int) throws {
        var random = Seeded(state: UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 &+ 1)
        let total = Int.random(in: 1...200, using: &random)
        let pageSize = Int.random(in: 1...7, using: &random)
        let pages = (total + pageSize - 1) / pageSize
        let initialPage = Int.random(in: 1...pages, using: &random)
        // A total in the body, or only a page count (the size is then an estimate until the last page).
        let exactTotal = Bool.random(using: &random)
        let jumpThreshold = Int.random(in: 1...20, using: &random)
        var extra: [(String, JSON)] = [
            ("keyPath", "items"), ("initialPage", JSON(initialPage)), ("pageSize", JSON(pageSize)), ("placeholders", "counted"),
            ("jumpThreshold", JSON(jumpThreshold)),
        ]
        let maxPages = Bool.random(using: &random) ? Int.random(in: 1...4, using: &random) : nil
        if let maxPages { extra.append(("window", ["maxPages": JSON(maxPages)])) }
        let (source, loader, _) = try PaginatedStateMachineTests.source(extra: extra)
        let mirror = PagingOracleTests.Mirror()
        source.addObserver(mirror)
        let context =
            "seed \(seed): \(total) rows, pages of \(pageSize), from page \(initialPage), \(exactTotal ? "total" : "page count"), jumpThreshold \(jumpThreshold), window \(maxPages.map(String.init) ?? "none")"

        func body(page: Int) -> JSON {
            let ids = ((page - 1) * pageSize..<min(total, page * pageSize)).map { JSON($0) }
            let count: (String, JSON) = exactTotal ? ("total_count", JSON(total)) : ("number_of_pages", JSON(pages))
            return .object([("items", .array(ids.map { ["id": $0] })), count])
        }
        func page(of url: String) -> Int {
            Int(url.split(separator: "?")[1].split(separator: "&").first { $0.hasPrefix("page=") }!.dropFirst(5))!
        }
        final class ShiftWatch: DataSourceObserver {
            var problems: [String] = []
            func dataSource(_ source: DataSource, emitted event: DataSourceEvent) {
                guard case .didChange(let changes) = event else { return }
                // Rows are inserted or deleted only at the end: none moves off its index.
                let count = source.numberOfObjects(inSection: 0)
                let oldCount = count - changes.inserted.count + changes.deleted.count
                if changes.inserted.map(\.item) != Array(count - changes.inserted.count..<count) {
                    problems.append("inserted \(changes.inserted.map(\.item).prefix(5)) of \(count)")
                }
                if changes.deleted.map(\.item) != Array(oldCount - changes.deleted.count..<oldCount) {
                    problems.append("deleted \(changes.deleted.map(\.item).prefix(5)) of \(oldCount)")
                }
                if !changes.moved.isEmpty { problems.append("moved \(changes.moved.count)") }
            }
        }
        let watch = ShiftWatch()
        source.addObserver(watch)
        var answered = 0
        source.fetchData()
        for _ in 0..<60 {
            if answered < loader.pending.count {
                let url = loader.pending[answered].request.url
                if Int.random(in: 0..<10, using: &random) == 0 {
                    loader.fail(answered, FetchError(kind: .http, message: "HTTP status 500", url: url, status: 500))
                } else {
                    loader.respond(answered, json: body(page: page(of: url)))
                }
                answered += 1
            } else {
                switch Int.random(in: 0..<6, using: &random) {
                case 0: source.fetchNextPage()
                case 1: source.fetchPreviousPage()
                case 2: source.retry()
                default:
                    let count = source.numberOfObjects(inSection: 0)
                    guard count > 0 else { break }
                    let item = Int.random(in: 0..<count, using: &random)
                    let pendingBefore = loader.pending.count
                    let row = source.allObjects[item]
                    source.willDisplayObject(at: IndexPath(section: 0, item: item))
                    // A display asks for one page at most; an unloaded row's page is the one holding
                    // it or one next to the loaded rows, never one between.
                    #expect(loader.pending.count - pendingBefore <= 1, "\(context): one display made several requests")
                    if loader.pending.count > pendingBefore, Placeholder.kind(of: row) == .unloaded {
                        let asked = page(of: loader.pending[loader.pending.count - 1].request.url)
                        let loadedPages = Set(source.allObjects.compactMap { $0["id"]?.integerValue }.map { $0 / pageSize + 1 })
                        let adjacent = loadedPages.contains(asked - 1) || loadedPages.contains(asked + 1)
                        #expect(asked == item / pageSize + 1 || adjacent, "\(context): displaying row \(item) asked for page \(asked)")
                    }
                }
            }
            let rows = source.allObjects
            guard rows.count > 1 || rows.first.map({ Placeholder.kind(of: $0) == nil }) ?? false else { continue }
            if exactTotal {
                #expect(rows.count == total, "\(context): \(rows.count) rows, not the total \(total)")
            } else {
                #expect(rows.count == total || rows.count == pages * pageSize, "\(context): \(rows.count) rows")
            }
            var loaded: [Int] = []
            for (index, row) in rows.enumerated() {
                if let id = row["id"]?.integerValue {
                    #expect(id == index, "\(context): row \(index) holds object \(id)")
                    loaded.append(index)
                } else {
                    #expect(row == Placeholder.unloadedRow(index: index), "\(context): row \(index) is \(row)")
                }
            }
            if let first = loaded.first {
                #expect(loaded == Array(first..<first + loaded.count), "\(context): the loaded rows are not one run: \(loaded)")
                #expect(first % pageSize == 0, "\(context): the loaded rows start inside a page")
                if let maxPages { #expect(loaded.count <= maxPages * pageSize, "\(context): \(loaded.count) rows past the window") }
            }
            #expect(try source.objects(inSection: 0, start: 0, count: nil) == rows)
        }
        #expect(mirror.problems.isEmpty, "\(context): \(mirror.problems.prefix(3))")
        #expect(watch.problems.isEmpty, "\(context): \(watch.problems.prefix(3))")
    }
}
