@testable import Daemon
@testable import DataSources
import JSONKit
import Testing

@Suite struct SectionedDataSourceTests {
    static func ids(_ source: DataSource) -> [[JSON?]] { source.layout.sections.map { $0.map { $0["id"] } } }

    @Test func groupsAllEqualKeysNotJustAdjacentOnesAndMissingKeysShareOneNullSection() {
        let child = SimpleDataSource(
            name: "c", identity: Identity(key: JSONKeyPath("id")),
            objects: [
                ["id": 1, "k": "b"], ["id": 2, "k": "a"], ["id": 3], ["id": 4, "k": "b"], ["id": 5, "k": .null], ["id": 6, "k": "a"],
                ["id": 7],
            ])
        let sectioned = SectionedDataSource(
            name: "s", identity: child.identity, child: child, sectioningKey: JSONKeyPath("k"), sortDescriptors: [])
        #expect(sectioned.sectionTitles == ["b", "a", .null])
        #expect(Self.ids(sectioned) == [[1, 4], [2, 6], [3, 5, 7]], "missing and null keys share the null section")
    }

    @Test func keysAreComparedAsJSONValues() {
        let child = SimpleDataSource(
            name: "c", identity: Identity(key: nil),
            objects: [
                ["id": 1, "k": 1], ["id": 2, "k": 1.0], ["id": 3, "k": ["x": 1, "y": 2]], ["id": 4, "k": ["y": 2, "x": 1]],
                ["id": 5, "k": "1"],
            ])
        let sectioned = SectionedDataSource(
            name: "s", identity: child.identity, child: child, sectioningKey: JSONKeyPath("k"), sortDescriptors: [])
        #expect(sectioned.sectionTitles == [1, 1.0, ["x": 1, "y": 2], "1"], "1 and 1.0 differ; member order does not")
        #expect(Self.ids(sectioned) == [[1], [2], [3, 4], [5]])
    }

    @Test func sortsStablyThenGroupsInOrderOfFirstAppearance() {
        let child = SimpleDataSource(
            name: "c", identity: Identity(key: JSONKeyPath("id")),
            objects: [
                ["id": 1, "cat": "b", "rank": 3], ["id": 2, "cat": "a", "rank": 1], ["id": 3, "cat": "b", "rank": 1],
                ["id": 4, "rank": 2], ["id": 5, "cat": "a", "rank": 2], ["id": 6],
            ])
        let ranked = SectionedDataSource(
            name: "s", identity: child.identity, child: child, sectioningKey: JSONKeyPath("cat"),
            sortDescriptors: [SortDescriptor(keyPath: JSONKeyPath("rank"), ascending: true)])
        // Sorted: 6 (no rank), 2, 3 (rank 1, input order), 4, 5, 1.
        #expect(ranked.sectionTitles == [.null, "a", "b"])
        #expect(Self.ids(ranked) == [[6, 4], [2, 5], [3, 1]])
        let nested = SimpleDataSource(name: "n", identity: Identity(key: nil), objects: [["a": ["b": 2]], ["a": ["b": 1]], ["a": 3]])
        let byNested = SectionedDataSource(
            name: "t", identity: nested.identity, child: nested, sectioningKey: JSONKeyPath("a.b"),
            sortDescriptors: [SortDescriptor(keyPath: JSONKeyPath("a.b"), ascending: false)])
        #expect(byNested.sectionTitles == [2, 1, .null])
    }

    @Test func followsEditsOfItsChildWithSectionChanges() throws {
        let child = SimpleDataSource(
            name: "c", identity: Identity(key: JSONKeyPath("id")), objects: [["id": 1, "g": "x"], ["id": 2, "g": "y"]])
        let recorder = Recorder().observing(child)
        let sectioned = SectionedDataSource(
            name: "s", identity: child.identity, child: child, sectioningKey: JSONKeyPath("g"), sortDescriptors: [])
        recorder.observing(sectioned)

        try child.insert([["id": 3, "g": "z"]], at: 0)
        #expect(sectioned.sectionTitles == ["z", "x", "y"])
        #expect(recorder.changes(of: "s") == [changeSet(insertedSections: [0], inserted: [path(0, 0)])])

        try child.update([["id": 2, "g": "x"]])
        #expect(sectioned.sectionTitles == ["z", "x"])
        #expect(Self.ids(sectioned) == [[3], [1, 2]])
        #expect(recorder.changes(of: "s").last == changeSet(deletedSections: [2], moved: [(path(2, 0), path(1, 1))], updated: [path(1, 1)]))

        try child.remove(at: 0, count: 1)
        #expect(recorder.changes(of: "s").last == changeSet(deletedSections: [0], deleted: [path(0, 0)]))
        #expect(recorder.events == ["c.change", "s.change", "c.change", "s.change", "c.change", "s.change"])
    }

