@testable import DataSources
import Testing

/// `RowArray` against `Array` as the oracle: random edits of every kind, across chunk
/// boundaries, splits and merges, with the chunks' invariants checked after each.
@Suite struct RowArrayTests {
    @Test(arguments: seeds(40)) func randomEditsMatchAnArray(seed: Int) throws {
        var random = Generator(seed: seed)
        var oracle = Array(0..<random.next(6000))
        var rows = RowArray(oracle)
        var nextValue = oracle.count
        func fresh(_ count: Int) -> [Int] {
            defer { nextValue += count }
            return Array(nextValue..<nextValue + count)
        }
        for step in 0..<250 {
            let lower = random.next(oracle.count + 1)
            let upper = lower + random.next(min(oracle.count - lower, random.chance(10) ? 3000 : 5) + 1)
            switch random.next(8) {
            case 0:
                let values = fresh(random.chance(10) ? random.next(2500) : 1)
                oracle.insert(contentsOf: values, at: lower)
                rows.insert(contentsOf: values, at: lower)
            case 1:
                oracle.removeSubrange(lower..<upper)
                rows.removeSubrange(lower..<upper)
            case 2:
                let values = fresh(random.next(random.chance(10) ? 3000 : 4))
                oracle.replaceSubrange(lower..<upper, with: values)
                rows.replaceSubrange(lower..<upper, with: values)
            case 3:
                let values = fresh(random.next(random.chance(10) ? 2000 : 3))
                oracle.append(contentsOf: values)
                rows.append(contentsOf: values)
            case 4 where !oracle.isEmpty:
                let at = random.next(oracle.count), value = fresh(1)[0]
                oracle[at] = value
                rows[at] = value
            case 5 where !oracle.isEmpty:
                let at = random.next(oracle.count)
                #expect(oracle.remove(at: at) == rows.remove(at: at))
            case 6:
                // One value repeated (unloaded rows): whole chunks of it, stored when written.
                let value = fresh(1)[0], repeats = random.next(random.chance(4) ? 5000 : 30)
                oracle.append(contentsOf: repeatElement(value, count: repeats))
                rows.append(repeating: value, count: repeats)
            default:
                let value = fresh(1)[0]
                oracle.append(value)
                rows.append(value)
            }
            if let broken = rows.brokenInvariant {
                Issue.record("seed \(seed), step \(step): \(broken)")
                return
            }
            try #require(rows.count == oracle.count, "seed \(seed), step \(step)")
        }
        #expect(Array(rows) == oracle)
        #expect(rows.indices.map { rows[$0] } == oracle)
        let from = random.next(oracle.count + 1), to = from + random.next(oracle.count - from + 1)
        #expect(rows.elements(in: from..<to) == Array(oracle[from..<to]))
        var forward: [Int] = []
        rows.forEach(from: from) { position, value in
            #expect(oracle[position] == value)
            forward.append(value)
            return true
        }
        #expect(forward == Array(oracle[from...]))
    }

    /// Gathering rows at given positions (a filter's kept rows) builds full chunks straight,
    /// on every core past `Parallel.threshold` positions, as an array of those rows would.
    @Test(arguments: [0, 1, 1023, 1024, 1025, 20_000])
    func gatheringPositionsGivesThoseRows(count: Int) {
        var random = Generator(seed: count)
        let source = RowArray(Array(0..<30_000).map { $0 * 7 })
        let positions = (0..<count).map { _ in random.next(source.count) }
        let gathered = RowArray.gathering(positions, from: source)
        #expect(gathered.brokenInvariant == nil)
        #expect(Array(gathered) == positions.map { $0 * 7 } && gathered.count == count)
        var grown = gathered
        grown.append(contentsOf: [1, 2, 3])
        #expect(grown.brokenInvariant == nil && Array(grown) == positions.map { $0 * 7 } + [1, 2, 3])
    }

    @Test func anEditMovesOneChunkNotTheList() {
        var rows = RowArray(0..<1_000_000)
        #expect(rows.chunkCount == 1_000_000 / RowArray<Int>.chunkSize + 1)
        for step in 0..<2000 { rows.insert(-step, at: (step * 7919) % rows.count) }
        for step in 0..<2000 { rows.remove(at: (step * 104_729) % rows.count) }
        #expect(rows.brokenInvariant == nil)
        #expect(rows.count == 1_000_000)
        // Edits split and merge chunks locally: their number stays near count / chunkSize.
        #expect(rows.chunkCount < 2 * (1_000_000 / RowArray<Int>.chunkSize))
    }

    /// Ten million rows of one value (a counted list's unloaded rows) are chunks that each
    /// hold it once; writing a row stores its chunk alone, and reads anywhere see the rows.
    @Test func tenMillionRepeatedRowsAreStoredOnlyWhereWritten() {
        var rows = RowArray(0..<10)
        rows.append(repeating: -1, count: 10_000_000)
        #expect(rows.count == 10_000_010 && rows.brokenInvariant == nil)
        #expect(rows.storedElements == RowArray<Int>.chunkSize, "the first chunk, filled; the rest repeated")
        for (position, value) in [(0, 0), (9, 9), (10, -1), (5_000_000, -1), (10_000_009, -1)] { #expect(rows[position] == value) }
        // A page loaded near the end: its rows overwrite one or two chunks.
        for offset in 0..<100 { rows[9_999_900 + offset] = offset }
        #expect(rows.storedElements <= 3 * RowArray<Int>.chunkSize)
        #expect(rows.elements(in: 9_999_899..<9_999_902) == [-1, 0, 1])
        var seen = 0
        rows.forEach(from: 9_999_990) { _, _ in
            seen += 1
            return true
        }
        #expect(seen == 20)
        rows.removeSubrange(20...)
        #expect(Array(rows) == Array(0..<10) + Array(repeating: -1, count: 10))
        #expect(rows.brokenInvariant == nil)
        #expect(RowArray(repeating: 7, count: 3000).elements(in: 0..<3000) == Array(repeating: 7, count: 3000))
    }

    @Test func sharedCopiesStayIndependent() {
        let original = RowArray(0..<5000)
        var copy = original
        copy.insert(-1, at: 2500)
        copy[10] = -2
        #expect(Array(original) == Array(0..<5000))
        #expect(copy.count == 5001 && copy[2500] == -1 && copy[10] == -2 && copy[2501] == 2500)
    }
}
