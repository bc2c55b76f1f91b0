import Testing
@testable import JSONKit

/// A packed value must answer every question exactly as the tree it was packed from.
@Suite struct PackedTests {
    static let samples: [String] = [
        #"{"id":1,"title":"Item 1","group":"g7","score":12.5}"#,
        #"{"":"empty key","nested":{"a":[1,2,{"b":null}],"c":{}},"list":[],"t":true,"f":false}"#,
        #"[1,-1,0,9223372036854775807,-9223372036854775808,1.5e300,-0.0,"x\u0000y","é🙂"]"#,
        #""just a string""#, "42", "-7.25", "true", "null", "[]", "{}",
        #"{"deep":{"deeper":{"deepest":[[[["bottom"]]]]}}}"#,
    ]

    @Test(arguments: samples)
    func packedAnswersAsItsTree(text: String) throws {
        let tree = try JSON.parse(text)
        let packed = tree.packed()
        #expect(packed.isPacked && !tree.isPacked)
        #expect(packed.encoded() == tree.encoded())
        #expect(packed == tree && tree == packed)
        #expect(packed.hashValue == tree.hashValue)
        expectSameAnswers(packed, tree)
    }

    private func expectSameAnswers(_ packed: JSON, _ tree: JSON) {
        #expect(packed.kind == tree.kind)
        #expect(packed.count == tree.count)
        #expect(packed.stringValue == tree.stringValue)
        #expect(packed.integerValue == tree.integerValue)
        #expect(packed.doubleValue?.bitPattern == tree.doubleValue?.bitPattern)
        #expect(packed.boolValue == tree.boolValue)
        #expect(packed.isNull == tree.isNull)
        if let members = tree.objectMembers {
            let packedMembers = packed.objectMembers ?? []
            #expect(packedMembers.map(\.key) == members.map(\.key))
            for ((_, packedValue), (key, treeValue)) in zip(packedMembers, members) {
                #expect(packed[key] == treeValue)
                #expect(packed.value(at: KeyPath(key)) == treeValue || key.contains(".") || key.isEmpty)  // "" is the value itself
                expectSameAnswers(packedValue, treeValue)
            }
            #expect(packed["no such key"] == nil)
        }
        if let elements = tree.arrayValue {
            let packedElements = packed.arrayValue ?? []
            #expect(packedElements.count == elements.count)
            for (index, (packedValue, treeValue)) in zip(packedElements, elements).enumerated() {
                #expect(packed[index] == treeValue)
                expectSameAnswers(packedValue, treeValue)
            }
            #expect(packed[elements.count] == nil && packed[-1] == nil)
        }
    }

    @Test func keyPathsWalkPackedObjectsAndArrays() throws {
        let packed = try JSON.parse(#"{"a":{"b":[10,{"c":"found"}]}}"#).packed()
        #expect(packed.value(at: KeyPath("a.b.1.c"))?.stringValue == "found")
        #expect(packed.value(at: KeyPath("a.b.0"))?.integerValue == 10)
        #expect(packed.value(at: KeyPath("a.b.2")) == nil)
        #expect(packed.value(at: KeyPath("a.x")) == nil)
        #expect(packed.value(at: KeyPath("")) == packed)
    }

    @Test func equalityIgnoresMemberOrderAcrossRepresentations() throws {
        let one = try JSON.parse(#"{"a":1,"b":[true,{"x":0.0}]}"#).packed()
        let other = try JSON.parse(#"{"b":[true,{"x":-0.0}],"a":1}"#).packed()
        #expect(one == other)
        let reordered = try JSON.parse(#"{"b":[true,{"x":0.0}],"a":1}"#)
        #expect(one == reordered && one.hashValue == reordered.hashValue)
        #expect(one != (try JSON.parse(#"{"a":2,"b":[true,{"x":0.0}]}"#)).packed())
        #expect(try JSON.parse("1").packed() != JSON.parse("1.0").packed())
        for (a, b) in [("\"a\"", "\"b\""), ("1", "2"), ("true", "false"), ("null", "0"), ("[1]", "[2]"), ("2.5", "2.25")] {
            #expect(try JSON.parse(a).packed() != JSON.parse(b).packed(), "\(a) against \(b)")
        }
    }

    @Test func packedValuesBuildNewValues() throws {
        let row = try JSON.parse(#"{"id":3,"name":"x"}"#).packed()
        let wrapped = JSON.object(["row": row, "rows": .array([row, row])])
        #expect(wrapped.text() == #"{"row": {"id": 3, "name": "x"}, "rows": [{"id": 3, "name": "x"}, {"id": 3, "name": "x"}]}"#
            || wrapped.text() == #"{"row":{"id":3,"name":"x"},"rows":[{"id":3,"name":"x"},{"id":3,"name":"x"}]}"#)
        let renamed = row.setting("name", to: "y")
        #expect(renamed["name"]?.stringValue == "y" && row["name"]?.stringValue == "x")
        #expect(row.removing("id").objectKeys == ["name"])
        #expect(row.packed().isPacked && row["id"]!.packed() == JSON(3))
    }

    @Test func aSliceOutlivesItsRow() throws {
        var row: JSON? = try JSON.parse(#"{"author":{"name":"Ada"}}"#).packed()
        let author = row!["author"]!
        row = nil
        #expect(author["name"]?.stringValue == "Ada")
        #expect(author.text() == #"{"name":"Ada"}"#)
    }

    @Test func randomValuesRoundTrip() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let tree = randomValue(depth: 0, using: &generator)
            let packed = tree.packed()
            #expect(packed.encoded() == tree.encoded())
            #expect(packed == tree && packed.hashValue == tree.hashValue)
        }
    }

    private func randomValue(depth: Int, using generator: inout SystemRandomNumberGenerator) -> JSON {
        switch Int.random(in: depth > 3 ? 0..<6 : 0..<8, using: &generator) {
        case 0: return .null
        case 1: return JSON(Bool.random(using: &generator))
        case 2: return JSON(Int.random(in: Int.min...Int.max, using: &generator) >> Int.random(in: 0..<64, using: &generator))
        case 3: return JSON(Double.random(in: -1e9...1e9, using: &generator))
        case 4, 5: return JSON(String((0..<Int.random(in: 0..<12, using: &generator)).map { _ in "aé🙂\u{0}z".randomElement(using: &generator)! }))
        case 6: return .array((0..<Int.random(in: 0..<5, using: &generator)).map { _ in randomValue(depth: depth + 1, using: &generator) })
        default:
            return .object((0..<Int.random(in: 0..<5, using: &generator)).map { index in
                ("k\(index)\(Int.random(in: 0..<3, using: &generator))", randomValue(depth: depth + 1, using: &generator))
            })
        }
    }
}
