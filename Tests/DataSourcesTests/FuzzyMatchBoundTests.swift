@testable import DataSources
import JSONKit
import Testing

/// The fuzzy matcher's bound: an alignment of more than `FuzzyMatcher.defaultCellLimit` cells
/// (query characters × text characters) is not built; fzf's greedy "v1" algorithm scores the
/// text instead, as fzf does past its slab. (The "v2" scores themselves are FuzzyMatchTests',
/// in DaemonTests.)
@Suite struct FuzzyMatchBoundTests {
    static func match(_ query: String, _ text: String, cellLimit: Int = FuzzyMatcher.defaultCellLimit) -> FuzzyMatch? {
        var matcher = FuzzyMatcher(cellLimit: cellLimit)
        return Array(text.utf8).withUnsafeBufferPointer { matcher.match(FuzzyPattern(query), in: $0, positions: true) }
    }

    /// fzf's `FuzzyMatchV1` and `calculateScore` (src/algo/algo.go; forward, no normalization)
    /// written out again over a string's scalars, the score clamped at 0 as fzf ranks it
    /// (src/result.go, `util.AsUint16`): what the matcher answers past its limit.
    static func fzfV1(_ query: String, _ text: String) -> FuzzyMatch? {
        let caseSensitive = query.unicodeScalars.contains { $0.properties.isUppercase }
        func fold(_ scalar: Unicode.Scalar) -> UInt32 { caseSensitive ? scalar.value : FuzzyPattern.folded(scalar.value) }
        let pattern = query.unicodeScalars.map(fold)
        guard !pattern.isEmpty else { return FuzzyMatch(score: 0, positions: []) }
        let original = text.unicodeScalars.map(\.value), characters = text.unicodeScalars.map(fold)
        var pidx = 0, sidx = -1, eidx = -1
        for index in characters.indices where characters[index] == pattern[pidx] {
            if sidx < 0 { sidx = index }
            pidx += 1
            if pidx == pattern.count {
                eidx = index + 1
                break
            }
        }
        guard eidx >= 0 else { return nil }
        pidx -= 1
        for index in stride(from: eidx - 1, through: sidx, by: -1) where characters[index] == pattern[pidx] {
            pidx -= 1
            if pidx < 0 {
                sidx = index
                break
            }
        }
        var score = 0, inGap = false, consecutive = 0, firstBonus: Int32 = 0, positions: [Int] = []
        pidx = 0
        var previous = sidx > 0 ? FuzzyMatcher.characterClass(original[sidx - 1]) : .white
        for index in sidx..<eidx {
            let current = FuzzyMatcher.characterClass(original[index])
            if characters[index] == pattern[pidx] {
                positions.append(index)
                score += 16
                var bonus = FuzzyMatcher.bonus(previous, current)
                if consecutive == 0 {
                    firstBonus = bonus
                } else {
                    if bonus >= 8 && bonus > firstBonus { firstBonus = bonus }
                    bonus = max(bonus, firstBonus, 4)
                }
                score += Int(pidx == 0 ? bonus * 2 : bonus)
                inGap = false
                consecutive += 1
                pidx += 1
            } else {
                score += inGap ? -1 : -3
                inGap = true
                consecutive = 0
                firstBonus = 0
            }
            previous = current
        }
        return FuzzyMatch(score: max(score, 0), positions: positions)
    }

    /// 256 characters, the longest query the wire takes, and a text of `gap` dots before each
    /// of its characters: one way to fit, across the whole text.
    static let longQuery = String(String.UnicodeScalarView((0..<256).map { Array("abcdefghijklmnopqrstuvwxyz".unicodeScalars)[$0 % 26] }))

    static func spread(_ query: String, gap: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(query.utf8.count * (gap + 1))
        for character in query.utf8 {
            bytes.append(contentsOf: repeatElement(UInt8(ascii: "."), count: gap))
            bytes.append(character)
        }
        return bytes
    }

