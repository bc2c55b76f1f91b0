@testable import JSONKit
import Testing

/// A large packed value is encoded in pieces and joined (JSON+PiecewiseEncoding.swift): the
/// bytes must be jansson's for the whole value, wherever the pieces are cut.
@Suite struct PiecewiseEncodingTests {
    @Test func piecesJoinToWhatJanssonWritesForTheWhole() {
        var generator = SystemRandomNumberGenerator()
        var split = 0
        for round in 0..<400 {
            let tree = randomValue(depth: 0, using: &generator)
            let whole = tree.encoded()
            let packed = tree.packed()
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

    @Test func aChangeSetOfManyRunsIsEncodedInPiecesAsWhole() throws {
        // The shape of a filter's first change set over a million rows: runs of eleven rows.
        let runs = (0..<90_000).map { (0, $0 * 12 + 1, 11 as Int?) }
        let changes = JSON.packedObject([
            ("deletedSections", []), ("deleted", .integerTuples(runs)), ("inserted", .integerTuples([])),
            ("moved", .pairObjects(.init("from"), .init("to"), [(0, 5, 0, 1)])),
        ])
        #expect(changes.isEncodedInPieces)
        let viaTree = try JSON.parse(changes.encoded())
        #expect(!viaTree.isPacked)
        // withEncoded takes the pieces for the packed value, jansson's one dump for the tree.
        #expect(changes.encoded() == viaTree.encoded())
        #expect(changes.encoded().count > JSON.piecewiseEncodingThreshold)
        #expect(changes.encoded(format: .sortedKeys) == viaTree.encoded(format: .sortedKeys))
        let small = JSON.packedObject([("deleted", .integerTuples(Array(runs.prefix(10))))])
        #expect(!small.isEncodedInPieces && !viaTree.isEncodedInPieces)
    }

    /// Values of every kind, with keys and strings that need escapes, and arrays long enough
    /// to be cut in runs of elements.
    private func randomValue(depth: Int, using generator: inout SystemRandomNumberGenerator) -> JSON {
        func text(_ generator: inout SystemRandomNumberGenerator) -> String {
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
                (0..<Int.random(in: 0..<5, using: &generator)).map { index in
                    ("\(index)\(text(&generator))", randomValue(depth: depth + 1, using: &generator))
                })
        }
    }
}
