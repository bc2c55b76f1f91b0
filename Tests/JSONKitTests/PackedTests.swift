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
        // Dotted names: one leads to a nested value ("a.b" walks a, then b), one to nothing.
        #"{"a.b":"the member itself","a":{"b":"nested"},"x.y":0,"list":[{"0":"zero"}]}"#,
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
                // A member name is a one-step path, except "" (the value itself) and a name
                // with a dot (a longer path): those must lead where they lead in the tree.
                let path = JSONKeyPath(key)
                if key.isEmpty {
                    #expect(packed.value(at: path) == packed)
                } else if key.contains(".") {
                    #expect(packed.value(at: path) == tree.value(at: path), "path \(key)")
                } else {
                    #expect(packed.value(at: path) == treeValue, "path \(key)")
                }
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
        #expect(packed.value(at: JSONKeyPath("a.b.1.c"))?.stringValue == "found")
        #expect(packed.value(at: JSONKeyPath("a.b.0"))?.integerValue == 10)
        #expect(packed.value(at: JSONKeyPath("a.b.2")) == nil)
        #expect(packed.value(at: JSONKeyPath("a.x")) == nil)
        #expect(packed.value(at: JSONKeyPath("")) == packed)
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

    /// Any member order gives the same hash, whichever representation, small objects and
    /// large; a key that begins another, and strings whose bytes could run into the next
    /// value, still hash apart.
    @Test(arguments: [3, 16, 17, 40])
    func hashIgnoresMemberOrder(count: Int) throws {
        let members = (0..<count).map { #""k\#($0 * 7 % count)":"v\#($0)""# }
        let forward = try JSON.parse("{" + members.joined(separator: ",") + "}")
        let backward = try JSON.parse("{" + members.reversed().joined(separator: ",") + "}")
        #expect(forward == backward && forward.hashValue == backward.hashValue)
        #expect(forward.packed().hashValue == backward.hashValue && backward.packed().hashValue == forward.hashValue)
        let changed = try JSON.parse("{" + (members.dropLast() + [#""k0x":"v""#]).joined(separator: ",") + "}")
        #expect(changed.hashValue != forward.hashValue)
        #expect(try JSON.parse(#"{"a":"b","ab":""}"#).hashValue != JSON.parse(#"{"a":"","ab":"b"}"#).hashValue)
        #expect(try JSON.parse(#"["ab","c"]"#).hashValue != JSON.parse(#"["a","bc"]"#).hashValue)
    }

    @Test func packedValuesBuildNewValues() throws {
        let row = try JSON.parse(#"{"id":3,"name":"x"}"#).packed()
        let wrapped = JSON.object(["row": row, "rows": .array([row, row])])
        #expect(
            wrapped.text() == #"{"row": {"id": 3, "name": "x"}, "rows": [{"id": 3, "name": "x"}, {"id": 3, "name": "x"}]}"#
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

    /// `packed()` of a member of a packed value copies it out: keeping it does not keep the
    /// rest of the buffer (a member of a packed request's params, kept as a row).
    @Test func aSlicePackedOnItsOwnOwnsItsBytes() throws {
        func buffer(_ value: JSON) -> ObjectIdentifier? { value.packedLocation.map { ObjectIdentifier($0.buffer) } }
        for sample in Self.samples {
            let whole = try JSON.parse(sample).packed()
            #expect(buffer(whole.packed()) == buffer(whole), "a packed value of its own is itself")
            var children: [JSON] = whole.arrayValue ?? []
            children += whole.objectKeys.compactMap { whole[$0] }
            for child in children {
                let own = child.packed()
                #expect(own == child && own.text() == child.text() && own.kind == child.kind)
                #expect(own.packedLocation?.offset == 0 && buffer(own) != buffer(whole))
                #expect(buffer(own.cursor.packed()) == buffer(own))
                #expect(buffer(child.cursor.packed()) != buffer(whole))
            }
        }
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

    /// Values from a small domain, so that equal ones (also with members in another order,
    /// `0.0` against `-0.0`, `1` against `1.0`) come up often.
    private func smallValue(depth: Int, using generator: inout SystemRandomNumberGenerator) -> JSON {
        switch Int.random(in: depth > 2 ? 0..<5 : 0..<7, using: &generator) {
        case 0: return [JSON.null, .true, .false].randomElement(using: &generator)!
        case 1: return JSON(Int.random(in: 0...1, using: &generator))
        case 2: return JSON([0.0, -0.0, 1.0].randomElement(using: &generator)!)
        case 3, 4: return JSON(["", "a", "ab", "é"].randomElement(using: &generator)!)
        case 5: return .array((0..<Int.random(in: 0..<3, using: &generator)).map { _ in smallValue(depth: depth + 1, using: &generator) })
        default:
            let keys = ["a", "b", "c"].shuffled(using: &generator).prefix(Int.random(in: 0...3, using: &generator))
            return .object(keys.map { ($0, smallValue(depth: depth + 1, using: &generator)) })
        }
    }

    @Test func packedEqualityAnswersAsJanssonDoes() {
        var generator = SystemRandomNumberGenerator()
        let trees = (0..<150).map { _ in smallValue(depth: 0, using: &generator) }
        let packed = trees.map { $0.packed() }
        var equalPairs = 0
        for left in trees.indices {
            for right in trees.indices {
                let expected = trees[left].withTree { l in trees[right].withTree { r in JSON.janssonEqual(l, r) } }
                #expect((trees[left] == trees[right]) == expected, "trees: \(trees[left]) against \(trees[right])")
                if expected, left != right { equalPairs += 1 }
                #expect((packed[left] == packed[right]) == expected, "\(trees[left]) against \(trees[right])")
            }
        }
        #expect(equalPairs > 0, "the domain is small enough for distinct values to be equal")
    }

    @Test func anArrayOfPackedValuesIsPackedByCopyingAndEncodesAsATree() throws {
        let rows = try (0..<5).map { try JSON.parse(#"{"id":\#($0),"t":"row \#($0)","x":[1.5,{"y":null}]}"#).packed() }
        let slices = rows.map { $0["x"]! }
        for elements in [rows, slices, rows + slices] {
            let packedArray = JSON.array(elements)
            let treeArray = JSON.array(elements.map { try! JSON.parse($0.encoded()) })
            #expect(packedArray.isPacked && !treeArray.isPacked)
            #expect(packedArray.encoded() == treeArray.encoded())
            #expect(packedArray == treeArray && packedArray.hashValue == treeArray.hashValue)
            #expect(packedArray.arrayValue == elements)
        }
        #expect(!JSON.array([JSON(1), rows[0]]).isPacked)
        #expect(JSON.array([JSON]()).encoded() == Array("[]".utf8))
    }

    @Test func aPackedObjectIsWrittenStraightFromTreesAndPackedValues() throws {
        let tree = try JSON.parse(#"{"a":[1,{"b":"c"}],"n":null,"r":2.5}"#)
        let packedRow = try JSON.parse(#"{"x":{"y":[true,false]}}"#).packed()
        let members: [(String, JSON)] = [
            ("tree", tree), ("slice", packedRow["x"]!), ("", JSON("empty key")), ("int", JSON(-7)), ("é", tree["a"]!),
        ]
        let packed = JSON.packedObject(members), built = JSON.object(members)
        #expect(packed.isPacked && !built.isPacked)
        #expect(packed.encoded() == built.encoded() && packed == built && packed.hashValue == built.hashValue)
        #expect(packed["slice"]?["y"]?[1] == .false && packed["tree"]?["a"]?[1]?["b"]?.stringValue == "c")
        let repeated = JSON.packedObject([("k", JSON(1)), ("k", JSON(2))])
        #expect(repeated == JSON.object([("k", JSON(1)), ("k", JSON(2))]) && repeated["k"] == JSON(2) && repeated.count == 1)
        #expect(JSON.packedObject([]).encoded() == Array("{}".utf8))
    }

    private func randomValue(depth: Int, using generator: inout SystemRandomNumberGenerator) -> JSON {
        switch Int.random(in: depth > 3 ? 0..<6 : 0..<8, using: &generator) {
        case 0: return .null
        case 1: return JSON(Bool.random(using: &generator))
        case 2: return JSON(Int.random(in: Int.min...Int.max, using: &generator) >> Int.random(in: 0..<64, using: &generator))
        case 3: return JSON(Double.random(in: -1e9...1e9, using: &generator))
        case 4, 5:
            return JSON(String((0..<Int.random(in: 0..<12, using: &generator)).map { _ in "aé🙂\u{0}z".randomElement(using: &generator)! }))
        case 6: return .array((0..<Int.random(in: 0..<5, using: &generator)).map { _ in randomValue(depth: depth + 1, using: &generator) })
        default:
            return .object(
                (0..<Int.random(in: 0..<5, using: &generator)).map { index in
                    ("k\(index)\(Int.random(in: 0..<3, using: &generator))", randomValue(depth: depth + 1, using: &generator))
                })
        }
    }
}
