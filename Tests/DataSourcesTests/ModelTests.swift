@testable import DataSources
import JSONKit
import Testing

/// Records what a source emits, in order.
final class Recorder: DataSourceObserver {
    var events: [String] = []
    var changes: [ChangeSet] = []

    func dataSource(_ source: DataSource, emitted event: DataSourceEvent) {
        switch event {
        case .willLoadData: events.append("\(source.name).will")
        case .didPartiallyLoad: events.append("\(source.name).partial")
        case .finishedLoading: events.append("\(source.name).finished")
        case .failedWithError: events.append("\(source.name).failed")
        case .didChange(let change):
            events.append("\(source.name).change")
            changes.append(change)
        }
    }
}

/// A child whose loads end when the test says, with success or failure.
final class ManualSource: DataSource {
    override var kind: String { "manual" }
    init(name: String) { super.init(name: name, identity: Identity(key: nil)) }
    override func fetchData() { emit(.willLoadData) }
    func succeed(_ objects: [JSON]) {
        replaceLayout(Layout(sections: [objects], titles: [""]))
        emit(.finishedLoading)
    }
    func fail() { emit(.failedWithError(["kind": "http", "status": 500])) }
}

@Suite struct ModelTests {
    @Test func sectionedGroupsAllEqualKeysAndOneNullSection() throws {
        let registry = SourceRegistry()
        _ = try registry.create(["name": "s", "kind": "simple", "objects": [["k": "b"], ["k": "a"], ["x": 1], ["k": "b"], ["y": 2]]])
        let sectioned = try registry.create(["name": "t", "kind": "sectioned", "source": "s", "sectioningKey": "k"])
        #expect(sectioned.sectionTitles == ["b", "a", .null])
        #expect((0..<3).map { sectioned.numberOfObjects(inSection: $0) } == [2, 1, 2])
    }

    @Test func sortingIsStableAndOrdersKindsAndNumbers() throws {
        let objects: [JSON] = [["n": 10, "i": 0], ["n": 2, "i": 1], ["n": "x", "i": 2], ["i": 3], ["n": 2.5, "i": 4], ["n": 2, "i": 5]]
        let sorted = SortDescriptor.sorted(objects, by: [SortDescriptor(keyPath: KeyPath("n"), ascending: true)])
        #expect(sorted.map { $0["i"]!.integerValue! } == [3, 1, 5, 4, 0, 2])
        let descending = SortDescriptor.sorted(objects, by: [SortDescriptor(keyPath: KeyPath("n"), ascending: false)])
        #expect(descending.map { $0["i"]!.integerValue! } == [2, 0, 4, 1, 5, 3])
    }

    @Test func threeDeepCompositionFollowsEditsOfTheInnermostSource() throws {
        let registry = SourceRegistry()
        let recorder = Recorder()
        // Observed as the daemon observes: each source as soon as it is created.
        func create(_ params: JSON) throws -> DataSource {
            let source = try registry.create(params)
            source.addObserver(recorder)
            return source
        }
        let simple = try create(["name": "simple", "kind": "simple", "identityKey": "id",
                                 "objects": [["id": 1, "g": "x"], ["id": 2, "g": "y"]]]) as! SimpleDataSource
        _ = try create(["name": "sectioned", "kind": "sectioned", "source": "simple", "sectioningKey": "g"])
        let multi = try create(["name": "multi", "kind": "multi", "sources": ["sectioned"], "preserveSections": true])
        try simple.insert([["id": 3, "g": "x"]], at: 2)
        #expect(recorder.events == ["simple.change", "sectioned.change", "multi.change"])
        #expect(multi.sectionTitles == ["x", "y"])
        #expect(try multi.object(at: IndexPath(section: 0, item: 1)) == ["id": 3, "g": "x"])
        #expect(recorder.changes.last?.inserted == [IndexPath(section: 0, item: 1)])
        #expect(multi.indexPath(for: ["id": 3]) == IndexPath(section: 0, item: 1))
    }

