@testable import JSONKit
import Testing

/// A large packed value is encoded in pieces and joined (JSON+PiecewiseEncoding.swift): the
/// bytes must be jansson's for the whole value, wherever the pieces are cut.
@Suite struct PiecewiseEncodingTests {
    /// A fixed set of keys (the process's shared key table is not filled with random ones):
    /// escapes, the empty key, and one too long to be shared (written inline).
    static let keys = ["id", "", "a\"b", "\\", "é/\u{0}", "🙂", "tab\tkey", String(repeating: "k", count: 70)]

    @Test func piecesJoinToWhatJanssonWritesForTheWhole() {
        var generator = SplitMix(seed: 0x5eed_30)
        var split = 0
        for round in 0..<400 {
            let tree = Self.randomValue(depth: 0, using: &generator)
            let whole = tree.encoded()
            let packed = tree.packed()
            // One piece, the value whole: jansson's own dump of the packed value's tree.
            #expect(packed.piecewiseEncoded(pieceBytes: .max) == whole)
            // Pieces from one byte (every container split down to its scalars) to larger than the value.
            for pieceBytes in [1, 2, 5, 17, 64, 1 << 20] {
                let pieces = packed.piecewiseEncoded(pieceBytes: pieceBytes)
                #expect(pieces == whole, "round \(round), pieces of \(pieceBytes): \(String(decoding: whole, as: UTF8.self))")
                if pieces != whole { return }
            }
            if (packed.packedSize ?? 0) > 17 { split += 1 }
        }
        #expect(split > 200, "most values are cut in several pieces: \(split)")
        #expect(JSON(3).piecewiseEncoded() == nil, "a tree is encoded whole")
    }

    @Test func aChangeSetOfManyRunsIsEncodedInPiecesAsWhole() {
        // The shape of a filter's first change set over a million rows: runs of eleven rows.
        let runs = (0..<90_000).map { (0, $0 * 12 + 1, 11 as Int?) }
        let changes = JSON.packedObject([
            ("deletedSections", []), ("deleted", .integerTuples(runs)), ("inserted", .integerTuples([])),
            ("moved", .pairObjects(.init("from"), .init("to"), [(0, 5, 0, 1)])),
        ])
        #expect(changes.isEncodedInPieces)
        // Written out here, independently of jansson and of the pieces.
        let expected =
            #"{"deletedSections":[],"deleted":["# + runs.map { "[0,\($0.1),11]" }.joined(separator: ",")
            + #"],"inserted":[],"moved":[{"from":[0,5],"to":[0,1]}]}"#
        #expect(changes.encoded() == Array(expected.utf8))
        #expect(changes.encoded().count > JSON.piecewiseEncodingThreshold)
        let small = JSON.packedObject([("deleted", .integerTuples(Array(runs.prefix(10))))])
        #expect(!small.isEncodedInPieces)
    }

    @Test func anObjectOfManyMembersIsEncodedInRunsOfMembers() {
        // Keys longer than the shared table takes (written inline): 30,000 of them would fill it.
        let long = String(repeating: "m", count: 64)
        let members = (0..<30_000).map { ("\(long) \($0) \"quoted\"", JSON($0)) }
        let object = JSON.packedObject(members)
        #expect(object.isEncodedInPieces)
        let expected = "{" + (0..<30_000).map { #""\#(long) \#($0) \"quoted\"":\#($0)"# }.joined(separator: ",") + "}"
        #expect(object.encoded() == Array(expected.utf8))
    }

    /// Values of every kind, with keys and strings that need escapes, and containers long
    /// enough to be cut in runs of elements or members.
    static func randomValue(depth: Int, using generator: inout SplitMix) -> JSON {
        func text(_ generator: inout SplitMix) -> String {
            String((0..<Int.random(in: 0..<6, using: &generator)).map { _ in "aé🙂\u{0}\"\\/\n\u{1F}z".randomElement(using: &generator)! })
        }
        // A container at the top, scalars and containers below it.
        switch Int.random(in: depth == 0 ? 6..<9 : depth > 3 ? 0..<6 : 0..<9, using: &generator) {
        case 0: return .null
        case 1: return JSON(Bool.random(using: &generator))
        case 2: return JSON(Int.random(in: Int.min...Int.max, using: &generator) >> Int.random(in: 0..<64, using: &generator))
        case 3: return JSON(Double.random(in: -1e9...1e9, using: &generator))
        case 4, 5: return JSON(text(&generator))
        case 6, 7:
            return .array((0..<Int.random(in: 0..<12, using: &generator)).map { _ in randomValue(depth: depth + 1, using: &generator) })
        default:
            return .object(
                keys.shuffled(using: &generator).prefix(Int.random(in: 0...keys.count, using: &generator)).map {
                    ($0, randomValue(depth: depth + 1, using: &generator))
                })
        }
    }
}
