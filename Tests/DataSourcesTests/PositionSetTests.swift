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
}