    @Test func fetchDataMirrorsTheChildsCycle() {
        let child = SimpleDataSource(name: "c", identity: Identity(key: nil), objects: [["k": 1]])
        let recorder = Recorder().observing(child)
        let sectioned = SectionedDataSource(
            name: "s", identity: child.identity, child: child, sectioningKey: JSONKeyPath("k"), sortDescriptors: [])
        recorder.observing(sectioned)
        sectioned.fetchData()
        #expect(recorder.events == ["c.will", "s.will", "c.finished", "s.finished"])
        #expect(recorder.fetching == [true, true, false, false])

        // Observed after the sectioned source subscribed, the child's events come after its reactions.
        let late = Recorder().observing(child, sectioned)
        sectioned.fetchData()
        #expect(late.events == ["s.will", "c.will", "s.finished", "c.finished"])
    }

    @Test func anAsynchronousChildsPartialLoadsAndFailureArePassedOn() {
        let child = ManualSource(name: "c")
        let sectioned = SectionedDataSource(
            name: "s", identity: child.identity, child: child, sectioningKey: JSONKeyPath("k"), sortDescriptors: [])
        let recorder = Recorder().observing(sectioned)
        sectioned.fetchData()
        #expect(recorder.events == ["s.will"])
        #expect(sectioned.isFetching)
        child.partial([["k": "a"], ["k": "b"], ["k": "a"]])
        #expect(recorder.events == ["s.will", "s.change", "s.partial"])
        #expect(sectioned.sectionTitles == ["a", "b"])
        child.fail(status: 503)
        #expect(recorder.events == ["s.will", "s.change", "s.partial", "s.failed"], "the original never finished here")
        #expect(recorder.errors == [["kind": "http", "message": "HTTP status 503", "status": 503, "source": "c"]])
        #expect(!sectioned.isFetching)
        #expect(sectioned.numberOfSections == 2, "a failure keeps the rows")
    }

    @Test func aChildFetchedDirectlyGivesABalancedCycle() {
        let child = ManualSource(name: "c")
        let sectioned = SectionedDataSource(
            name: "s", identity: child.identity, child: child, sectioningKey: JSONKeyPath("k"), sortDescriptors: [])
        let recorder = Recorder().observing(sectioned)
        child.fetchData()
        child.succeed([["k": 1]])
        #expect(recorder.events == ["s.will", "s.change", "s.finished"])
        child.setRows([["k": 2]])
        #expect(recorder.events.last == "s.change", "a change outside a load is only a change")
    }

    @Test func cancelFetchCancelsTheChild() {
        let child = ManualSource(name: "c")
        let sectioned = SectionedDataSource(
            name: "s", identity: child.identity, child: child, sectioningKey: JSONKeyPath("k"), sortDescriptors: [])
        sectioned.fetchData()
        sectioned.cancelFetch()
        #expect(child.cancelCount == 1)
    }

    @Test func describes() throws {
        let registry = SourceRegistry()
        _ = try registry.create(["name": "c", "kind": "simple", "identityKey": "id", "objects": [["id": 1, "g": "x"]]])
        let sectioned = try registry.create([
            "name": "s", "kind": "sectioned", "source": "c", "sectioningKey": "g",
            "sortDescriptors": [["keyPath": "id", "ascending": false]],
        ])
        #expect(
            sectioned.summary == [
                "name": "s", "kind": "sectioned", "numberOfSections": 1, "sectionTitles": ["x"], "counts": [1], "isFetching": false,
                "identityKey": "id", "children": ["c"], "source": "c", "sectioningKey": "g",
                "sortDescriptors": [["keyPath": "id", "ascending": false]], "revision": 1,
            ])
    }
}
