@testable import DataSources
import JSONKit
import Testing

/// Edits that say what they change (simple sources) and views that follow one edit in place
/// (sectioned sources, multi sources) must agree with the full recompute: the same rows, and change sets
/// the oracle accepts; a one-row edit that keeps the sections in order is one row.
@Suite struct IncrementalTests {
    /// Records each change set with the layouts before and after it.
    final class Checker: DataSourceObserver {
        var before: [ObjectIdentifier: Layout] = [:]
        var problems: [String] = []
        var last: [ObjectIdentifier: ChangeSet] = [:]
        func dataSource(_ source: DataSource, emitted event: DataSourceEvent) {
            guard case .didChange(let changes) = event else { return }
            let id = ObjectIdentifier(source)
            problems += ChangeSetOracle.problems(changes, old: before[id] ?? .empty, new: source.layout, identity: source.identity)
                .map { "\(source.name): \($0)" }
            before[id] = source.layout
            last[id] = changes
        }
        func watch(_ sources: DataSource...) {
            for source in sources {
                before[ObjectIdentifier(source)] = source.layout
                source.addObserver(self)
            }
        }
        func lastChange(of source: DataSource) -> ChangeSet? { last.removeValue(forKey: ObjectIdentifier(source)) }
    }

    static func rowCount(_ changes: ChangeSet) -> Int { changes.inserted.count + changes.deleted.count + changes.moved.count }

    @Test(arguments: 0..<300)
    func aSortedSectionedViewFollowsEditsAsTheFullRecomputeWould(seed: Int) throws {
        var random = Generator(seed: seed)
        var nextID = 0
        func object() -> JSON {
            nextID += 1
            var members: [(String, JSON)] = [("id", JSON(nextID)), ("v", JSON(random.next(5)))]
            if random.chance(85) { members.append(("g", JSON(["x", "y", "z", "w"][random.next(4)]))) }
            if random.chance(30) { members.append(("s", JSON(["a", "ab", "b"][random.next(3)]))) }
            return .object(members)
        }
        let keyed = seed % 4 != 3
        let identity = Identity(key: keyed ? JSONKeyPath("id") : nil)
        let child = SimpleDataSource(name: "c", identity: identity, objects: (0..<random.next(12)).map { _ in object() })
        var descriptors: [SortDescriptor] = []
        if seed % 3 != 0 { descriptors.append(SortDescriptor(keyPath: JSONKeyPath("v"), ascending: seed % 2 == 0)) }
        if seed % 5 == 1 { descriptors.append(SortDescriptor(keyPath: JSONKeyPath("s"), ascending: true)) }
        let view = SectionedDataSource(name: "t", identity: identity, child: child, sectioningKey: JSONKeyPath("g"), sortDescriptors: descriptors)
        let checker = Checker()
        checker.watch(child, view)

        var oneRowEdits = 0, oneRowChangeSets = 0
        for _ in 0..<40 {
            let count = child.objects.count
            var oneRow = true
            let choice = random.next(10)
            if choice < 3 || count == 0 {
                try child.insert([object()], at: random.next(count + 1))
            } else if choice < 5 {
                try child.remove(at: random.next(count), count: 1)
            } else if choice < 7 && keyed {
                let victim = child.objects[random.next(count)]
                var replacement = victim.setting("v", to: JSON(random.next(5)))
                if random.chance(20) { replacement = replacement.setting("g", to: JSON(["x", "y", "z", "w"][random.next(4)])) }
                try child.update([replacement])
            } else if choice == 7 && count > 1 {
                try child.remove(at: random.next(count - 1), count: 2)
                oneRow = false
            } else if choice == 8 {
                try child.insert([object(), object()], at: random.next(count + 1))
                oneRow = false
            } else if choice == 9 {
                let turn = random.next(count)
                child.replaceObjects(Array(child.objects[turn...] + child.objects[..<turn]) + [object()])
                oneRow = false
            } else {
                try child.insert([object()], at: count)
            }
            #expect(checker.problems.isEmpty, "seed \(seed): \(checker.problems)")
            checker.problems = []

            // The same rows as a view computed from scratch.
            let fresh = SectionedDataSource(name: "f", identity: identity, child: child, sectioningKey: JSONKeyPath("g"), sortDescriptors: descriptors)
            #expect(view.layout.sections == fresh.layout.sections && view.sectionTitles == fresh.sectionTitles, "seed \(seed)")
            #expect(view.rowHashes == fresh.rowHashes, "seed \(seed)")

            if let changes = checker.lastChange(of: view), oneRow {
                oneRowEdits += 1
                if Self.rowCount(changes) == 1 { oneRowChangeSets += 1 }
            }
            for probe in view.allObjects.prefix(5) {
                #expect(view.indexPath(for: probe) == fresh.indexPath(for: probe))
            }
        }
        // Most one-row edits keep the sections in order; each of those is one row here, and
        // was followed in place (with an identity key: without one, updates are not made).
        #expect(oneRowEdits == 0 || oneRowChangeSets * 2 >= oneRowEdits, "seed \(seed): \(oneRowChangeSets) of \(oneRowEdits)")
        #expect(view.editsFollowed * 2 >= oneRowEdits, "seed \(seed): \(view.editsFollowed) followed of \(oneRowEdits)")
    }

