import Basics
@testable import DataSources
import JSONKit
import Testing

@Suite struct PredicateTests {
    static let row: JSON = ["n": 5, "r": 2.5, "s": "hello world", "b": true, "z": .null, "tags": ["a", "b"], "o": ["x": 1]]

    @Test(arguments: [
        (Predicate.field("n", .eq, 5), true), (.field("n", .eq, 5.0), true), (.field("n", .eq, "5"), false),
        (.field("n", .ne, 4), true), (.field("missing", .eq, .null), true), (.field("z", .eq, .null), true),
        (.field("n", .lt, 6), true), (.field("n", .le, 5), true), (.field("n", .gt, 5), false), (.field("r", .ge, 2.5), true),
        (.field("r", .lt, 3), true), (.field("s", .gt, "hello"), true), (.field("s", .lt, "help"), true),
        (.field("missing", .lt, 10), false), (.field("s", .lt, 10), false), (.field("n", .gt, "a"), false),
        (.field("n", .in, [1, 5, 9]), true), (.field("n", .in, ["5"]), false),
        (.field("s", .contains, "lo wo"), true), (.field("s", .contains, "xyz"), false), (.field("tags", .contains, "b"), true),
        (.field("tags", .contains, "c"), false), (.field("s", .prefix, "hell"), true), (.field("s", .prefix, "world"), false),
        (.field("n", .prefix, "5"), false), (.field("z", .exists, true), true), (.field("missing", .exists, true), false),
        (.field("missing", .exists, false), true), (.field("o", .eq, ["x": 1]), true), (.field("o.x", .eq, 1), true),
        (.field("b", .eq, true), true), (.field("b", .gt, false), true),
        // An array or an object at the key path: compared whole, or read as an array's elements.
        (.field("tags", .exists, true), true), (.field("o", .exists, false), false), (.field("o", .prefix, "x"), false),
        (.field("tags", .in, [["a", "b"], 1]), true), (.field("tags", .in, [["b"]]), false), (.field("o", .ne, ["x": 2]), true),
        (.field("tags", .lt, ["b"]), true), (.field("tags", .ge, ["b"]), false), (.field("o", .gt, ["a"]), false),
        (.field("o", .contains, "x"), false), (.field("tags", .eq, ["a", "b"]), true),
    ])
    func comparisons(predicate: Predicate, expected: Bool) {
        #expect(predicate.matches(Self.row) == expected, "\(predicate)")
    }

    @Test func combinations() {
        let five = Predicate.field("n", .eq, 5), hello = Predicate.field("s", .prefix, "hello"), no = Predicate.field("n", .eq, 0)
        #expect(Predicate.and([five, hello]).matches(Self.row))
        #expect(!Predicate.and([five, no]).matches(Self.row))
        #expect(Predicate.or([no, hello]).matches(Self.row))
        #expect(!Predicate.or([no, .not(five)]).matches(Self.row))
        #expect(Predicate.and([]).matches(Self.row) && !Predicate.or([]).matches(Self.row), "empty and is true, empty or false")
    }
}

extension PredicateTests {
    /// `narrow` (a block of rows at a time) answers as `matches` (a row at a time), nested
    /// `and`, `or` and `not` included, and a row already ruled out stays out.
    @Test(arguments: seeds(40))
    func narrowingABlockAnswersAsEachRow(seed: Int) {
        var random = Generator(seed: seed)
        func predicate(depth: Int) -> Predicate {
            let leaves: [Predicate] = [
                .field("n", [.eq, .ne, .lt, .ge][random.next(4)], JSON(random.next(6))),
                .field("s", .prefix, ["he", "wo"][random.next(2)]),
                .field("tags", .contains, ["a", "c"][random.next(2)]), .field("z", .exists, JSON(random.chance(50))),
                .field("n", .in, [1, 3, 5]),
            ]
            guard depth < 3, random.chance(60) else { return leaves[random.next(leaves.count)] }
            switch random.next(3) {
            case 0: return .and((0..<random.next(4)).map { _ in predicate(depth: depth + 1) })
            case 1: return .or((0..<random.next(4)).map { _ in predicate(depth: depth + 1) })
            default: return .not(predicate(depth: depth + 1))
            }
        }
        let rows: [JSON] = (0..<50).map { _ in
            var row: [(String, JSON)] = [("n", JSON(random.next(6))), ("s", JSON(["hello", "world"][random.next(2)]))]
            if random.chance(50) { row.append(("tags", ["a", "b"])) }
            if random.chance(50) { row.append(("z", .null)) }
            return JSON.object(row).packed()
        }
        for _ in 0..<20 {
            let tested = predicate(depth: 0)
            let excluded = (0..<rows.count).map { _ in random.chance(20) }
            var keep = excluded.map { !$0 }
            rows.withUnsafeBufferPointer { tested.narrow(&keep, rows: $0) }
            let expected = rows.indices.map { !excluded[$0] && tested.matches(rows[$0]) }
            #expect(keep == expected, "seed \(seed): \(tested)")
        }
    }
}

