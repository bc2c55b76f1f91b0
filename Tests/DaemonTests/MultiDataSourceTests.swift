@testable import Daemon
@testable import DataSources
import JSONKit
import Testing

@Suite struct MultiDataSourceTests {
    /// Sources are observed by `recorder` as soon as they exist, as the daemon observes them.
    static func multi(_ sources: [DataSource], preserve: Bool = false, observedBy recorder: Recorder? = nil) -> MultiDataSource {
        let multi = MultiDataSource(name: "m", identity: Identity(key: nil), sources: sources, preserveSections: preserve)
        recorder?.observing(multi)
        return multi
    }

    static func fruit(observedBy recorder: Recorder? = nil) -> (SimpleDataSource, SectionedDataSource, SimpleDataSource) {
        let fruit = SimpleDataSource(
            name: "fruit", identity: Identity(key: JSONKeyPath("n")),
            objects: [["n": "apple", "c": "red"], ["n": "lime", "c": "green"], ["n": "cherry", "c": "red"]])
        recorder?.observing(fruit)
        let byColour = SectionedDataSource(
            name: "byColour", identity: fruit.identity, child: fruit, sectioningKey: JSONKeyPath("c"), sortDescriptors: [])
        recorder?.observing(byColour)
        let veg = SimpleDataSource(name: "veg", identity: Identity(key: JSONKeyPath("n")), objects: [["n": "kale", "c": "green"]])
        recorder?.observing(veg)
        return (fruit, byColour, veg)
    }

    @Test func oneFlattenedSectionPerChildTitledWithItsName() throws {
        let (_, byColour, veg) = Self.fruit()
        let multi = Self.multi([byColour, veg])
        #expect(multi.sectionTitles == ["byColour", "veg"])
        #expect(multi.layout.sections.map { $0.map { $0["n"]! } } == [["apple", "cherry", "lime"], ["kale"]])
        #expect(try multi.object(at: path(1, 0)) == ["n": "kale", "c": "green"])
    }

    @Test func preservedSectionsAreSplicedWithTheirTitles() {
        let (_, byColour, veg) = Self.fruit()
        let multi = Self.multi([byColour, veg], preserve: true)
        #expect(multi.sectionTitles == ["red", "green", ""])
        #expect(multi.layout.sections.map(\.count) == [2, 1, 1])
    }