    @Test func aOneRowEditOfAViewIsExactlyThatRow() throws {
        let child = SimpleDataSource(name: "c", identity: Identity(key: JSONKeyPath("id")), objects: (0..<100).map {
            ["id": JSON($0), "g": JSON("g\($0 % 3)"), "v": JSON(($0 * 37) % 100)]
        })
        let view = SectionedDataSource(name: "t", identity: child.identity, child: child, sectioningKey: JSONKeyPath("g"),
                                       sortDescriptors: [SortDescriptor(keyPath: JSONKeyPath("v"), ascending: true)])
        let recorder = Recorder().observing(view)
        defer { #expect(view.editsFollowed == 3, "each edit was followed in place") }

        try child.insert([["id": 1000, "g": "g1", "v": 50]], at: 7)
        let inserted = try #require(recorder.changes(of: "t").last)
        #expect(inserted.inserted.count == 1 && Self.rowCount(inserted) == 1 && inserted.insertedSections.isEmpty)
        let path = inserted.inserted[0]
        #expect(try view.object(at: path)["id"] == 1000)

        try child.update([["id": 1000, "g": "g1", "v": 51]])
        let updated = try #require(recorder.changes(of: "t").last)
        #expect(updated.updated.count == 1 && updated.inserted.isEmpty && updated.deleted.isEmpty && updated.moved.count <= 1)

        try child.remove(at: 7, count: 1)
        let removed = try #require(recorder.changes(of: "t").last)
        #expect(removed.deleted.count == 1 && Self.rowCount(removed) == 1)
        #expect(view.allObjects.count == 100)
    }

    @Test(arguments: 0..<300)
    func aMultiSourceFollowsItsChildrenAsTheFullRecomputeWould(seed: Int) throws {
        var random = Generator(seed: seed)
        var nextID = 0
        func object() -> JSON {
            nextID += 1
            var members: [(String, JSON)] = [("id", JSON(seed % 3 == 2 ? random.next(6) : nextID)), ("v", JSON(random.next(4)))]
            if random.chance(80) { members.append(("g", JSON(["x", "y"][random.next(2)]))) }
            return .object(members)
        }
        let identity = Identity(key: seed % 4 != 3 ? JSONKeyPath("id") : nil)
        let first = SimpleDataSource(name: "a", identity: identity, objects: (0..<random.next(6)).map { _ in object() })
        let second = SimpleDataSource(name: "b", identity: identity, objects: (0..<random.next(6)).map { _ in object() })
        let sectioned = SectionedDataSource(name: "t", identity: identity, child: second, sectioningKey: JSONKeyPath("g"),
                                            sortDescriptors: seed % 2 == 0 ? [SortDescriptor(keyPath: JSONKeyPath("v"), ascending: true)] : [])
        let preserve = seed % 2 == 1
        let children: [DataSource] = [first, sectioned, second]
        let multi = MultiDataSource(name: "m", identity: identity, sources: children, preserveSections: preserve)
        let checker = Checker()
        checker.watch(first, second, sectioned, multi)
        for _ in 0..<30 {
            let target = random.chance(50) ? first : second
            let count = target.objects.count, choice = random.next(8)
            if choice < 3 || count == 0 {
                try target.insert((0..<random.next(2) + 1).map { _ in object() }, at: random.next(count + 1))
            } else if choice < 5 {
                let index = random.next(count)
                try target.remove(at: index, count: min(count - index, random.next(2) + 1))
            } else if choice < 7 && identity.key != nil {
                try target.update([target.objects[random.next(count)].setting("v", to: JSON(random.next(4))).setting("g", to: "y")])
            } else {
                target.replaceObjects((0..<random.next(6)).map { _ in object() })
            }
            #expect(checker.problems.isEmpty, "seed \(seed): \(checker.problems)")
            checker.problems = []
            let fresh = MultiDataSource(name: "f", identity: identity, sources: children, preserveSections: preserve)
            #expect(multi.layout.sections == fresh.layout.sections && multi.sectionTitles == fresh.sectionTitles
                && multi.layout.sectionIdentities == fresh.layout.sectionIdentities, "seed \(seed)")
            #expect(multi.rowHashes == fresh.rowHashes, "seed \(seed)")
            for probe in multi.allObjects.prefix(4) { #expect(multi.indexPath(for: probe) == fresh.indexPath(for: probe)) }
        }
        #expect(multi.changesFollowed > 0, "seed \(seed)")
    }

    @Test(arguments: 0..<100)
    func aSimpleSourcesIndexFollowsItsEdits(seed: Int) throws {
        var random = Generator(seed: seed)
        var nextID = 0
        func object() -> JSON {
            nextID += 1
            return ["id": JSON(nextID), "v": JSON(random.next(3))]
        }
        let source = SimpleDataSource(name: "s", identity: Identity(key: seed % 2 == 0 ? JSONKeyPath("id") : nil), objects: (0..<20).map { _ in object() })
        _ = source.indexPath(for: source.objects[0])
        for step in 0..<60 {
            let count = source.objects.count
            let choice = random.next(4)
            if choice == 0 || count == 0 {
                try source.insert((0..<random.next(3) + 1).map { _ in object() }, at: random.next(count + 1))
            } else if choice == 1 {
                let index = random.next(count)
                try source.remove(at: index, count: min(count - index, random.next(3) + 1))
            } else if choice == 2 && source.identity.key != nil {
                try source.update([source.objects[random.next(count)].setting("v", to: JSON(random.next(3) + 10))])
            } else {
                try source.insert([object()], at: count)
            }
            // Unique identities: every edit is followed, the index is never rebuilt.
            #expect(source.hasIndex, "seed \(seed) step \(step)")
            for (item, object) in source.objects.enumerated() {
                #expect(source.indexPath(for: object) == IndexPath(section: 0, item: item))
            }
            #expect(source.indexPath(for: ["id": -1]) == nil)
        }
        // A repeated identity is not followed: the index is dropped, then rebuilt right.
        if source.objects.isEmpty { try source.insert([object()], at: 0) }
        try source.insert([source.objects[0]], at: 0)
        #expect(!source.hasIndex)
        #expect(source.indexPath(for: source.objects[0]) == IndexPath(section: 0, item: 0))
    }
}