@Suite struct FuzzyMatchTests {
    static func match(_ query: String, _ text: String) -> FuzzyMatch? {
        var matcher = FuzzyMatcher()
        return Array(text.utf8).withUnsafeBufferPointer { matcher.match(FuzzyPattern(query), in: $0, positions: true) }
    }

    /// Texts are ruled out from their bytes before they are decoded, but only ASCII ones: a
    /// character beyond ASCII can fold onto an ASCII one (the Kelvin sign onto k).
    @Test func aTextIsRuledOutFromItsBytesOnlyWhenItIsASCII() {
        #expect(Self.match("wz", "Wiz") != nil && Self.match("zw", "Wiz") == nil)
        #expect(Self.match("k", "\u{212A}elvin")?.positions == [0], "the Kelvin sign folds to k")
        #expect(Self.match("ke", "é \u{212A}e") != nil && Self.match("ek", "é \u{212A}e") == nil)
        #expect(Self.match("W", "wiz") == nil, "an uppercase query is case-sensitive")
    }

    // Cases from fzf's own tests of its v2 algorithm (src/algo/algo_test.go).
    @Test func scoresAsFzfDoes() {
        #expect(Self.match("oBZ", "fooBarbaz1") == nil, "an uppercase letter makes the query case-sensitive")
        #expect(Self.match("obz", "fooBarbaz1") == FuzzyMatch(score: 16 * 3 + 7 - 3 - 3, positions: [2, 3, 8]))
        #expect(Self.match("fbb", "foo bar baz") == FuzzyMatch(score: 16 * 3 + 10 * 2 + 10 * 2 - 3 * 2 - 1 * 4, positions: [0, 4, 8]))
        #expect(Self.match("rdoc", "/AutomatorDocument.icns") == FuzzyMatch(score: 16 * 4 + 7 + 4 * 2, positions: [9, 10, 11, 12]))
        #expect(Self.match("zshc", "/man1/zshcompctl.1") == FuzzyMatch(score: 16 * 4 + 9 * 2 + 9 * 3, positions: [6, 7, 8, 9]))
        #expect(Self.match("zshc", "/.oh-my-zsh/cache") == FuzzyMatch(score: 16 * 4 + 8 * 2 + 8 * 2 - 3 + 9, positions: [8, 9, 10, 12]))
    }

    @Test func wordStartsAndRunsScoreHigher() throws {
        let start = try #require(Self.match("ring", "The Lord of the Rings"))
        let middle = try #require(Self.match("ring", "Bring Up the Bodies"))
        #expect(start.score > middle.score, "a word start beats the middle of a word")
        let run = try #require(Self.match("war", "War and Peace"))
        let spread = try #require(Self.match("war", "The Wind and the Rain"))
        #expect(run.score > spread.score, "consecutive characters beat scattered ones")
        #expect(run.positions == [0, 1, 2])
    }

    @Test func positionsCountUnicodeScalars() {
        #expect(Self.match("oë", "Élan — Zoë")?.positions == [8, 9], "positions are scalar indexes, not bytes")
        #expect(Self.match("él", "Élan — Zoë")?.positions == [0, 1], "a lowercase query matches uppercase beyond ASCII")
        #expect(Self.match("zo", "Élan — Zoë")?.positions == [7, 8])
        #expect(Self.match("", "anything") == FuzzyMatch(score: 0, positions: []))
        #expect(Self.match("abc", "acb") == nil)
    }

    @Test func aQueryNarrowsTheQueriesThatExtendIt() {
        #expect(FuzzyPattern("ha").isNarrowed(by: FuzzyPattern("har")))
        #expect(FuzzyPattern("ha").isNarrowed(by: FuzzyPattern("haR")))
        #expect(!FuzzyPattern("har").isNarrowed(by: FuzzyPattern("ha")))
        #expect(!FuzzyPattern("ha").isNarrowed(by: FuzzyPattern("xha")))
    }
}