    @Test func fetchingSynchronousChildren() {
        let recorder = Recorder()
        let (fruit, _, veg) = Self.fruit(observedBy: recorder)
        let multi = Self.multi([fruit, veg], observedBy: recorder)
        multi.fetchData()
        #expect(
            recorder.events.filter { !$0.hasPrefix("byColour") } == [
                "m.will", "fruit.will", "fruit.finished", "m.partial", "veg.will", "veg.finished", "m.finished",
            ])
        #expect(!multi.isFetching)
    }

    @Test func withoutChildrenItFinishesAtOnce() {
        let multi = Self.multi([])
        let recorder = Recorder().observing(multi)
        multi.fetchData()
        #expect(recorder.events == ["m.will", "m.finished"], "the original never finished")
        #expect(multi.numberOfSections == 0)
    }

    @Test func layoutIsStableWhileChildrenAnswerInAnyOrder() throws {
        let a = ManualSource(name: "a"), b = ManualSource(name: "b"), c = ManualSource(name: "c")
        let multi = Self.multi([a, b, c])
        let recorder = Recorder().observing(multi)
        #expect(multi.numberOfSections == 3, "the layout exists before any child answers")
        multi.fetchData()
        #expect(recorder.events == ["m.will"])
        #expect(recorder.fetching == [true])
        b.succeed(["b1"])
        #expect(recorder.events == ["m.will", "m.change", "m.partial"])
        #expect(recorder.changes.last?.changes == changeSet(inserted: [path(1, 0)]))
        #expect(try multi.object(at: path(1, 0)) == "b1", "b keeps its section though a has not answered")
        a.succeed(["a1", "a2"])
        #expect(recorder.events.suffix(2) == ["m.change", "m.partial"])
        c.succeed([])
        #expect(recorder.events.last == "m.finished")
        #expect(recorder.fetching.last == false)
        #expect(multi.sectionTitles == ["a", "b", "c"])
    }

    @Test func failureNamesEveryFailedChildWithItsError() {
        let a = ManualSource(name: "a"), b = ManualSource(name: "b"), c = ManualSource(name: "c")
        let multi = Self.multi([a, b, c])
        let recorder = Recorder().observing(multi)
        multi.fetchData()
        c.fail(status: 404)
        b.succeed(["b1"])
        a.fail(status: 500)
        #expect(recorder.events == ["m.will", "m.partial", "m.change", "m.partial", "m.failed"])
        #expect(
            recorder.errors == [
                [
                    "kind": "children",
                    "message": "2 of 3 sources failed: c, a",
                    "failures": [
                        ["source": "c", "error": ["kind": "http", "message": "HTTP status 404", "status": 404]],
                        ["source": "a", "error": ["kind": "http", "message": "HTTP status 500", "status": 500]],
                    ],
                ]
            ])
        #expect(!multi.isFetching)
    }

    @Test func childEditsOutsideAFetchAreOnlyChanges() throws {
        let (fruit, byColour, veg) = Self.fruit()
        let multi = Self.multi([byColour, veg])
        let recorder = Recorder().observing(multi)
        try veg.insert([["n": "leek", "c": "green"]], at: 0)
        try fruit.remove(at: 2, count: 1)
        #expect(recorder.events == ["m.change", "m.change"])
        #expect(recorder.changes(of: "m") == [changeSet(inserted: [path(1, 0)]), changeSet(deleted: [path(0, 1)])])
    }

    @Test func aChildLoadingOnItsOwnGivesABalancedCycle() {
        let a = ManualSource(name: "a"), b = ManualSource(name: "b")
        let multi = Self.multi([a, b])
        let recorder = Recorder().observing(multi)
        a.fetchData()
        a.succeed(["a1"])
        #expect(recorder.events == ["m.will", "m.change", "m.finished"])
        b.fetchData()
        b.fail()
        #expect(recorder.events.suffix(2) == ["m.will", "m.failed"])
        #expect(recorder.errors.last?["failures"]?[0]?["source"] == "b")
    }

    @Test func aDiamondIsFetchedOnce() {
        let recorder = Recorder()
        let (fruit, byColour, _) = Self.fruit(observedBy: recorder)
        let multi = Self.multi([fruit, byColour], observedBy: recorder)
        multi.fetchData()
        #expect(
            recorder.events == ["m.will", "fruit.will", "byColour.will", "fruit.finished", "byColour.finished", "m.partial", "m.finished"])
    }

    @Test func cancelFetchCancelsTheChildrenStillLoading() {
        let a = ManualSource(name: "a"), b = ManualSource(name: "b")
        let multi = Self.multi([a, b])
        multi.fetchData()
        a.succeed([])
        multi.cancelFetch()
        #expect(a.cancelCount == 0 && b.cancelCount == 1)
    }

    @Test func fetchingAgainEndsTheCycleInFlightFirst() {
        let a = ManualSource(name: "a")
        let multi = Self.multi([a])
        let recorder = Recorder().observing(multi)
        multi.fetchData()
        multi.fetchData()
        #expect(recorder.events == ["m.will", "m.failed", "m.will"])
        #expect(recorder.errors.first?["kind"] == "cancelled")
        a.succeed([])
        #expect(recorder.events.last == "m.finished")
    }

    @Test func describes() throws {
        let registry = SourceRegistry()
        _ = try registry.create(["name": "a", "kind": "simple", "identityKey": "id"])
        _ = try registry.create(["name": "b", "kind": "simple", "identityKey": "id", "objects": [["id": 1]]])
        let multi = try registry.create(["name": "m", "kind": "multi", "sources": ["a", "b"]])
        #expect(
            multi.summary == [
                "name": "m", "kind": "multi", "numberOfSections": 2, "sectionTitles": ["a", "b"], "counts": [0, 1], "isFetching": false,
                "identityKey": "id", "children": ["a", "b"], "sources": ["a", "b"], "preserveSections": false, "revision": 1,
            ])
    }
}
