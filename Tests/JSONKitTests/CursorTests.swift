import Testing
@testable import JSONKit

/// A cursor reads a value where it lies; everything it answers must be what the values
/// made by `value(at:)`, subscripts and `arrayValue` answer, on trees and packed values.
@Suite struct CursorTests {
    static let document = #"{"items":[{"id":1,"name":{"first":"Ada"},"tags":["a",null]},"x",3.5,null,[1,[2]]],"":{"e":true},"n":null}"#

    private func bothRepresentations() throws -> [JSON] {
        let tree = try JSON.parse(Self.document)
        return [tree, tree.packed()]
    }

    @Test func cursorsAnswerAsTheValuesTheyReach() throws {
        for root in try bothRepresentations() {
            let cursor = root.cursor
            #expect(cursor.kind == .object && cursor.isObject && !cursor.isNull && cursor.value == root)
            for path in ["items", "items.0.name.first", "items.0.tags.1", "items.4.1.0", "", ".e", "n", "items.9", "missing", "items.1.x"] {
                let keyPath = JSONKeyPath(path)
                #expect(cursor.at(keyPath)?.value == root.value(at: keyPath), "\(path)")
                #expect(cursor.at(keyPath)?.kind == root.value(at: keyPath)?.kind, "\(path)")
            }
            for name in ["items", "", "n", "missing"] {
                #expect(cursor.member(name)?.value == root[name], "\(name)")
            }
            #expect(cursor.at(JSONKeyPath("items.1"))?.member("x") == nil, "a string has no members")
            #expect(cursor.at(JSONKeyPath("items.0.name.first"))?.stringValue == "Ada")
            var seen: [JSON] = []
            var indices: [Int] = []
            cursor.member("items")!.forEachElement { index, element in
                indices.append(index)
                seen.append(element.value)
            }
            #expect(seen == root["items"]!.arrayValue! && indices == [0, 1, 2, 3, 4])
            var none = 0
            cursor.member("n")!.forEachElement { _, _ in none += 1 }
            cursor.forEachElement { _, _ in none += 1 }
            #expect(none == 0, "only arrays have elements")
            var scalar: JSON.Scalar?
            cursor.at(JSONKeyPath("items.2"))!.withScalar { scalar = $0 }
            if case .real(let value) = scalar {
                #expect(value == 3.5)
            } else {
                Issue.record("expected a real, got \(String(describing: scalar))")
            }
        }
    }

    @Test func aCursorKeepsWhatItPointsIntoAlive() throws {
        var cursor: JSON.Cursor?
        do {
            let tree = try JSON.parse(#"{"a":{"b":["kept"]}}"#)
            cursor = tree.cursor.at(JSONKeyPath("a.b.0"))
        }
        #expect(cursor?.stringValue == "kept")
        #expect(cursor?.value == JSON("kept"))
    }

    @Test func packingFromACursorPacksWhatIsThere() throws {
        for root in try bothRepresentations() {
            root.cursor.member("items")!.forEachElement { _, element in
                let packed = element.packed()
                #expect(packed.isPacked && packed == element.value && packed.encoded() == element.value.encoded())
            }
        }
    }

    @Test func theWriterWritesWhatAnObjectOfTheSameMembersHolds() throws {
        var writer = PackedObjectWriter()
        for root in try bothRepresentations() {
            let cursor = root.cursor
            // Twice with one writer: what the first object appended must not leak into the next.
            for _ in 0..<2 {
                let first = cursor.at(JSONKeyPath("items.0"))!, name = cursor.at(JSONKeyPath("items.0.name.first"))!
                writer.append("whole", first)
                writer.append("name", name)
                writer.append("made", JSON.array([1, "two"]))
                writer.append("", cursor.member("")!)
                writer.append("é", JSON(-0.0))
                let written = writer.finish()
                let expected = JSON.object(
                    [(String, JSON)]([
                        ("whole", first.value), ("name", name.value), ("made", JSON.array([1, "two"])), ("", root[""]!), ("é", JSON(-0.0)),
                    ]))
                #expect(written.isPacked)
                #expect(written.encoded() == expected.encoded() && written == expected && written.hashValue == expected.hashValue)
            }
        }
        #expect(writer.finish().encoded() == Array("{}".utf8))
    }

    /// A mapping reads and writes by names worked out once, through cursors that take no
    /// reference: what it reads and writes must be what strings and cursors give.
    @Test func namesWorkedOutOnceReadAndWriteAsStringsDo() throws {
        // Longer than the shared key table takes: held inline in packed objects.
        let long = String(repeating: "k", count: 70)
        let document = try JSON.parse(#"{"\#(long)":{"é":[1,2]},"id":7,"":"empty"}"#)
        var writer = PackedObjectWriter()
        for root in [document, document.packed()] {
            let cursor = root.cursor
            for name in [long, "é", "id", "", "missing"] {
                #expect(cursor.member(JSON.MemberName(name))?.value == root[name], "\(name)")
                #expect(withExtendedLifetime(cursor) { cursor.borrowed.member(JSON.MemberName(name))?.value } == root[name], "\(name)")
            }
            #expect(cursor.member(JSON.MemberName(long))?.member(JSON.MemberName("é"))?.value == JSON.array([1, 2]))
            // "é" precomposed and decomposed: one String, two member names, as in objects.
            #expect(JSON.MemberName("\u{E9}") != JSON.MemberName("e\u{301}") && JSON.MemberName(long) == JSON.MemberName(long))
            #expect(cursor.member(JSON.MemberName("e\u{301}")) == nil)
            withExtendedLifetime(cursor) {
                let borrowed = cursor.borrowed
                writer.append(JSON.MemberName("id"), borrowed: borrowed.member(JSON.MemberName("id"))!)
                writer.append(JSON.MemberName(long), borrowed: borrowed.member(JSON.MemberName(long))!)
                writer.append(JSON.MemberName("made"), JSON("value"))
                writer.append(JSON.MemberName(""), borrowed: borrowed.member(JSON.MemberName(""))!)
                let written = writer.finish()
                let expected = JSON.object([("id", JSON(7)), (long, root[long]!), ("made", JSON("value")), ("", JSON("empty"))])
                #expect(written.isPacked && written.encoded() == expected.encoded() && written == expected)
                #expect(written[long]?["é"] == JSON.array([1, 2]) && written.objectKeys == ["id", long, "made", ""])
            }
        }
    }
}