@Suite struct FilteredDataSourceTests {
    static let identity = Identity(key: JSONKeyPath("id"))
    static let books: [JSON] = [
        ["id": 1, "title": "Bring Up the Bodies", "genre": "history"],
        ["id": 2, "title": "The Lord of the Rings", "genre": "fantasy"],
        ["id": 3, "title": "War and Peace", "genre": "history"],
        ["id": 4, "title": "The Rings of Saturn", "genre": "travel"],
        ["id": 5, "title": "Wolf Hall", "genre": "history"],
    ]
    static func ids(_ source: DataSource) -> [[JSON?]] { source.layout.sections.map { $0.map { $0["id"] } } }
    static let titles = [JSONKeyPath("title")]

    @Test func aFilterKeepsTheChildsOrder() {
        let child = SimpleDataSource(name: "books", identity: Self.identity, objects: Self.books)
        let filtered = FilteredDataSource(
            name: "f", identity: Self.identity, child: child, filter: .field("genre", .eq, "history"), match: nil)
        #expect(Self.ids(filtered) == [[1, 3, 5]])
        #expect(filtered.kind == "filtered" && filtered.children.first === child)
    }

    @Test func aMatchOrdersByScoreWithTiesInTheChildsOrder() throws {
        let child = SimpleDataSource(name: "books", identity: Self.identity, objects: Self.books)
        let filtered = FilteredDataSource(
            name: "f", identity: Self.identity, child: child, filter: nil,
            match: MatchQuery(query: "rings", keyPaths: Self.titles))
        #expect(Self.ids(filtered) == [[2, 4, 1]], "two word starts tie in the child's order, before the middle of a word")
        let (score, keyPath, positions) = try #require(filtered.matchPositions(of: Self.books[1]))
        #expect(keyPath == JSONKeyPath("title") && positions == [16, 17, 18, 19, 20] && score > 0)
        #expect(filtered.matchPositions(of: Placeholder.loadingRow) == nil)
    }

    @Test func placeholdersPassAndNothingMatchingShowsNoResults() {
        let child = ManualSource(name: "remote", identity: Self.identity)
        child.setRows(Self.books + [Placeholder.loadingRow])
        let filtered = FilteredDataSource(
            name: "f", identity: Self.identity, child: child, filter: nil,
            match: MatchQuery(query: "wolf", keyPaths: Self.titles))
        #expect(filtered.layout.sections[0].map { $0 } == [Self.books[4], Placeholder.loadingRow])
        filtered.setFilter(nil, match: MatchQuery(query: "zzz", keyPaths: Self.titles))
        #expect(filtered.layout.sections[0].map { $0 } == [Placeholder.loadingRow, Placeholder.noResultsRow])
        child.setRows([])
        #expect(filtered.layout.sections[0].isEmpty, "an empty child shows nothing of its own")
        child.setRows([Placeholder.errorRow(["kind": "http"])])
        #expect(filtered.layout.sections[0].map { $0 } == [Placeholder.errorRow(["kind": "http"])], "the child's placeholders pass")
    }

    @Test func setFilterSendsOneChangeAndAGrowingQuerySearchesThePreviousMatchesOnly() {
        let child = SimpleDataSource(name: "books", identity: Self.identity, objects: Self.books)
        let filtered = FilteredDataSource(name: "f", identity: Self.identity, child: child, filter: nil, match: nil)
        let recorder = Recorder()
        filtered.addObserver(recorder)
        let before = filtered.rowsEvaluated
        filtered.setFilter(nil, match: MatchQuery(query: "r", keyPaths: Self.titles))
        #expect(filtered.rowsEvaluated - before == 5)
        let matchesOfR = filtered.layout.count
        filtered.setFilter(nil, match: MatchQuery(query: "ri", keyPaths: Self.titles))
        #expect(filtered.rowsEvaluated - before == 5 + matchesOfR, "only the matches of \"r\" were searched for \"ri\"")
        filtered.setFilter(nil, match: MatchQuery(query: "r", keyPaths: Self.titles))
        #expect(filtered.rowsEvaluated - before == 5 + matchesOfR + 5, "a shorter query searches everything")
        #expect(recorder.events == ["f.change", "f.change", "f.change"])
        filtered.setFilter(nil, match: MatchQuery(query: "r", keyPaths: Self.titles))
        #expect(recorder.events.count == 3, "no change, no didChange")
    }

