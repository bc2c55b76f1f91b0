@testable import Daemon
import DataSources
import JSONKit
import WireSchema
import Testing

@Suite struct ObjectMappingTests {
    private func mapping(_ text: String) throws -> ObjectMapping { try MappingDecoding.mapping(JSON.parse(text), "mapping") }

    @Test func readsKeyPathsThenTheFieldsOwnNameAndDropsNulls() throws {
        let map = try mapping(
            #"{"id": {"type": "integer"}, "title": "name.full", "fallback": "missing.path", "gone": {}, "kept": {"default": 0}}"#)
        let object = try JSON.parse(#"{"id": 7, "name": {"full": "Ada"}, "fallback": "literal", "gone": null, "extra": true}"#)
        #expect(try map.map(object).get().text() == #"{"id":7,"title":"Ada","fallback":"literal","kept":0}"#)
    }

    @Test func nestedObjectsAndArraysAreMappedWithTheirOwnSpecs() throws {
        let map = try mapping(
            #"{"author": {"keyPath": "user", "mapping": {"login": {"type": "string"}}}, "tags": {"items": {"type": "string"}}, "people": {"items": {"mapping": {"n": "name"}}}}"#
        )
        let object = try JSON.parse(#"{"user": {"login": "ada", "id": 1}, "tags": ["a", null, "b"], "people": [{"name": "x", "age": 3}]}"#)
        #expect(try map.map(object).get().text() == #"{"author":{"login":"ada"},"tags":["a","b"],"people":[{"n":"x"}]}"#)
    }

    @Test func wrongTypesAreReportedWithThePath() throws {
        let map = try mapping(
            #"{"price": {"type": "number"}, "tags": {"items": {"type": "integer"}}, "when": {"type": "date"}, "home": {"type": "url"}}"#)
        #expect(map.map(try JSON.parse(#"{"price": "cheap"}"#)) == .failure(.init(field: "price", expected: "a number", got: "a string")))
        #expect(
            map.map(try JSON.parse(#"{"tags": [1, "two"]}"#)) == .failure(.init(field: "tags[1]", expected: "an integer", got: "a string")))
        #expect(
            map.map(try JSON.parse(#"{"when": "yesterday"}"#))
                == .failure(.init(field: "when", expected: "an ISO-8601 date string", got: "\"yesterday\"")))
        #expect(
            map.map(try JSON.parse(#"{"home": "example.com"}"#))
                == .failure(.init(field: "home", expected: "an absolute URL string", got: "\"example.com\"")))
        #expect(
            try map.map(JSON.parse(#"{"price": 2, "when": "2024-05-01T12:30:00.5+02:00", "home": "https://x.invalid/a"}"#)).get().count == 3
        )
    }

    @Test func nonObjectsPassThroughUnmapped() throws {
        let map = try mapping(#"{"a": {}}"#)
        #expect(try map.map(JSON(5)).get() == 5)
        #expect(try map.map(JSON.parse("[1]")).get() == [1])
    }

    @Test func integralRealsBecomeIntegers() throws {
        let map = try mapping(#"{"n": {"type": "integer"}}"#)
        #expect(try map.map(JSON.parse(#"{"n": 3.0}"#)).get()["n"]?.kind == .integer)
        #expect(throws: ObjectMapping.Issue.self) { try map.map(JSON.parse(#"{"n": 3.5}"#)).get() }
    }

    @Test(arguments: [
        (#"[]"#, "mapping"),
        (#"{"a": 3}"#, "mapping.a"),
        (#"{"a": {"type": "decimal"}}"#, "mapping.a.type"),
        (#"{"a": {"typo": "string"}}"#, "mapping.a.typo"),
        (#"{"a": {"type": "string", "mapping": {}}}"#, "mapping.a.mapping"),
        (#"{"a": {"items": {"type": "nope"}}}"#, "mapping.a.items.type"),
    ])
    func badConfigurationsNameTheField(text: String, field: String) {
        do {
            _ = try mapping(text)
            Issue.record("expected a configuration error for \(text)")
        } catch let error as FieldError {
            #expect(error.field == field)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test(arguments: [
        "2024-05-01", "2024-05-01T12:30Z", "2024-05-01T12:30:00Z", "2024-05-01T12:30:00.123456-07:00", "2024-05-01t00:00:00+0100",
    ])
    func validDates(_ text: String) { #expect(ISO8601Check.valid(text)) }

    @Test(arguments: ["2024-13-01", "2024-05-01T25:00:00Z", "May 1", "2024-05-01T12:30:00ZZ", "2024-05-01T12:30:00.+01:00", ""])
    func invalidDates(_ text: String) { #expect(!ISO8601Check.valid(text)) }

    @Test func placeholderOptions() throws {
        func options(_ value: JSON) -> PlaceholderStorageOptions? {
            try? RemoteConfigurationDecoding.placeholderOptions(value, "placeholderStorageOptions")
        }
        #expect(options(6) == .standard)
        #expect(options(["errors", "loading"]) == [.errors, .loading])
        #expect(options(1) == nil)
        #expect(options(["spinner"]) == nil)
        #expect(options(6.0) == nil, "an integer, not a real")
        #expect(Placeholder.kind(of: Placeholder.errorRow(["kind": "http"])) == .error)
        #expect(Placeholder.kind(of: ["id": 1]) == nil)
    }
}

/// Dates are checked through the mapping, the only public way in.
private enum ISO8601Check {
    static let map = try! MappingDecoding.mapping(["d": ["type": "date"]], "mapping")
    static func valid(_ text: String) -> Bool { (try? map.map(["d": JSON(text)]).get()) != nil }
}

/// The mapping reads objects in place, from a parsed page (trees) or from kept rows
/// (packed): both must give what the fields say, packed.
@Suite struct MappingInPlaceTests {
    private func mapping(_ text: String) throws -> ObjectMapping { try MappingDecoding.mapping(JSON.parse(text), "mapping") }

    @Test func treesAndPackedObjectsMapAlike() throws {
        let map = try mapping(
            #"{"id": {"type": "integer"}, "title": "name.full", "author": {"keyPath": "user", "mapping": {"login": {}}}, "tags": {"items": {"type": "integer"}}, "when": {"type": "date", "default": null}, "all": {"keyPath": "list"}}"#
        )
        let objects = [
            #"{"id": 7.0, "name": {"full": "Ada"}, "user": {"login": "ada", "id": 1}, "tags": [1, null, 2.0], "list": [1, [2]]}"#,
            #"{"id": 8, "title": "literal", "user": null, "tags": [3], "when": "2024-05-01"}"#,
            #"{"id": 9, "tags": []}"#,
        ]
        let expected = [
            #"{"id":7,"title":"Ada","author":{"login":"ada"},"tags":[1,2],"when":null,"all":[1,[2]]}"#,
            #"{"id":8,"title":"literal","tags":[3],"when":"2024-05-01"}"#,
            #"{"id":9,"tags":[],"when":null}"#,
        ]
        for (text, output) in zip(objects, expected) {
            let tree = try JSON.parse(text)
            for object in [tree, tree.packed()] {
                let mapped = try map.map(object).get()
                #expect(mapped.isPacked)
                #expect(String(decoding: mapped.encoded(), as: UTF8.self) == output)
            }
        }
        let converted = try map.map(JSON.parse(#"{"id": 1, "tags": [2.0]}"#)).get()
        #expect(
            converted["id"]?.kind == .integer && converted["tags"]?[0]?.kind == .integer, "integral reals become integers, also in arrays")
    }

    @Test func errorsNameTheFieldInNestedObjectsAndArrays() throws {
        let map = try mapping(
            #"{"people": {"items": {"mapping": {"n": {"keyPath": "name", "type": "string"}}}}, "home": {"keyPath": "a.b", "mapping": {"url": {"type": "url"}}}}"#
        )
        for text in [#"{"people": [{"name": "x"}, {"name": 3}]}"#, #"{"a": {"b": {"url": "nope"}}}"#] {
            let tree = try JSON.parse(text)
            for object in [tree, tree.packed()] {
                switch map.map(object) {
                case .success(let mapped): Issue.record("expected an issue, got \(mapped)")
                case .failure(let issue): #expect(issue.field == (text.contains("people") ? "people[1].n" : "home.url"), "\(issue)")
                }
            }
        }
    }

    /// A page's objects share one writer, and fields are appended to it borrowed: an object
    /// that fails part-way must leave nothing behind for the next (which would read the
    /// failed object's memory after it was freed).
    @Test func anObjectThatFailsLeavesNothingInTheWriter() throws {
        let field = { (type: ObjectMapping.FieldType) in
            ObjectMapping.FieldSpec.field(keyPath: nil, type: type, defaultValue: nil, nested: nil, items: nil)
        }
        let map = ObjectMapping(fields: [("a", field(.any)), ("b", field(.integer))])
        var writer = PackedObjectWriter()
        do {
            let failing = try JSON.parse(#"{"a": "read before b failed", "b": "not an integer"}"#)
            if case .success(let mapped) = map.map(failing.cursor, writer: &writer) { Issue.record("expected an issue, got \(mapped)") }
        }
        let next = try JSON.parse(#"{"b": 1}"#)
        #expect(try map.map(next.cursor, writer: &writer).get().encoded() == Array(#"{"b":1}"#.utf8))
    }

    @Test func aNameGivenTwiceKeepsTheLastValueReadAtTheFirstPlace() throws {
        let field = { (path: String) in
            ObjectMapping.FieldSpec.field(keyPath: JSONKeyPath(path), type: .any, defaultValue: nil, nested: nil, items: nil)
        }
        let map = ObjectMapping(fields: [("a", field("x")), ("b", field("z")), ("a", field("y"))])
        #expect(try map.map(JSON.parse(#"{"x": 1, "y": 2, "z": 3}"#)).get().encoded() == Array(#"{"a":2,"b":3}"#.utf8))
        #expect(
            try map.map(JSON.parse(#"{"x": 1, "z": 3}"#)).get().encoded() == Array(#"{"a":1,"b":3}"#.utf8),
            "a missing later value leaves the earlier one")
    }
}
