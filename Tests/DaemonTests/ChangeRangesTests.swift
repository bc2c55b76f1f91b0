@testable import Daemon
import DataSources
import JSONKit
import Testing

/// The `changeRanges` capability: runs of consecutive rows in a change set as `[section, item, count]`.
@Suite struct ChangeRangesTests {
    static func paths(_ pairs: [(Int, Int)]) -> IndexPathList { IndexPathList(pairs.map { IndexPath(section: $0.0, item: $0.1) }) }

    @Test func runsOfTwoOrMoreBecomeTriplesAndSinglesStayPairs() throws {
        let paths = Self.paths([(0, 0), (0, 1), (0, 2), (0, 5), (1, 6), (1, 7), (2, 7)])
        #expect(IndexPath.rangesJSON(paths).description == "[[0,0,3],[0,5],[1,6,2],[2,7]]")
        #expect(IndexPath.rangesJSON([]).description == "[]")
    }

    @Test func aRunEndsWhereTheSectionChangesOrAnItemIsSkipped() throws {
        let paths = Self.paths([(0, 4), (1, 5), (1, 7), (1, 8)])
        #expect(IndexPath.rangesJSON(paths).description == "[[0,4],[1,5],[1,7,2]]")
    }

    @Test func aMillionInsertedRowsAreOneElement() throws {
        var changes = ChangeSet()
        changes.inserted = IndexPathList((0..<1_000_000).map { IndexPath(section: 0, item: $0) })
        let json = changes.json(ranges: true)
        #expect(json["inserted"]?.description == "[[0,0,1000000]]")
        #expect(changes.json(ranges: false)["inserted"]?.count == 1_000_000)
    }
}