    @Test func aChildInsertIsFollowedWithOnlyThatRow() {
        let child = SimpleDataSource(name: "books", identity: Self.identity, objects: Self.books)
        let filtered = FilteredDataSource(
            name: "f", identity: Self.identity, child: child, filter: nil,
            match: MatchQuery(query: "rings", keyPaths: Self.titles))
        let recorder = Recorder()
        filtered.addObserver(recorder)
        try? child.insert([["id": 6, "title": "Rings", "genre": "x"], ["id": 7, "title": "Dune", "genre": "x"]], at: 0)
        #expect(
            recorder.changes(of: "f") == [changeSet(inserted: [path(0, 0)])],
            "the best match first; the row that does not match is not sent")
        #expect(filtered.changesFollowed == 1)
        #expect(Self.ids(filtered) == [[6, 2, 4, 1]])
    }
}

/// Random edits of the child, and filter changes, over a filtered view of each local kind:
/// every change set must take the old rows to the new ones (the oracle), and the rows must
/// be what a filtered source created afresh over the same child shows.
extension FilteredDataSourceTests {
    /// Without a match query on either side, a new filter's change set comes from one walk
    /// over the entries, in runs: the rows left between those kept, the rows arriving
    /// between them, and nothing moved.
    @Test func aFilterInTheChildsOrderChangesInRuns() {
        func entries(_ passes: (Int) -> Bool) -> [[FilteredDataSource.Entry]] {
            [(0..<10).map { FilteredDataSource.Entry(passes: passes($0), isPlaceholder: false, score: 0) }, []]
        }
        func runs(_ list: IndexPathList) -> [[Int]] { list.runs.map { [$0.section, $0.item, $0.count] } }
        let all = entries { _ in true }, everyThird = entries { $0 % 3 == 0 }, others = entries { $0 % 3 == 1 }
        let narrowed = FilteredDataSource.changesInChildOrder(from: all, to: everyThird)
        #expect(runs(narrowed.deleted) == [[0, 1, 2], [0, 4, 2], [0, 7, 2]] && narrowed.inserted.isEmpty && narrowed.moved.isEmpty)
        let widened = FilteredDataSource.changesInChildOrder(from: everyThird, to: all)
        #expect(runs(widened.inserted) == [[0, 1, 2], [0, 4, 2], [0, 7, 2]] && widened.deleted.isEmpty)
        // Rows 0, 3, 6, 9 leave (all four of the old list), rows 1, 4, 7 arrive.
        let swapped = FilteredDataSource.changesInChildOrder(from: everyThird, to: others)
        #expect(runs(swapped.deleted) == [[0, 0, 4]] && runs(swapped.inserted) == [[0, 0, 3]])
        #expect(FilteredDataSource.changesInChildOrder(from: all, to: all).isEmpty)
    }

    /// An entry's one integer orders as rows rank: passing before failing, data before
    /// placeholders, higher scores first; and gives back what it was made of, at any score.
    @Test func anEntryIsOneIntegerInRankOrder() {
        let scores: [Int32] = [.min, -1, 0, 1, 16, .max]
        for score in scores {
            for placeholder in [false, true] {
                for passes in [false, true] {
                    let entry = FilteredDataSource.Entry(passes: passes, isPlaceholder: placeholder, score: score)
                    #expect(entry.passes == passes && entry.isPlaceholder == placeholder && entry.score == score)
                    #expect(entry.raw & UInt64(FilteredDataSource.Entry.largestItem) == 0, "the low bits are the item's")
                }
            }
        }
        let ranked = scores.reversed().map { FilteredDataSource.Entry(passes: true, isPlaceholder: false, score: $0).raw }
        #expect(ranked == ranked.sorted(), "higher scores first")
        let data = FilteredDataSource.Entry(passes: true, isPlaceholder: false, score: .min)
        let placeholder = FilteredDataSource.Entry(passes: true, isPlaceholder: true, score: .max)
        #expect(data.raw < placeholder.raw && placeholder.raw < FilteredDataSource.Entry.fails.raw)
    }
}

@Suite struct FilteredOracleTests {
    static let words = ["red", "green", "blue", "ring", "wing", "bring", "king", "Rust", "rust", "war", "peace"]

