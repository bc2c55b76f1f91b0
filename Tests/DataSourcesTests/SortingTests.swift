@testable import DataSources
import JSONKit
import Testing

@Suite struct SortingTests {
    static func sorted(_ values: [JSON?], ascending: Bool = true) -> [JSON?] {
        let objects = values.map { value in value.map { JSON.object([("v", $0)]) } ?? [:] }
        return SortDescriptor.sorted(objects, by: [SortDescriptor(keyPath: JSONKeyPath("v"), ascending: ascending)]).map { $0["v"] }
    }

    @Test func kindsHaveAFixedOrder() {
        let ordered: [JSON?] = [nil, true, false, 3, -1, 2.5, "b", "B", ["a": 1], [2], [1, 2]]
        #expect(Self.sorted(ordered) == [nil, false, true, -1, 2.5, 3, "B", "b", [1, 2], [2], ["a": 1]])
    }

    @Test func missingAndNullAreEqualAndComeFirstAscendingLastDescending() {
        let objects: [JSON] = [["v": 1, "i": 0], ["i": 1], ["v": .null, "i": 2], ["v": 0, "i": 3]]
        let up = SortDescriptor.sorted(objects, by: [SortDescriptor(keyPath: JSONKeyPath("v"), ascending: true)])
        #expect(up.map { $0["i"] } == [1, 2, 3, 0], "stable: missing and null keep their order")
        let down = SortDescriptor.sorted(objects, by: [SortDescriptor(keyPath: JSONKeyPath("v"), ascending: false)])
        #expect(down.map { $0["i"] } == [0, 3, 1, 2])
    }

    @Test func numbersCompareByValueAcrossIntegersAndReals() {
        #expect(Self.sorted([10, 2.5, -3, 2, 1e20, -0.5, 9_007_199_254_740_993, 9_007_199_254_740_992]) ==
            [-3, -0.5, 2, 2.5, 10, 9_007_199_254_740_992, 9_007_199_254_740_993, 1e20])
    }

    @Test func stringsCompareByCodePoints() {
        // Swift's `<` would find the two spellings of "é" equal; code points put the
        // decomposed one (U+0065 U+0301) before the precomposed one (U+00E9).
        #expect(Self.sorted(["é", "e\u{301}", "a", "Z", "ab", "", "abc", "aa", "a\u{0}", "😀", "\u{FFFF}"]) ==
            ["", "Z", "a", "a\u{0}", "aa", "ab", "abc", "e\u{301}", "é", "\u{FFFF}", "😀"])
        #expect(Self.sorted(["identical prefix, 2", "identical prefix, 10", "identical prefix"]) ==
            ["identical prefix", "identical prefix, 10", "identical prefix, 2"])
    }

    @Test func laterDescriptorsBreakTiesAndTheRestIsStable() {
        let objects: [JSON] = [["a": 1, "b": "x", "i": 0], ["a": 0, "b": "y", "i": 1], ["a": 1, "b": "y", "i": 2],
                               ["a": 0, "b": "y", "i": 3], ["a": 1, "b": "x", "i": 4]]
        let sorted = SortDescriptor.sorted(objects, by: [SortDescriptor(keyPath: JSONKeyPath("a"), ascending: false),
                                                         SortDescriptor(keyPath: JSONKeyPath("b"), ascending: true)])
        #expect(sorted.map { $0["i"] } == [0, 4, 2, 1, 3])
    }

    @Test func withoutDescriptorsTheOrderIsKept() {
        let objects: [JSON] = [3, 1, 2]
        #expect(SortDescriptor.sorted(objects, by: []) == objects)
    }
}