    /// A 3.5 MB text matched with a 256-character query: the alignment would be 900 million
    /// cells (3.6 GB a matrix). The matcher holds at most the limit's cells whatever the text;
    /// the decoded text is 8 bytes a character (as given and as matched).
    @Test func aLongTextWithALongQueryStaysWithinTheCellLimit() throws {
        let limit = FuzzyMatcher.defaultCellLimit
        // A moderate text first (6.6 million cells): before the bound, 53 MB of alignment.
        for gap in [100, 3_500_000 / 256 - 1] {
            let bytes = Self.spread(Self.longQuery, gap: gap)
            var matcher = FuzzyMatcher()
            let found = try #require(bytes.withUnsafeBufferPointer { matcher.match(FuzzyPattern(Self.longQuery), in: $0, positions: true) })
            try #require(
                matcher.alignmentBytes <= 12 * limit + 16 * 1024,
                "\(bytes.count) bytes: \(matcher.alignmentBytes) bytes of alignment, past \(limit) cells")
            #expect(matcher.textBytes <= 8 * bytes.count + 16 * 1024, "\(bytes.count) bytes: \(matcher.textBytes) bytes of decoded text")
            // fzf v1: every character after a dot (a word start, 8; the first twice), each gap
            // 3 and 1 a further dot: less than 0, so 0, as fzf ranks it.
            #expect(found.positions == (0..<256).map { $0 * (gap + 1) + gap })
            #expect(256 * 16 + 8 * 2 + 255 * 8 - 255 * (3 + gap - 1) < 0 && found.score == 0, "\(bytes.count) bytes")
        }
        // Gaps of 4 (1,280 characters, 326,656 cells): 16 + 8 × 2, then 255 × (16 + 8 - 3 - 1 × 3).
        var matcher = FuzzyMatcher()
        let short = try #require(
            Self.spread(Self.longQuery, gap: 4).withUnsafeBufferPointer {
                matcher.match(FuzzyPattern(Self.longQuery), in: $0, positions: false)
            })
        #expect(short.score == 32 + 255 * 18)

        // A long text whose query fits in a short stretch is aligned in full (v2).
        var bytes = [UInt8](repeating: UInt8(ascii: "."), count: 3_500_000)
        bytes += Array(("x" + Self.longQuery).utf8)
        matcher = FuzzyMatcher()
        let found = try #require(bytes.withUnsafeBufferPointer { matcher.match(FuzzyPattern(Self.longQuery), in: $0, positions: true) })
        #expect(found.positions == Array(3_500_001..<3_500_257), "the run, not the first places each character fits")
        #expect(found.score == 256 * 16 + 255 * 4, "a run in the middle of a word: 4 a character after the first")
        #expect(matcher.alignmentBytes <= 12 * limit + 16 * 1024)
    }

    /// A filtered source over a row of 3.5 MB, with a 256-character query: the row matches
    /// (score 0, its gaps costing more than its characters earn), after the rows that score.
    @Test func aFilteredSourceRanksARowTooLongToAlign() throws {
        let identity = Identity(key: JSONKeyPath("id"))
        let long = String(decoding: Self.spread(Self.longQuery, gap: 3_500_000 / 256 - 1), as: UTF8.self)
        let rows: [JSON] = [["id": 1, "t": JSON(long)], ["id": 2, "t": "short"], ["id": 3, "t": JSON(Self.longQuery)]]
        let child = SimpleDataSource(name: "rows", identity: identity, objects: rows)
        let filtered = FilteredDataSource(
            name: "f", identity: identity, child: child, filter: nil, match: MatchQuery(query: Self.longQuery, keyPaths: [JSONKeyPath("t")])
        )
        #expect(filtered.layout.sections.map { $0.map { $0["id"] } } == [[3, 1]])
        let (score, _, positions) = try #require(filtered.matchPositions(of: rows[0]))
        #expect(score == 0 && positions.count == 256 && positions.last == long.unicodeScalars.count - 1)
    }

    /// fzf's own cases for its v1 algorithm (src/algo/algo_test.go, TestFuzzyMatch and
    /// TestFuzzyMatchBackward, forward): the first place the query fits, shortened from its
    /// end, scored with v2's constants. The limit of 0 cells makes every text take that path.
    @Test(
        arguments: [
            ("obz", "fooBarbaz1", [2, 3, 8], 16 * 3 + 7 - 3 - 1 * 3),
            ("fbb", "foo bar baz", [0, 4, 8], 16 * 3 + 10 * 2 + 10 * 2 - 3 * 2 - 1 * 4),
            ("rdoc", "/AutomatorDocument.icns", [9, 10, 11, 12], 16 * 4 + 7 + 4 * 2),
            ("zshc", "/man1/zshcompctl.1", [6, 7, 8, 9], 16 * 4 + 9 * 2 + 9 * 3),
            ("zshc", "/.oh-my-zsh/cache", [8, 9, 10, 12], 16 * 4 + 8 * 2 + 8 * 2 - 3 + 9),
            ("12356", "ab0123 456", [3, 4, 5, 8, 9], 16 * 5 + 4 * 3 - 3 - 1),
            ("12356", "abc123 456", [3, 4, 5, 8, 9], 16 * 5 + 7 * 2 + 7 * 2 + 4 - 3 - 1),
            ("fbb", "foo/bar/baz", [0, 4, 8], 16 * 3 + 10 * 2 + 9 * 2 - 3 * 2 - 1 * 4),
            ("fbb", "fooBarBaz", [0, 3, 6], 16 * 3 + 10 * 2 + 7 * 2 - 3 * 2 - 1 * 2),
            ("fbb", "foo barbaz", [0, 4, 7], 16 * 3 + 10 * 2 + 10 - 3 * 2 - 1 * 3),
            ("foob", "fooBar Baz", [0, 1, 2, 3], 16 * 4 + 10 * 2 + 10 * 3),
            ("foo-b", "xFoo-Bar Baz", [1, 2, 3, 4, 5], 16 * 5 + 7 * 2 + 7 * 2 + 8 + 8),
            ("oBz", "fooBarbaz", [2, 3, 8], 16 * 3 + 7 - 3 - 1 * 3),
            ("FBB", "Foo/Bar/Baz", [0, 4, 8], 16 * 3 + 10 * 2 + 9 * 2 - 3 * 2 - 1 * 4),
            ("FBB", "FooBarBaz", [0, 3, 6], 16 * 3 + 10 * 2 + 7 * 2 - 3 * 2 - 1 * 2),
            ("FooB", "FooBar Baz", [0, 1, 2, 3], 16 * 4 + 10 * 2 + 10 * 2 + 10),
            ("o-ba", "foo-bar", [2, 3, 4, 5], 16 * 4 + 8 * 3),
            // v1 only: the first "f...b", not the better "fb" at the end (v2 scores 62 there).
            ("fb", "foobar fb", [0, 3], 16 * 2 + 10 * 2 - 3 - 1),
        ] as [(String, String, [Int], Int)])
    func pastTheLimitScoresAsFzfsV1(query: String, text: String, positions: [Int], score: Int) {
        #expect(Self.match(query, text, cellLimit: 0) == FuzzyMatch(score: score, positions: positions))
        #expect(Self.fzfV1(query, text) == FuzzyMatch(score: score, positions: positions), "the reference agrees")
    }

    @Test func pastTheLimitNothingMatchesThatCannot() {
        #expect(Self.match("oBZ", "fooBarbaz", cellLimit: 0) == nil)
        #expect(Self.match("fooBarbazz", "fooBarbaz", cellLimit: 0) == nil)
        #expect(Self.match("", "fooBarbaz", cellLimit: 0) == FuzzyMatch(score: 0, positions: []))
    }

    /// fzf 0.38 ranks these lines, best first, so (`printf '%s\n' "xf b" "foo xb" "foobar fb"
    /// "f-b" "f b" fb | fzf --algo=v1 --filter fb`; with `--algo=v2` "foobar fb" comes second):
    /// the scores past the limit order them the same, each score its own (no tie to break).
    @Test func pastTheLimitRanksAsFzfV1Does() {
        let ranked = ["fb", "f b", "f-b", "foobar fb", "foo xb", "xf b"]
        let scores = ranked.map { Self.match("fb", $0, cellLimit: 0)?.score ?? .min }
        #expect(scores == scores.sorted(by: >) && Set(scores).count == scores.count, "\(scores)")
        #expect(Self.match("fb", "foobar fb", cellLimit: 0)?.score == 48 && Self.match("fb", "foobar fb")?.score == 62)
    }

    /// The limit is on cells: a text whose alignment has exactly the limit's cells is aligned
    /// (v2), one more cell and it is scored greedily (v1).
    @Test func theLimitIsTheAlignmentsCells() {
        // "fb" over "foobar fb": from the first f to the last b, 9 characters, 18 cells.
        #expect(Self.match("fb", "foobar fb", cellLimit: 18) == FuzzyMatch(score: 16 * 2 + 10 * 2 + 10, positions: [7, 8]))
        #expect(Self.match("fb", "foobar fb", cellLimit: 17) == FuzzyMatch(score: 16 * 2 + 10 * 2 - 3 - 1, positions: [0, 3]))
    }

    /// Below the limit nothing changed: the default matcher answers as one with no limit (the
    /// whole alignment); past it, as fzf's v1 written out again.
    @Test(arguments: seeds(20))
    func randomTextsMatchTheAlignmentBelowTheLimitAndV1PastIt(seed: Int) {
        var random = Generator(seed: seed)
        let alphabet = Array("abAB -/_.1é\u{212A}k".unicodeScalars)
        func string(_ count: Int) -> String {
            String(String.UnicodeScalarView((0..<count).map { _ in alphabet[random.next(alphabet.count)] }))
        }
        var limited = FuzzyMatcher(), unlimited = FuzzyMatcher(cellLimit: .max), greedy = FuzzyMatcher(cellLimit: 0)
        for _ in 0..<300 {
            let query = string(1 + random.next(4)), text = string(random.next(40))
            let bytes = Array(text.utf8), pattern = FuzzyPattern(query)
            bytes.withUnsafeBufferPointer { buffer in
                let full = unlimited.match(pattern, in: buffer, positions: true)
                #expect(limited.match(pattern, in: buffer, positions: true) == full, "\(query) in \(text)")
                #expect(greedy.match(pattern, in: buffer, positions: true) == Self.fzfV1(query, text), "\(query) in \(text)")
                #expect(greedy.match(pattern, in: buffer, positions: false)?.score == Self.fzfV1(query, text)?.score)
                #expect((full == nil) == (Self.fzfV1(query, text) == nil), "both find the text or neither")
            }
        }
    }
}