    static func object(_ random: inout Generator) -> JSON {
        var members: [(String, JSON)] = [("id", JSON(random.next(14))), ("v", JSON(random.next(4)))]
        if random.chance(85) { members.append(("t", JSON("\(words[random.next(words.count)]) \(words[random.next(words.count)])"))) }
        if random.chance(80) { members.append(("g", JSON(["x", "y", "z"][random.next(3)]))) }
        if random.chance(3) { return Placeholder.loadingRow }
        return .object(members)
    }

    static func filter(_ random: inout Generator) -> Predicate? {
        switch random.next(5) {
        case 0: nil
        case 1: .field("v", [.lt, .ge, .eq, .ne][random.next(4)], JSON(random.next(4)))
        case 2: .or([.field("g", .eq, "x"), .field("v", .in, [0, 3])])
        case 3: .not(.field("t", .contains, "ing"))
        default: .and([.field("g", .exists, true), .field("v", .le, 2)])
        }
    }

    static func match(_ random: inout Generator, growing previous: MatchQuery?) -> MatchQuery? {
        if let previous, random.chance(50), previous.query.count < 5 {
            return MatchQuery(query: previous.query + String("ringwRBe".randomElement(&random)), keyPaths: previous.keyPaths)
        }
        guard random.chance(70) else { return nil }
        let queries = ["", "r", "ri", "ing", "R", "wr", "e e", "bl"]
        return MatchQuery(
            query: queries[random.next(queries.count)],
            keyPaths: random.chance(70) ? [JSONKeyPath("t")] : [JSONKeyPath("t"), JSONKeyPath("g")])
    }

