import JSONKit
import Testing

@Suite struct JSONTests {
    /// A tuple as a tree of its two or three integers.
    static func tree(_ tuple: (Int, Int, Int?)) -> JSON {
        var elements = [JSON(tuple.0), JSON(tuple.1)]
        if let third = tuple.2 { elements.append(JSON(third)) }
        return .array(elements)
    }

    @Test func integerTuplesAreTheArraysOfTwoOrThreeIntegers() {
        let tuples: [(Int, Int, Int?)] = [(0, 0, nil), (3, -7, 2), (Int.max, Int.min, nil), (1, 2, Int.min)]
        let expected = JSON.array(tuples.map(Self.tree))
        #expect(JSON.integerTuples(tuples) == expected)
        #expect(
            JSON.integerTuples(tuples).text()
                == "[[0,0],[3,-7,2],[9223372036854775807,-9223372036854775808],[1,2,-9223372036854775808]]")
        #expect(JSON.integerTuples([]).text() == "[]")
        // Packed: the same bytes as the tree packed, across varint lengths and a payload
        // longer than one varint byte.
        let sizes = [63, -64, 64, -65, 127, 128, 1 << 40]
        let many: [(Int, Int, Int?)] = (0..<300).map { index in (index * 1000 - 64, sizes[index % 7], index % 3 == 0 ? nil : index) }
        let made = JSON.integerTuples(many)
        let tree = JSON.array(many.map(Self.tree))
        #expect(made.isPacked && made == tree && made.hashValue == tree.hashValue && made.encoded() == tree.encoded())
        #expect(made == tree.packed() && made[299]?[1] == JSON(many[299].1) && made[299]?[2] == JSON(299))
    }

    @Test func roundTripsKeepingMemberOrder() throws {
        let text = #"{"z":1,"a":[true,false,null],"m":{"s":"x","r":1.5}}"#
        #expect(try JSON.parse(text).text() == text)
    }

    @Test func parseErrorsCarryLineColumnAndPosition() {
        do {
            _ = try JSON.parse("{\n  \"a\": 1,\n  b: 2\n}")
            Issue.record("expected a parse error")
        } catch {
            #expect(error.line == 3)
            #expect(error.column == 3)
            #expect(error.position == 15)
            #expect(!error.message.isEmpty)
        }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JSONParseError.self) { try JSON.parse([0x22, 0xC3, 0x28, 0x22]) }
    }

    @Test func parsesAnyTopLevelValue() throws {
        #expect(try JSON.parse("42").integerValue == 42)
        #expect(try JSON.parse("\"s\"").stringValue == "s")
        #expect(try JSON.parse("null").isNull)
    }

    @Test func stringsKeepUnicodeAndEmbeddedNUL() throws {
        let value = JSON("a\u{0}b ✓ é")
        #expect(value.stringValue == "a\u{0}b ✓ é")
        #expect(try JSON.parse(value.encoded()).stringValue == "a\u{0}b ✓ é")
        #expect(JSON("").stringValue == "")
    }

    @Test func aBorrowedChildOutlivesItsParent() throws {
        var child: JSON?
        do {
            let parent = try JSON.parse(#"{"list":[{"name":"kept"}]}"#)
            child = parent["list"]?[0]
        }
        #expect(child?["name"]?.stringValue == "kept")
    }

    @Test func equalityIgnoresMemberOrderAndHashesAgree() throws {
        let a = try JSON.parse(#"{"a":1,"b":{"c":[1,2],"d":"x"}}"#)
        let b = try JSON.parse(#"{"b":{"d":"x","c":[1,2]},"a":1}"#)
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(try JSON.parse("[1,2]") != JSON.parse("[2,1]"))
        #expect(JSON(1) != JSON(1.0), "jansson keeps integers and reals apart")
    }

    @Test func settingLeavesTheOriginalUnchanged() {
        let original: JSON = ["a": 1, "b": 2]
        let changed = original.setting("b", to: 3).setting("c", to: "new")
        #expect(original.text() == #"{"a":1,"b":2}"#)
        #expect(changed.text() == #"{"a":1,"b":3,"c":"new"}"#)
        #expect(changed.removing("a").text() == #"{"b":3,"c":"new"}"#)
    }

    @Test func keyPathsWalkObjectsAndArrays() throws {
        let value = try JSON.parse(#"{"author":{"name":"Ada","tags":["x","y"]},"a.b":1}"#)
        #expect(value.value(at: JSONKeyPath("author.name"))?.stringValue == "Ada")
        #expect(value.value(at: JSONKeyPath("author.tags.1"))?.stringValue == "y")
        #expect(value.value(at: JSONKeyPath("author.missing")) == nil)
        #expect(value.value(at: JSONKeyPath("author.name.deeper")) == nil)
        #expect(value.value(at: JSONKeyPath("")) == value)
    }

    @Test func containersAndScalars() {
        let value: JSON = ["list": [1, 2.5, "three", true, nil], "empty": [:]]
        #expect(value.count == 2)
        #expect(value["list"]?.arrayValue?.map(\.kind) == [.integer, .real, .string, .boolean, .null])
        #expect(value["list"]?[1]?.doubleValue == 2.5)
        #expect(value["list"]?[0]?.doubleValue == 1)
        #expect(value["list"]?[1]?.integerValue == nil)
        #expect(value["list"]?[9] == nil)
        #expect(value["empty"]?.objectMembers?.isEmpty == true)
        #expect(value.objectKeys == ["list", "empty"])
        #expect(JSON(Double.nan).isNull, "JSON has no NaN")
    }

    @Test func prettyAndSortedFormats() {
        let value: JSON = ["b": 1, "a": [2]]
        #expect(value.text(format: .sortedKeys) == #"{"a":[2],"b":1}"#)
        #expect(value.text(format: .pretty).contains("\n  \"b\": 1"))
    }

    @Test func realsRoundTripExactly() throws {
        for number in [0.1, 1e-300, 123456.789, -2.5e17] {
            #expect(try JSON.parse(JSON(number).encoded()).doubleValue == number)
        }
    }
}

@Suite struct JSONKeysWithNULTests {
    @Test func removingAKeyWithANULByteRemovesThatKeyOnly() throws {
        let object = JSON.object([("a\u{0}b", 1), ("a", 2)])
        let removed = object.removing("a\u{0}b")
        #expect(removed.objectKeys == ["a"], "the key is not cut at its NUL byte")
        #expect(object.objectKeys.count == 2, "the original is unchanged")
    }
}
