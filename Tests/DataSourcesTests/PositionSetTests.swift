@testable import DataSources
import Testing

@Suite struct PositionSetTests {
    @Test func allBelowACountHoldsExactlyThosePositions() {
        let set = PositionSet(all: 3)
        #expect((0..<3).allSatisfy(set.contains))
        #expect(!set.contains(3), "init(all:) used to ignore its count and hold every position")
        #expect(!set.contains(-1))
    }

    @Test func insertingKeepsWhatWasThere() {
        var set = PositionSet(all: 2)
        set.insert(5)
        #expect([0, 1, 5].allSatisfy(set.contains))
        #expect(![2, 3, 4, 6].contains(where: set.contains))
        var sparse = PositionSet()
        sparse.insert(4)
        #expect(sparse.contains(4) && !sparse.contains(0))
    }

    @Test func theLongestIncreasingSubsequenceMarksItsPositions() {
        let kept = ChangeSet.longestIncreasingSubsequence([0, 1, 2])
        #expect((0..<3).allSatisfy(kept.contains) && !kept.contains(3))
        let lis = ChangeSet.longestIncreasingSubsequence([3, 0, 1, 4, 2])
        #expect([1, 2, 4].allSatisfy(lis.contains) || [1, 2, 3].allSatisfy(lis.contains))
    }

    /// Against a quadratic oracle: the positions chosen are strictly increasing in value and
    /// as many as the longest such run has, for sequences mostly in order (a list with a few
    /// moves, where most values extend the run) and for shuffled ones.
    @Test(arguments: seeds(200))
    func theLongestIncreasingSubsequenceIsOneOfTheLongest(seed: Int) {
        var random = Generator(seed: seed)
        let count = random.next(60)
        var values = Array(0..<count)
        if seed % 2 == 0 {
            for index in values.indices.reversed() { values.swapAt(index, random.next(index + 1)) }
        } else {
            for _ in 0..<random.next(4) where count > 1 { values.swapAt(random.next(count), random.next(count)) }
        }
        if seed % 3 == 0 { values = values.map { $0 / 2 } }  // repeated values: strictly increasing only
        var longestEndingAt = [Int](repeating: 1, count: count)
        for end in 0..<count {
            for start in 0..<end where values[start] < values[end] {
                longestEndingAt[end] = max(longestEndingAt[end], longestEndingAt[start] + 1)
            }
        }
        let chosen = ChangeSet.longestIncreasingSubsequence(values)
        let positions = (0..<count).filter(chosen.contains)
        #expect(positions.count == (longestEndingAt.max() ?? 0), "seed \(seed)")
        #expect(zip(positions, positions.dropFirst()).allSatisfy { values[$0] < values[$1] }, "seed \(seed)")
    }
}