    @Test(arguments: seeds(300))
    func randomEditsMatchARecompute(seed: Int) throws {
        var random = Generator(seed: seed)
        let identity = Identity(key: seed % 3 == 0 ? nil : JSONKeyPath("id"))
        let simple = SimpleDataSource(name: "s", identity: identity, objects: (0..<random.next(12)).map { _ in Self.object(&random) })
        let other = SimpleDataSource(name: "o", identity: identity, objects: (0..<3).map { _ in Self.object(&random) })
        let child: DataSource
        switch seed % 3 {
        case 0: child = simple
        case 1:
            child = SectionedDataSource(
                name: "t", identity: identity, child: simple, sectioningKey: JSONKeyPath("g"),
                sortDescriptors: seed % 2 == 0 ? [SortDescriptor(keyPath: JSONKeyPath("v"), ascending: true)] : [])
        default: child = MultiDataSource(name: "m", identity: identity, sources: [simple, other], preserveSections: seed % 4 == 2)
        }
        var filter = Self.filter(&random), match = Self.match(&random, growing: nil)
        // Now and then the view's identity is not its child's: its rows' hashes are its own.
        let viewIdentity = seed % 5 == 4 ? Identity(key: JSONKeyPath("t")) : identity
        let filtered = FilteredDataSource(name: "f", identity: viewIdentity, child: child, filter: filter, match: match)
        let snapshots = SourceChangeSetTests.Snapshots()
        snapshots.remember([filtered])
        filtered.addObserver(snapshots)

        for step in 0..<12 {
            let target = random.chance(80) ? simple : other
            let count = target.objects.count
            switch random.next(7) {
            case 0, 1: try target.insert((0..<random.next(3) + 1).map { _ in Self.object(&random) }, at: random.next(count + 1))
            case 2 where count > 0:
                let index = random.next(count)
                try target.remove(at: index, count: random.next(min(3, count - index)) + 1)
            case 3 where count > 0 && identity.key != nil:
                let victim = target.objects[random.next(count)]
                guard Placeholder.kind(of: victim) == nil else { break }
                try target.update([
                    victim.setting("v", to: JSON(random.next(4)))
                        .setting("t", to: JSON("\(Self.words[random.next(Self.words.count)]) x"))
                ])
            case 4:
                filter = random.chance(50) ? filter : Self.filter(&random)
                match = Self.match(&random, growing: match)
                filtered.setFilter(filter, match: match)
            case 5: target.replaceObjects((0..<random.next(10)).map { _ in Self.object(&random) })
            default: target.replaceObjects(target.objects + [Self.object(&random)])
            }
            #expect(snapshots.problems.isEmpty, "seed \(seed) step \(step): \(snapshots.problems)")
            snapshots.problems = []
            let fresh = FilteredDataSource(name: "fresh", identity: viewIdentity, child: child, filter: filter, match: match)
            #expect(
                filtered.layout.sections == fresh.layout.sections && filtered.layout.titles == fresh.layout.titles,
                "seed \(seed) step \(step): \(filtered.layout.sections) != \(fresh.layout.sections)")
            #expect(filtered.rowHashes == fresh.rowHashes, "seed \(seed) step \(step): the rows' identity hashes")
            child.removeObserver(fresh)
        }
    }

    /// Over a paginated child (pages arriving, short, failing; its loading and error rows) and
    /// over a filtered source over it: every change set of the view takes its old rows to its
    /// new ones, and its rows are what a filtered source made afresh over the same child shows.
    @Test(arguments: seeds(300))
    func pagesAndFilteredChildrenMatchARecompute(seed: Int) throws {
        var random = Generator(seed: 5000 + seed)
        let (paginated, loader, _) = try PaginatedStateMachineTests.source(
            extra: seed % 3 == 0 ? [("placeholderStorageOptions", ["errors", "loading", "noResults"])] : [])
        let identity = paginated.identity
        let child: DataSource =
            seed % 2 == 0
            ? paginated : FilteredDataSource(name: "inner", identity: identity, child: paginated, filter: .field("v", .ne, 3), match: nil)
        var filter = Self.filter(&random), match = Self.match(&random, growing: nil)
        let filtered = FilteredDataSource(name: "f", identity: identity, child: child, filter: filter, match: match)
        let snapshots = SourceChangeSetTests.Snapshots()
        snapshots.remember([filtered])
        filtered.addObserver(snapshots)
        var nextID = 0, answered = 0
        paginated.fetchData()
        for step in 0..<24 {
            switch random.next(6) {
            case 0...2 where answered < loader.pending.count:
                // Mostly full pages (the page size is 2); a shorter one ends the list.
                let rows = (0..<(random.chance(80) ? 2 : random.next(2))).map { _ -> JSON in
                    defer { nextID += 1 }
                    return Self.object(&random).setting("id", to: JSON(nextID))
                }
                loader.respond(answered, json: .array(rows.filter { Placeholder.kind(of: $0) == nil }))
                answered += 1
            case 3 where answered < loader.pending.count:
                loader.fail(answered, FetchError(kind: .transport, message: "connection refused", url: nil))
                answered += 1
            case 4:
                filter = random.chance(50) ? filter : Self.filter(&random)
                match = Self.match(&random, growing: match)
                filtered.setFilter(filter, match: match)
            default:
                if !paginated.fetchNextPage() { _ = paginated.retry() }
            }
            #expect(snapshots.problems.isEmpty, "seed \(seed) step \(step): \(snapshots.problems)")
            snapshots.problems = []
            let fresh = FilteredDataSource(name: "fresh", identity: identity, child: child, filter: filter, match: match)
            #expect(
                filtered.layout.sections == fresh.layout.sections && filtered.rowHashes == fresh.rowHashes,
                "seed \(seed) step \(step): \(filtered.layout.sections) != \(fresh.layout.sections)")
            child.removeObserver(fresh)
        }
    }

    /// Rows are evaluated a block at a time, over all cores: the same rows, in the same order,
    /// as each row evaluated alone with `Predicate.matches` and `FuzzyMatcher.bestMatch`, over
    /// a list long enough to be split (many chunks, past `Parallel.threshold`).
    @Test(arguments: 0..<6)
    func blocksOfRowsPassAsRowsOneByOne(seed: Int) {
        var random = Generator(seed: 1000 + seed)
        let rows = (0..<(Parallel.threshold * 2 + random.next(3000))).map { _ in Self.object(&random) }
        let child = SimpleDataSource(name: "s", identity: Identity(key: nil), objects: rows)
        var filter = Self.filter(&random), match = Self.match(&random, growing: nil)
        let filtered = FilteredDataSource(name: "f", identity: Identity(key: nil), child: child, filter: filter, match: match)
        for step in 0..<6 {
            var matcher = FuzzyMatcher()
            var expected: [(row: JSON, placeholder: Bool, score: Int, item: Int)] = []
            for (item, row) in child.objects.enumerated() {
                if Placeholder.kind(of: row) != nil {
                    expected.append((row, true, 0, item))
                    continue
                }
                guard filter?.matches(row) ?? true else { continue }
                guard let match else {
                    expected.append((row, false, 0, item))
                    continue
                }
                let pattern = FuzzyPattern(match.query)
                if let best = matcher.bestMatch(pattern, in: row, keyPaths: match.keyPaths, positions: false) {
                    expected.append((row, false, best.match.score, item))
                }
            }
            if match != nil {
                expected.sort { a, b in
                    a.placeholder != b.placeholder ? !a.placeholder : a.score != b.score ? a.score > b.score : a.item < b.item
                }
            }
            let passing = expected.contains { !$0.placeholder }
            let shown = Array(filtered.layout.sections[0]).filter { $0 != Placeholder.noResultsRow }
            #expect(shown == expected.map(\.row), "seed \(seed) step \(step): \(String(describing: filter)) \(String(describing: match))")
            #expect((filtered.layout.sections[0].last == Placeholder.noResultsRow) == !passing, "the no-results row when nothing passes")
            // Half the time a query that grows, which reads only the previous matches.
            filter = random.chance(50) ? filter : Self.filter(&random)
            match = Self.match(&random, growing: match)
            filtered.setFilter(filter, match: match)
        }
    }

    @Test func editsAreFollowedNotRecomputed() throws {
        var followed = 0
        for seed in 0..<40 {
            var random = Generator(seed: seed)
            let simple = SimpleDataSource(
                name: "s", identity: Identity(key: JSONKeyPath("id")), objects: (0..<20).map { _ in Self.object(&random) })
            let filtered = FilteredDataSource(
                name: "f", identity: simple.identity, child: simple, filter: .field("v", .lt, 3),
                match: MatchQuery(query: "r", keyPaths: [JSONKeyPath("t")]))
            try simple.insert([Self.object(&random)], at: random.next(simple.objects.count + 1))
            followed += filtered.changesFollowed
        }
        #expect(followed >= 35, "\(followed) of 40 inserts followed in place")
    }
}

