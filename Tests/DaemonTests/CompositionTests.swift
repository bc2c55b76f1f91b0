@testable import DataSources
import JSONKit
import Testing

/// multi over sectioned over simple, created and observed as the daemon does it: each
/// source observed as soon as it exists, so a child's events reach the daemon before its
/// parents react to them.
@Suite struct CompositionTests {
    let registry = SourceRegistry()
    let recorder = Recorder()
    let items: SimpleDataSource
    let byGroup: DataSource
    let spliced: DataSource
    let flat: DataSource

    init() throws {
        let registry = registry, recorder = recorder
        func create(_ params: JSON) throws -> DataSource {
            let source = try registry.create(params)
            source.addObserver(recorder)
            return source
        }
        items =
            try create([
                "name": "items", "kind": "simple", "identityKey": "id",
                "objects": [["id": 1, "g": "x"], ["id": 2, "g": "y"], ["id": 3, "g": "x"]],
            ]) as! SimpleDataSource
        byGroup = try create(["name": "byGroup", "kind": "sectioned", "source": "items", "sectioningKey": "g"])
        spliced = try create(["name": "spliced", "kind": "multi", "sources": ["byGroup"], "preserveSections": true])
        flat = try create(["name": "flat", "kind": "multi", "sources": ["byGroup"]])
    }

    static func ids(_ source: DataSource) -> [[JSON?]] { source.layout.sections.map { $0.map { $0["id"] } } }

    @Test func editsOfTheInnermostSourceReachEveryLevelInOrder() throws {
        #expect(Self.ids(spliced) == [[1, 3], [2]])
        #expect(spliced.sectionTitles == ["x", "y"])
        #expect(Self.ids(flat) == [[1, 3, 2]])

        try items.insert([["id": 4, "g": "y"]], at: 1)
        #expect(recorder.events == ["items.change", "byGroup.change", "spliced.change", "flat.change"])
        #expect(
            recorder.changes.map(\.changes) == [
                changeSet(inserted: [path(0, 1)]),
                changeSet(inserted: [path(1, 0)]),
                changeSet(inserted: [path(1, 0)]),
                changeSet(inserted: [path(0, 2)]),
            ])
        #expect(Self.ids(spliced) == [[1, 3], [4, 2]])
        #expect(spliced.indexPath(for: ["id": 4]) == path(1, 0))
        #expect(flat.indexPath(for: ["id": 2]) == path(0, 3))

        // Object 3 changes group: it moves to the other section there, and is updated.
        recorder.reset()
        try items.update([["id": 3, "g": "y"]])
        #expect(recorder.events == ["items.change", "byGroup.change", "spliced.change", "flat.change"])
        #expect(
            recorder.changes.map(\.changes) == [
                changeSet(updated: [path(0, 3)]),
                changeSet(moved: [(path(0, 1), path(1, 2))], updated: [path(1, 2)]),
                changeSet(moved: [(path(0, 1), path(1, 2))], updated: [path(1, 2)]),
                changeSet(moved: [(path(0, 1), path(0, 3))], updated: [path(0, 3)]),
            ])
        #expect(Self.ids(spliced) == [[1], [4, 2, 3]])

        // The last object of group x leaves: its section goes.
        recorder.reset()
        try items.remove(at: 0, count: 1)
        #expect(
            recorder.changes.map(\.changes) == [
                changeSet(deleted: [path(0, 0)]),
                changeSet(deletedSections: [0], deleted: [path(0, 0)]),
                changeSet(deletedSections: [0], deleted: [path(0, 0)]),
                changeSet(deleted: [path(0, 0)]),
            ])
        #expect(spliced.sectionTitles == ["y"])
        #expect(spliced.indexPath(for: ["id": 1]) == nil)
        #expect(spliced.indexPath(for: ["id": 3]) == path(0, 2))
    }

    @Test func sectionsFollowFirstAppearanceSoAnInsertAtTheFrontCanReorderThem() throws {
        try items.insert([["id": 4, "g": "y"]], at: 0)
        #expect(spliced.sectionTitles == ["y", "x"])
        // A change set has no section moves: one of the two sections is deleted and inserted.
        let changes = recorder.changes(of: "byGroup").last!
        #expect(changes.deletedSections.count == 1 && changes.insertedSections.count == 1)
    }

    @Test func fetchingTheOutermostSourceRunsOneCycleAtEachLevel() {
        flat.fetchData()
        #expect(
            recorder.events == [
                "flat.will", "items.will", "byGroup.will", "spliced.will",
                "items.finished", "byGroup.finished", "spliced.finished", "flat.finished",
            ])
        // spliced was not asked, but its child loaded: it ran a balanced cycle of its own.
        for source in [items, byGroup, spliced, flat] { #expect(!source.isFetching) }
    }
}
