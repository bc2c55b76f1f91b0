@testable import DataSources
import Testing

@Suite struct IndexPathListTests {
    static func path(_ section: Int, _ item: Int) -> IndexPath { IndexPath(section: section, item: item) }

    @Test func consecutiveItemsOfASectionAreOneRun() {
        let list: IndexPathList = [Self.path(0, 0), Self.path(0, 1), Self.path(0, 2), Self.path(0, 5), Self.path(1, 6), Self.path(1, 7)]
        #expect(list.runs.map { [$0.section, $0.item, $0.count] } == [[0, 0, 3], [0, 5, 1], [1, 6, 2]])
        #expect(list.count == 6)
        #expect(Array(list) == [Self.path(0, 0), Self.path(0, 1), Self.path(0, 2), Self.path(0, 5), Self.path(1, 6), Self.path(1, 7)])
        #expect(list[3] == Self.path(0, 5) && list[5] == Self.path(1, 7), "by position")
        #expect(Array(list.reversed()) == Array(list).reversed(), "walked backwards across runs")
    }

    @Test func aRangeExtendsTheLastRunOnlyWhereItFollowsIt() {
        var list = IndexPathList()
        list.append(section: 0, items: 0..<1_000_000)
        list.append(section: 0, items: 1_000_000..<1_000_010)
        list.append(section: 1, items: 1_000_010..<1_000_011)
        list.append(section: 1, items: 5..<5)
        #expect(list.runs.count == 2 && list.count == 1_000_011)
        #expect(list.runs.first?.count == 1_000_010)
    }

    @Test func theSamePathsInTheSameOrderAreEqualHoweverTheyWereAdded() {
        var byRange = IndexPathList()
        byRange.append(section: 2, items: 3..<6)
        let byPath: IndexPathList = [Self.path(2, 3), Self.path(2, 4), Self.path(2, 5)]
        #expect(byRange == byPath)
        #expect(byRange != [Self.path(2, 3), Self.path(2, 5), Self.path(2, 4)], "order counts")
    }

    @Test func shiftingMovesEveryPathDownItsSection() {
        let list: IndexPathList = [Self.path(0, 0), Self.path(0, 1), Self.path(0, 5)]
        #expect(Array(list.shifted(by: 10)) == [Self.path(0, 10), Self.path(0, 11), Self.path(0, 15)])
        #expect(list.shifted(by: 10).count == 3 && list.shifted(by: 0) == list)
    }

    @Test func sortingOrdersThePathsAndMergesRunsThatMeet() {
        var list: IndexPathList = [Self.path(1, 0), Self.path(0, 4), Self.path(0, 2), Self.path(0, 3)]
        list.sort()
        #expect(Array(list) == [Self.path(0, 2), Self.path(0, 3), Self.path(0, 4), Self.path(1, 0)])
        #expect(list.runs.count == 2)
        var sorted: IndexPathList = [Self.path(0, 1), Self.path(3, 0)]
        sorted.sort()
        #expect(Array(sorted) == [Self.path(0, 1), Self.path(3, 0)], "already in order: unchanged")
    }
}
