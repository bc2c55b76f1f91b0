@testable import DataSources
import JSONKit
import JSONRPC
import Testing

@Suite struct RegistryTests {
    /// The refusal `create` throws for `params`, or nil if it accepts them.
    static func refusal(_ params: JSON, in registry: SourceRegistry = SourceRegistry()) -> ResponseError? {
        wireRefusal { try registry.create(params) }
    }

    static func withSimple() throws -> SourceRegistry {
        let registry = SourceRegistry()
        _ = try registry.create(["name": "s", "kind": "simple", "objects": [["k": 1]]])
        return registry
    }

    @Test func createsEachKindAndListsThemOldestFirst() throws {
        let registry = try Self.withSimple()
        _ = try registry.create(["name": "t", "kind": "sectioned", "source": "s", "sectioningKey": "k"])
        _ = try registry.create(["name": "m", "kind": "multi", "sources": ["t", "s"], "preserveSections": true])
        #expect(registry.all.map(\.name) == ["s", "t", "m"])
        #expect(registry.all.map(\.kind) == ["simple", "sectioned", "multi"])
        #expect(try registry.source(named: "t").children.map(\.name) == ["s"])
        #expect(registry.kinds == ["simple", "sectioned", "multi", "filtered"], "remote kinds exist only with a factory")
    }

    @Test func refusalsNameTheFieldAndWhatWasExpected() throws {
        let registry = try Self.withSimple()
        let cases: [(JSON, String, String)] = [
            (["kind": "simple"], "name", "a non-empty string"),
            (["name": "", "kind": "simple"], "name", "a non-empty string"),
            (["name": "s", "kind": "simple"], "name", "already exists"),
            (["name": "x"], "kind", "one of simple, sectioned, multi"),
            (
                ["name": "x", "kind": "remote", "remoteConfiguration": ["baseURL": "http://h"], "apiPath": "/"], "kind",
                "one of simple, sectioned, multi"
            ),
            (["name": "x", "kind": "simple", "objcts": []], "objcts", "did you mean \"objects\""),
            (["name": "x", "kind": "simple", "objects": ["a": 1]], "objects", "an array"),
            (["name": "x", "kind": "simple", "identityKey": 3], "identityKey", "a non-empty key path string"),
            (["name": "x", "kind": "sectioned", "sectioningKey": "k"], "source", "the name of an existing source"),
            (["name": "x", "kind": "sectioned", "source": "nope", "sectioningKey": "k"], "source", "no source named \"nope\""),
            (["name": "x", "kind": "sectioned", "source": "x", "sectioningKey": "k"], "source", "cycle"),
            (["name": "x", "kind": "sectioned", "source": "s"], "sectioningKey", "a non-empty key path string"),
            (
                ["name": "x", "kind": "sectioned", "source": "s", "sectioningKey": "k", "sortDescriptors": [:]], "sortDescriptors",
                "an array"
            ),
            (
                ["name": "x", "kind": "sectioned", "source": "s", "sectioningKey": "k", "sortDescriptors": [["keyPath": "a"], 1]],
                "sortDescriptors[1]", "an object"
            ),
            (
                [
                    "name": "x", "kind": "sectioned", "source": "s", "sectioningKey": "k",
                    "sortDescriptors": [["keyPath": "a"], ["ascending": true]],
                ],
                "sortDescriptors[1].keyPath", "a non-empty key path string"
            ),
            (
                [
                    "name": "x", "kind": "sectioned", "source": "s", "sectioningKey": "k",
                    "sortDescriptors": [["keyPath": "a", "ascending": "yes"]],
                ],
                "sortDescriptors[0].ascending", "a boolean"
            ),
            (["name": "x", "kind": "multi"], "sources", "an array of source names"),
            (["name": "x", "kind": "multi", "sources": ["s", "nope"]], "sources[1]", "no source named \"nope\""),
            (["name": "x", "kind": "multi", "sources": ["s", "s"]], "sources[1]", "listed twice"),
            (["name": "x", "kind": "multi", "sources": ["x"]], "sources[0]", "cycle"),
            (["name": "x", "kind": "multi", "sources": [], "preserveSections": 1], "preserveSections", "a boolean"),
        ]
        for (params, field, text) in cases {
            let error = Self.refusal(params, in: registry)
            #expect(error?.code == -32602, "\(params)")
            #expect(error?.data?["field"] == JSON(field), "\(params)")
            #expect(error?.message.contains(text) == true, "\(params): \(error?.message ?? "accepted")")
            #expect(error?.data?["expected"]?.stringValue != nil && error?.data?["got"] != nil, "\(params): {field, expected, got}")
        }
        #expect(registry.all.map(\.name) == ["s"], "a refused creation leaves nothing behind")
    }

