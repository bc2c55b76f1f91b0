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
        #expect(
            Self.sorted([10, 2.5, -3, 2, 1e20, -0.5, 9_007_199_254_740_993, 9_007_199_254_740_992]) == [
                -3, -0.5, 2, 2.5, 10, 9_007_199_254_740_992, 9_007_199_254_740_993, 1e20,
            ])
    }

    @Test func stringsCompareByCodePoints() {
        // Swift's `<` would find the two spellings of "é" equal; code points put the
        // decomposed one (U+0065 U+0301) before the precomposed one (U+00E9).
        #expect(
            Self.sorted(["é", "e\u{301}", "a", "Z", "ab", "", "abc", "aa", "a\u{0}", "😀", "\u{FFFF}"]) == [
                "", "Z", "a", "a\u{0}", "aa", "ab", "abc", "e\u{301}", "é", "\u{FFFF}", "😀",
            ])
        #expect(
            Self.sorted(["identical prefix, 2", "identical prefix, 10", "identical prefix"]) == [
                "identical prefix", "identical prefix, 10", "identical prefix, 2",
            ])
    }

    @Test func laterDescriptorsBreakTiesAndTheRestIsStable() {
        let objects: [JSON] = [
            ["a": 1, "b": "x", "i": 0], ["a": 0, "b": "y", "i": 1], ["a": 1, "b": "y", "i": 2],
            ["a": 0, "b": "y", "i": 3], ["a": 1, "b": "x", "i": 4],
        ]
        let sorted = SortDescriptor.sorted(
            objects,
            by: [
                SortDescriptor(keyPath: JSONKeyPath("a"), ascending: false),
                SortDescriptor(keyPath: JSONKeyPath("b"), ascending: true),
            ])
        #expect(sorted.map { $0["i"] } == [0, 4, 2, 1, 3])
    }

    @Test func withoutDescriptorsTheOrderIsKept() {
        let objects: [JSON] = [3, 1, 2]
        #expect(SortDescriptor.sorted(objects, by: []) == objects)
    }

    /// The order sorted by prefixes (two words per key, whole keys on a tie) is the order the
    /// whole keys give, stably: values chosen to tie on prefixes and to sit at the edges.
    @Test(arguments: seeds(60)) func prefixesNeverContradictTheWholeKeys(seed: Int) {
        var random = Generator(seed: seed)
        let long = "abcdefghijklmnopqrstuvwxyz"
        func value() -> JSON? {
            switch random.next(12) {
            case 0: return nil
            case 1: return .null
            case 2: return JSON(random.chance(50))
            case 3: return JSON([Int.min, Int.max, Int.max - 1, 1 << 53, (1 << 53) + 1, -1, 0, 7][random.next(8)])
            case 4: return JSON([-0.0, 0.0, 1.0, -1.5, 9_007_199_254_740_992.0, 1e300, -1e300, 7.0][random.next(8)])
            case 5: return JSON(random.next(10) - 5)
            case 6: return JSON(String(long.prefix(random.next(27))))
            case 7: return JSON(String(long.prefix(14 + random.next(4))) + ["", "\u{0}", "\u{1}", "é", "z"][random.next(5)])
            case 8: return JSON(["", "a", "a\u{0}", "ab", "b", "日本"][random.next(6)])
            case 9: return [JSON(random.next(3)), JSON(String(long.prefix(random.next(20))))]
            case 10: return ["k": JSON(random.next(3)), "long": JSON(long)]
            default: return JSON(Double(random.next(7)) - 3)
            }
        }
        let width = 1 + random.next(2)
        let descriptors = (0..<width).map { SortDescriptor(keyPath: JSONKeyPath("k\($0)"), ascending: random.chance(50)) }
        let objects: [JSON] = (0..<200).map { _ in
            JSON.object((0..<width).compactMap { position in value().map { ("k\(position)", $0) } })
        }
        var keys = SortKeys(descriptors)
        for object in objects { keys.append(object) }
        let reference = Array(0..<objects.count).sorted { left, right in
            let result = keys.compare(left, with: keys, right)
            return result != 0 ? result < 0 : left < right
        }
        #expect(keys.sortedOrder() == reference, "seed \(seed)")
    }
}
