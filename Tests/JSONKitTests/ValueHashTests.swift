import Testing
@testable import JSONKit

/// `valueHash` (what sources key rows by, and what `hash(into:)` gives a `Hasher`).
@Suite struct ValueHashTests {
    /// A scalar read in place hashes as the value made whole, tree or packed.
    @Test(arguments: [
        "null", "true", "false", "0", "-7", "9223372036854775807", "0.0", "-0.0", "2.5", #""""#, #""a\u0000b""#,
        #""a string longer than sixteen bytes, to cross a block""#,
    ])
    func aScalarInPlaceHashesAsTheValue(text: String) throws {
        let tree = try JSON.parse(text), packed = try JSON.parse("[\(text)]").packed()[0]!
        var inPlace: Int?? = nil
        JSON.object(["v": tree]).withScalar(at: JSONKeyPath("v")) { inPlace = $0.valueHash }
        #expect(inPlace == .some(tree.valueHash))
        #expect(packed.valueHash == tree.valueHash)
    }

    @Test func equalValuesHashAlikeAndOthersApart() throws {
        #expect(try JSON.parse("0.0").valueHash == JSON.parse("-0.0").valueHash)
        #expect(try JSON.parse("1").valueHash != JSON.parse("1.0").valueHash)
        #expect(try JSON.parse("[]").valueHash != JSON.parse("{}").valueHash)
        #expect(try JSON.parse("[[]]").valueHash != JSON.parse("[[],[]]").valueHash)
        #expect(try JSON.parse(#"["ab","c"]"#).valueHash != JSON.parse(#"["a","bc"]"#).valueHash)
        #expect(try JSON.parse(#"{"a":1,"b":2}"#).valueHash == JSON.parse(#"{"b":2,"a":1}"#).packed().valueHash)
        #expect(try JSON.parse(#"{"a":1,"b":2}"#).valueHash != JSON.parse(#"{"a":2,"b":1}"#).valueHash)
    }

    /// Tables index by the low bits (`hash & mask`): rows that differ in one field spread
    /// over them evenly, and no two of 100,000 share a 64-bit hash.
    @Test func rowsSpreadOverTheLowBits() throws {
        let count = 100_000, buckets = 1 << 12
        var seen = Set<Int>(), perBucket = [Int](repeating: 0, count: buckets)
        for id in 0..<count {
            let row = JSON.object(["id": JSON(id), "title": JSON("Item \(id)"), "score": JSON(Double(id % 100) / 4)]).packed()
            let hash = row.valueHash
            seen.insert(hash)
            perBucket[hash & (buckets - 1)] += 1
        }
        #expect(seen.count == count)
        // Chi-square against an even spread: about `buckets` for a random one (standard
        // deviation about 90); six deviations over fails.
        let expected = Double(count) / Double(buckets)
        let chiSquare = perBucket.reduce(0.0) { $0 + (Double($1) - expected) * (Double($1) - expected) / expected }
        #expect(chiSquare < Double(buckets) + 6 * (2 * Double(buckets)).squareRoot(), "chi-square \(chiSquare)")
    }
}