    @Test func multiFetchReportsEachChildThenNamesTheFailures() throws {
        let a = ManualSource(name: "a"), b = ManualSource(name: "b"), c = ManualSource(name: "c")
        let multi = MultiDataSource(name: "m", identity: Identity(key: nil), sources: [a, b, c], preserveSections: false)
        let recorder = Recorder()
        multi.addObserver(recorder)
        #expect(multi.numberOfSections == 3, "the layout exists before any child answers")
        multi.fetchData()
        #expect(recorder.events == ["m.will"])
        #expect(multi.isFetching)
        b.succeed(["b1"])
        a.fail()
        #expect(recorder.events == ["m.will", "m.change", "m.partial", "m.partial"])
        c.fail()
        #expect(recorder.events.last == "m.failed")
        #expect(!multi.isFetching)
        #expect(try multi.object(at: IndexPath(section: 1, item: 0)) == "b1", "sections keep their places")
    }

    @Test func multiFailureNamesTheChildren() throws {
        final class Capture: DataSourceObserver {
            var error: JSON?
            func dataSource(_ source: DataSource, emitted event: DataSourceEvent) {
                if case .failedWithError(let error) = event { self.error = error }
            }
        }
        let a = ManualSource(name: "a"), b = ManualSource(name: "b")
        let multi = MultiDataSource(name: "m", identity: Identity(key: nil), sources: [a, b], preserveSections: false)
        let capture = Capture()
        multi.addObserver(capture)
        multi.fetchData()
        a.succeed([])
        b.fail()
        #expect(capture.error?["kind"] == "children")
        #expect(capture.error?["failures"]?.arrayValue?.map { $0["source"] } == ["b"])
        #expect(capture.error?["failures"]?[0]?["error"]?["status"] == 500)
    }

    @Test func sectionedFailsWhenItsChildFails() {
        let child = ManualSource(name: "c")
        let sectioned = SectionedDataSource(name: "s", identity: Identity(key: nil), child: child, sectioningKey: KeyPath("k"), sortDescriptors: [])
        let recorder = Recorder()
        sectioned.addObserver(recorder)
        sectioned.fetchData()
        child.fail()
        #expect(recorder.events == ["s.will", "s.failed"])
        #expect(!sectioned.isFetching)
    }

    @Test func destroyIsRefusedWhileUsedUnlessCascading() throws {
        let registry = SourceRegistry()
        _ = try registry.create(["name": "s", "kind": "simple"])
        _ = try registry.create(["name": "t", "kind": "sectioned", "source": "s", "sectioningKey": "k"])
        _ = try registry.create(["name": "m", "kind": "multi", "sources": ["t"]])
        #expect(throws: DataSourceError.self) { try registry.destroy("s", cascade: false) }
        #expect(registry.all.count == 3)
        #expect(try registry.destroy("s", cascade: true) == ["m", "t", "s"])
        #expect(registry.all.isEmpty)
    }
}