private extension String {
    func randomElement(_ random: inout Generator) -> Character { self[index(startIndex, offsetBy: random.next(count))] }
}

/// `fill`: a filtered source over a paginated child asks for the child's next pages while
/// fewer rows than `fill` pass, and no further.
@Suite struct FilteredFillTests {
    /// Page `page` (from 1) of two rows: ids 2·page−1 and 2·page.
    static func page(_ page: Int) -> JSON { PaginatedStateMachineTests.page([2 * page - 1, 2 * page]) }

    /// Answers every page asked for from request `from` on, in order, with `answer` (a page's
    /// JSON, or nil for a failure), until nothing more is asked for or `limit` requests are
    /// answered.
    static func answerAll(_ loader: FakeLoader, from: Int = 0, limit: Int = 200, _ answer: (Int) -> JSON?) {
        var answered = from
        while answered < loader.pending.count, answered < limit {
            if let json = answer(answered + 1) {
                loader.respond(answered, json: json)
            } else {
                loader.fail(answered, FetchError(kind: .transport, message: "connection refused", url: nil))
            }
            answered += 1
        }
    }

    /// Filling asks whether the child has pages to come, not whether it shows a loading row:
    /// a child that stores no placeholders fills as well.
    @Test func aChildWithoutPlaceholderRowsFillsToo() throws {
        let (paginated, loader, _) = try PaginatedStateMachineTests.source(extra: [("placeholderStorageOptions", 0)])
        let filtered = FilteredDataSource(
            name: "f", identity: paginated.identity, child: paginated, filter: .field("id", .ge, 9), match: nil, fill: 3)
        paginated.fetchData()
        loader.respond(0, json: Self.page(1))
        #expect(filtered.allObjects.isEmpty, "no loading row stored, and no no-results row while pages come")
        Self.answerAll(loader, from: 1) { $0 <= 10 ? Self.page($0) : .none }
        // Page 5 brings 9 and 10, page 6 makes 4: 3 reached.
        #expect(loader.requestedURLs.count == 6)
        #expect(filtered.allObjects.map { $0["id"]?.integerValue } == [9, 10, 11, 12])
    }