    @Test func unknownChildIsNamedInTheDetail() throws {
        let error = Self.refusal(["name": "x", "kind": "multi", "sources": ["nope"]], in: try Self.withSimple())
        #expect(error?.data?["got"] == "nope")
        #expect(error?.data?["sources"] == ["s"])
    }

    @Test func composedSourcesInheritTheirChildrensIdentityKeyWhenTheyAgree() throws {
        let registry = SourceRegistry()
        _ = try registry.create(["name": "a", "kind": "simple", "identityKey": "id"])
        _ = try registry.create(["name": "b", "kind": "simple", "identityKey": "id"])
        _ = try registry.create(["name": "c", "kind": "simple"])
        #expect(
            try registry.create(["name": "t", "kind": "sectioned", "source": "a", "sectioningKey": "k"]).identity.key == JSONKeyPath("id"))
        #expect(try registry.create(["name": "m", "kind": "multi", "sources": ["a", "b"]]).identity.key == JSONKeyPath("id"))
        #expect(try registry.create(["name": "n", "kind": "multi", "sources": ["a", "c"]]).identity.key == nil)
        #expect(
            try registry.create(["name": "o", "kind": "multi", "sources": ["a"], "identityKey": "x.y"]).identity.key == JSONKeyPath("x.y"))
    }

    @Test func destroyIsRefusedWhileUsedNamingTheParents() throws {
        let registry = try Self.withSimple()
        _ = try registry.create(["name": "t", "kind": "sectioned", "source": "s", "sectioningKey": "k"])
        _ = try registry.create(["name": "m", "kind": "multi", "sources": ["s"]])
        #expect { try registry.destroy("s", cascade: false) } throws: { error in
            let error = worded(error)
            return error.context.first { $0.0 == "parents" }?.1 == ["t", "m"] && error.message.contains("\"t\", \"m\"")
        }
        #expect(registry.all.count == 3)
        #expect { try registry.destroy("nope", cascade: false) } throws: { worded($0).field == "name" }
    }

    @Test func cascadeDestroysDependentsFirstAndTheyStopFollowing() throws {
        let registry = try Self.withSimple()
        let simple = try registry.source(named: "s") as! SimpleDataSource
        let sectioned = try registry.create(["name": "t", "kind": "sectioned", "source": "s", "sectioningKey": "k"])
        _ = try registry.create(["name": "m", "kind": "multi", "sources": ["t"]])
        _ = try registry.create(["name": "other", "kind": "simple"])
        #expect(try registry.destroy("s", cascade: true) == ["m", "t", "s"])
        #expect(registry.all.map(\.name) == ["other"])
        let recorder = Recorder().observing(sectioned)
        try simple.insert([["k": 2]], at: 0)
        #expect(recorder.events.isEmpty, "a destroyed parent no longer observes its child")
        #expect(try registry.destroy("other", cascade: false) == ["other"])
    }

    @Test func observersAreCalledInRegistrationOrder() throws {
        let registry = SourceRegistry()
        let daemon = Recorder()
        let child = try registry.create(["name": "c", "kind": "simple", "objects": [["k": 1]]]) as! SimpleDataSource
        child.addObserver(daemon)
        let parent = try registry.create(["name": "p", "kind": "sectioned", "source": "c", "sectioningKey": "k"])
        parent.addObserver(daemon)
        try child.insert([["k": 2]], at: 1)
        // The daemon registered on the child before the parent did: it hears the child first.
        #expect(daemon.events == ["c.change", "p.change"])

        let late = Recorder()
        child.addObserver(late)
        child.removeObserver(daemon)
        try child.remove(at: 0, count: 1)
        #expect(late.events == ["c.change"])
        #expect(daemon.events == ["c.change", "p.change", "p.change"], "removed from the child, still on the parent")
    }
}