/// Applying a change set to the old rows must give the new rows.
@Suite struct ChangeSetOracleTests {
    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
    }

    static func layout(_ sections: [(title: String, items: [Int])]) -> Layout {
        Layout(sections: sections.map { $0.items.map { ["id": JSON($0 % 7), "v": JSON($0)] } }, titles: sections.map { JSON($0.title) })
    }

    @Test(arguments: 0..<300)
    func applyingTheChangesGivesTheNewRows(seed: Int) {
        var random = Generator(state: UInt64(seed))
        func sections() -> [(title: String, items: [Int])] {
            let titles = ["a", "b", "c", "d"].filter { _ in random.next(3) > 0 }
            return titles.map { title in (title, (0..<random.next(6)).map { _ in random.next(12) }) }
        }
        let old = Self.layout(sections()), new = Self.layout(sections())
        let identity = Identity(key: seed % 2 == 0 ? KeyPath("id") : nil)
        let changes = ChangeSet.between(old: old, new: new, identity: identity)

        // Old rows minus deletions and move sources, in order...
        let removed = Set(changes.deleted).union(changes.moved.map(\.from))
        var survivors: [JSON] = []
        for (s, items) in old.sections.enumerated() {
            for (i, object) in items.enumerated() where !removed.contains(IndexPath(section: s, item: i)) { survivors.append(identity.of(object)) }
        }
        // ...must be the new rows that are neither insertions nor move targets, in order.
        let added = Set(changes.inserted).union(changes.moved.map(\.to))
        var expected: [JSON] = []
        for (s, items) in new.sections.enumerated() {
            for (i, object) in items.enumerated() where !added.contains(IndexPath(section: s, item: i)) { expected.append(identity.of(object)) }
        }
        #expect(survivors == expected)
        // Every old row is deleted or kept, every new row inserted or kept, once.
        #expect(changes.deleted.count + (old.sections.joined().count - changes.deleted.count) == old.sections.joined().count)
        #expect(new.sections.joined().count - changes.inserted.count == old.sections.joined().count - changes.deleted.count)
        #expect(Set(changes.deleted).count == changes.deleted.count)
        // Updated rows are kept rows whose value changed.
        for path in changes.updated { #expect(!changes.inserted.contains(path)) }
        #expect(changes.deletedSections == old.titles.indices.filter { !new.titles.contains(old.titles[$0]) })
        #expect(changes.insertedSections == new.titles.indices.filter { !old.titles.contains(new.titles[$0]) })
    }

    @Test func noChangeIsEmpty() {
        let layout = Self.layout([("a", [1, 2, 3])])
        #expect(ChangeSet.between(old: layout, new: layout, identity: Identity(key: nil)).isEmpty)
    }

    @Test func oneItemMovedToTheFrontIsOneMove() {
        let old = Self.layout([("a", [1, 2, 3, 4, 5])]), new = Self.layout([("a", [5, 1, 2, 3, 4])])
        let changes = ChangeSet.between(old: old, new: new, identity: Identity(key: nil))
        #expect(changes.moved == [ChangeSet.Move(from: IndexPath(section: 0, item: 4), to: IndexPath(section: 0, item: 0))])
        #expect(changes.deleted.isEmpty && changes.inserted.isEmpty)
    }
}

/// The one-section fast path (diffing only between an unchanged head and tail) must give
/// the same answers as the general path.
@Suite struct IncrementalLayoutTests {
    final class Changes: DataSourceObserver {
        var last: ChangeSet?
        func dataSource(_ source: DataSource, emitted event: DataSourceEvent) {
            if case .didChange(let changes) = event { last = changes }
        }
    }

    @Test(arguments: 0..<200)
    func editsKeepTheIndexAndChangeSetsRight(seed: Int) throws {
        var random = ChangeSetOracleTests.Generator(state: UInt64(seed) &+ 99)
        func objects(_ count: Int) -> [JSON] { (0..<count).map { _ in ["id": JSON(random.next(15)), "v": JSON(random.next(3))] } }
        let source = SimpleDataSource(name: "s", identity: Identity(key: seed % 2 == 0 ? KeyPath("id") : nil), objects: objects(random.next(12)))
        let observer = Changes()
        source.addObserver(observer)
        for _ in 0..<8 {
            let before = source.objects
            observer.last = nil
            switch random.next(4) {
            case 0: try source.insert(objects(random.next(4)), at: random.next(before.count + 1))
            case 1 where !before.isEmpty:
                let index = random.next(before.count)
                try source.remove(at: index, count: random.next(before.count - index) + 1)
            case 2: source.replaceObjects(before + objects(random.next(4)))
            default: source.replaceObjects(objects(random.next(12)))
            }
            let after = source.objects
            // The index answers as a fresh one would.
            let fresh = IdentityIndex(sections: [after], identity: source.identity)
            for object in after + objects(5) {
                #expect(source.indexPath(for: object) == fresh.indexPath(of: source.identity.of(object)))
            }
            // The change set takes the old rows to the new ones.
            guard let changes = observer.last else {
                #expect(before == after)
                continue
            }
            let removed = Set(changes.deleted).union(changes.moved.map(\.from))
            let added = Set(changes.inserted).union(changes.moved.map(\.to))
            let survivors = before.enumerated().filter { !removed.contains(IndexPath(section: 0, item: $0.offset)) }.map { source.identity.of($0.element) }
            let expected = after.enumerated().filter { !added.contains(IndexPath(section: 0, item: $0.offset)) }.map { source.identity.of($0.element) }
            #expect(survivors == expected)
            #expect(before.count - changes.deleted.count == after.count - changes.inserted.count)
        }
    }
}
