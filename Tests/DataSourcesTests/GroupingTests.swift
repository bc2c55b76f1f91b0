@testable import DataSources
import JSONKit
import Testing

/// Grouping by bytes read in place against grouping by `JSON` equality, on the values that
/// equality treats specially, in packed rows and in trees.
@Suite struct GroupingTests {
    static let values: [JSON?] = [
        nil, .null, true, false, 0, 1, -1, 1.0, 0.0, -0.0, 2.5, JSON(Int.max), JSON(Int.min), "", "a", "a\u{0}", "\u{0}", "é", "1",
        [1], [1.0], ["k": 1, "j": 2], ["j": 2, "k": 1], [:], [],
    ]

    @Test(arguments: [false, true]) func groupsAsJSONEqualityDoes(packed: Bool) {
        var random = Generator(seed: packed ? 2 : 1)
        var numbering = GroupNumbering(keyPath: JSONKeyPath("g"))
        var reference: [JSON: Int] = [:]
        var referenceValues: [JSON] = []
        for _ in 0..<500 {
            let value = Self.values[random.next(Self.values.count)]
            let tree: JSON = value.map { JSON.object([("g", $0), ("other", 1)]) } ?? ["other": 1]
            let object = packed ? tree.packed() : tree
            let key = value ?? .null
            let expected: Int
            if let known = reference[key] {
                expected = known
            } else {
                expected = referenceValues.count
                reference[key] = expected
                referenceValues.append(key)
            }
            #expect(numbering.group(of: object) == expected, "\(String(describing: value))")
        }
        #expect(numbering.values == referenceValues)
    }

    /// Enough distinct values that the table grows several times.
    @Test func manyGroupsKeepTheirNumbers() {
        var random = Generator(seed: 9)
        var numbering = GroupNumbering(keyPath: JSONKeyPath("g"))
        var reference: [JSON: Int] = [:]
        for _ in 0..<5000 {
            let number = random.next(700)
            let value: JSON = random.chance(50) ? JSON(number) : JSON("v\(number)")
            let expected = reference[value] ?? reference.count
            reference[value] = expected
            #expect(numbering.group(of: JSON.object([("g", value)]).packed()) == expected)
        }
        #expect(numbering.values.count == reference.count)
    }

    @Test func scalarsReadInPlaceMatchTheirValues() {
        let object: JSON = ["s": "héllo\u{0}", "i": -7, "r": 2.5, "t": true, "n": .null, "a": [1, ["x": "y"]]]
        for row in [object, object.packed()] {
            row.withScalar(at: JSONKeyPath("s")) { scalar in
                guard case .string(let bytes) = scalar else {
                    Issue.record("not a string: \(scalar)")
                    return
                }
                #expect(Array(bytes) == Array("héllo\u{0}".utf8))
            }
            row.withScalar(at: JSONKeyPath("i")) {
                if case .integer(let value) = $0 { #expect(value == -7) } else { Issue.record("\($0)") }
            }
            row.withScalar(at: JSONKeyPath("r")) { if case .real(let value) = $0 { #expect(value == 2.5) } else { Issue.record("\($0)") } }
            row.withScalar(at: JSONKeyPath("t")) { if case .boolean(let value) = $0 { #expect(value) } else { Issue.record("\($0)") } }
            row.withScalar(at: JSONKeyPath("n")) { if case .null = $0 {} else { Issue.record("\($0)") } }
            row.withScalar(at: JSONKeyPath("a")) { if case .container = $0 {} else { Issue.record("\($0)") } }
            row.withScalar(at: JSONKeyPath("a.1.x")) {
                if case .string(let bytes) = $0 { #expect(Array(bytes) == [UInt8(ascii: "y")]) } else { Issue.record("\($0)") }
            }
            row.withScalar(at: JSONKeyPath("a.2")) { if case .missing = $0 {} else { Issue.record("\($0)") } }
            row.withScalar(at: JSONKeyPath("s.x")) { if case .missing = $0 {} else { Issue.record("\($0)") } }
        }
    }
}

/// Identities read in place (hashes and comparisons without making a value) against
/// `Identity.of`, whatever the representations of the two rows.
@Suite struct IdentityInPlaceTests {
    @Test func sameAndHashAgreeWithTheIdentityValues() {
        let identity = Identity(key: JSONKeyPath("id"))
        var rows: [JSON] = GroupingTests.values.map { value in
            value.map { JSON.object([("id", $0), ("v", 1)]) } ?? ["v": 1]
        }
        rows += [[Placeholder.key: "loading"], [Placeholder.key: "error", "id": 1], ["id": ["id": 1]], ["id": 1], 7, "text"]
        let both = rows + rows.map { $0.packed() }
        for left in both {
            for right in both {
                let expected = identity.of(left) == identity.of(right)
                #expect(identity.same(left, right) == expected, "\(left) vs \(right)")
                if expected { #expect(identity.hash(of: left) == identity.hash(of: right), "\(left) vs \(right)") }
            }
        }
    }
}