    @Test func pagesAreAskedForUntilFillRowsPassAndNoFurther() throws {
        let (paginated, loader, childEvents) = try PaginatedStateMachineTests.source()
        // Rows from id 79 on pass: the first two are on page 40 of 100.
        let filtered = FilteredDataSource(
            name: "f", identity: paginated.identity, child: paginated, filter: .field("id", .ge, 79), match: nil, fill: 5)
        let events = Recorder().observing(filtered)
        paginated.fetchData()
        loader.respond(0, json: Self.page(1))
        #expect(filtered.allObjects == [Placeholder.loadingRow], "while filling, the loading row and no no-results row")
        Self.answerAll(loader) { $0 <= 100 ? Self.page($0) : .none }
        // Page 40 brings 2 rows, 41 makes 4, 42 makes 6: 5 reached.
        #expect(loader.requestedURLs.count == 42, "\(loader.requestedURLs.suffix(3))")
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=42&page_size=2")
        #expect(filtered.allObjects.map { $0["id"]?.integerValue } == [79, 80, 81, 82, 83, 84, nil])
        #expect(filtered.pagesAskedToFill == 41)
        // Each cycle of the child and of the filtered source ends before the next starts.
        let cycles = { (recorded: [String]) in recorded.filter { !$0.hasSuffix(".change") } }
        #expect(cycles(childEvents.events) == Array(repeating: ["p.will", "p.finished"], count: 42).flatMap { $0 })
        #expect(cycles(events.events) == Array(repeating: ["f.will", "f.finished"], count: 42).flatMap { $0 })

        // A narrower filter: fewer than 5 pass again, so the pages after come.
        filtered.setFilter(.field("id", .ge, 83), match: nil)
        Self.answerAll(loader, from: 42) { $0 <= 100 ? Self.page($0) : .none }
        #expect(loader.requestedURLs.count == 44, "83 and 84 pass; pages 43 and 44 bring 85 to 88")
        #expect(filtered.allObjects.map { $0["id"]?.integerValue } == [83, 84, 85, 86, 87, 88, nil])
    }

    @Test func fillStopsAtTheLastPageAndShowsNoResultsThen() throws {
        let (paginated, loader, _) = try PaginatedStateMachineTests.source()
        let filtered = FilteredDataSource(
            name: "f", identity: paginated.identity, child: paginated, filter: .field("id", .eq, -1), match: nil, fill: 10)
        paginated.fetchData()
        // Two pages, then an empty one: the end.
        Self.answerAll(loader) { $0 < 3 ? Self.page($0) : PaginatedStateMachineTests.page([]) }
        #expect(loader.requestedURLs.count == 3)
        #expect(filtered.allObjects == [Placeholder.noResultsRow])
    }

    @Test func fillStopsAtAFailure() throws {
        let (paginated, loader, _) = try PaginatedStateMachineTests.source(
            extra: [("placeholderStorageOptions", ["errors", "loading", "noResults"])])
        let filtered = FilteredDataSource(
            name: "f", identity: paginated.identity, child: paginated, filter: .field("id", .eq, -1), match: nil, fill: 10)
        paginated.fetchData()
        // (`.none`, not `nil`: JSON is ExpressibleByNilLiteral, and a nil here would be JSON's null.)
        Self.answerAll(loader) { $0 < 4 ? Self.page($0) : .none }
        #expect(loader.requestedURLs.count == 4, "three pages, then the failed fourth; nothing after it")
        #expect(filtered.allObjects.contains { Placeholder.kind(of: $0) == .error }, "the child's error row: \(filtered.allObjects)")
        #expect(
            !filtered.allObjects.contains { Placeholder.kind(of: $0) == .noResults },
            "no result is known while pages past the failure are to come: \(filtered.allObjects)")
        // Asked again by the user, the page comes, and filling goes on from there.
        #expect(paginated.retry() == .append)
        #expect(loader.requestedURLs.count == 5)
        Self.answerAll(loader, from: 4, limit: 8) { Self.page($0) }
        #expect(loader.requestedURLs.count == 9, "the retried page and the pages after it: eight answered, the ninth asked for")
    }

    @Test func withoutFillOrWithItRemovedNothingMoreIsAsked() throws {
        let (paginated, loader, _) = try PaginatedStateMachineTests.source()
        let filtered = FilteredDataSource(
            name: "f", identity: paginated.identity, child: paginated, filter: .field("id", .eq, -1), match: nil)
        paginated.fetchData()
        Self.answerAll(loader) { Self.page($0) }
        #expect(loader.requestedURLs.count == 1)
        #expect(filtered.allObjects == [Placeholder.loadingRow, Placeholder.noResultsRow] || filtered.allObjects.count == 2)
        filtered.setFill(3)
        #expect(loader.requestedURLs.count == 2, "one more page asked for at once")
        filtered.setFill(nil)
        loader.respond(1, json: Self.page(2))
        #expect(loader.requestedURLs.count == 2, "once fill is removed, the answered page asks for no other")
    }
}
