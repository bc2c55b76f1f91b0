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

    @Test(arguments: seeds(300))
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
        let view = SectionedDataSource(
            name: "t", identity: identity, child: child, sectioningKey: JSONKeyPath("g"), sortDescriptors: descriptors)
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
            let fresh = SectionedDataSource(
                name: "f", identity: identity, child: child, sectioningKey: JSONKeyPath("g"), sortDescriptors: descriptors)
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
        #expect(view.changesFollowed * 2 >= oneRowEdits, "seed \(seed): \(view.changesFollowed) followed of \(oneRowEdits)")
    }

    @Test func aOneRowEditOfAViewIsExactlyThatRow() throws {
        let child = SimpleDataSource(
            name: "c", identity: Identity(key: JSONKeyPath("id")),
            objects: (0..<100).map {
                ["id": JSON($0), "g": JSON("g\($0 % 3)"), "v": JSON(($0 * 37) % 100)]
            })
        let view = SectionedDataSource(
            name: "t", identity: child.identity, child: child, sectioningKey: JSONKeyPath("g"),
            sortDescriptors: [SortDescriptor(keyPath: JSONKeyPath("v"), ascending: true)])
        let recorder = Recorder().observing(view)
        defer { #expect(view.changesFollowed == 3, "each edit was followed in place") }

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

    /// Whether `view` has the rows, titles and hashes of a view computed from scratch over its child.
    /// After a change of the view's child: every change set the view sent applied cleanly,
    /// the view is what a recompute gives, and it sent one change set for the child's
    /// change, none when its rows did not change.
    static func checkAfterChange(
        _ view: SectionedDataSource, checker: Checker, recorder: Recorder,
        before: (changes: Int, layout: Layout), context: String
    ) {
        #expect(checker.problems.isEmpty, "\(context): \(checker.problems)")
        checker.problems = []
        #expect(matchesRecompute(view), "\(context)")
        let viewChanged = view.layout.sections != before.layout.sections || view.sectionTitles != before.layout.titles
        #expect(recorder.changes(of: "t").count - before.changes == (viewChanged ? 1 : 0), "\(context)")
    }

    static func matchesRecompute(_ view: SectionedDataSource) -> Bool {
        let fresh = SectionedDataSource(
            name: "f", identity: view.identity, child: view.child, sectioningKey: view.sectioningKey,
            sortDescriptors: view.sortDescriptors)
        defer { view.child.removeObserver(fresh) }
        return view.layout.sections == fresh.layout.sections && view.sectionTitles == fresh.sectionTitles
            && view.rowHashes == fresh.rowHashes
    }

    /// A remote source's refresh replaces its rows at once (`replaceLayout`): a few deletions,
    /// insertions, updates and moves in one change set, with a trailing loading row while
    /// more pages remain. A sorted, sectioned view follows a small such change in place and
    /// emits one change set for it, as the full recompute would; a change of more than 64
    /// rows, or of the placeholder, is recomputed. Some seeds use a simple child, replaced
    /// and edited directly by turns (its rows are kept from its first replacement on).
    @Test(arguments: seeds(300))
    func aSortedSectionedViewFollowsAChildsGeneralChangesAsTheFullRecomputeWould(seed: Int) throws {
        var random = Generator(seed: seed)
        var nextID = 0
        let groups: [JSON] = ["x", "y", "z", "w"]
        func object() -> JSON {
            nextID += 1
            var members: [(String, JSON)] = [("id", JSON(nextID)), ("v", JSON(random.next(50)))]
            if random.chance(90) { members.append(("g", groups[random.next(groups.count)])) }
            return .object(members)
        }
        let keyed = seed % 4 != 3
        let identity = Identity(key: keyed ? JSONKeyPath("id") : nil)
        let simple = seed % 5 == 4
        var objects = (0..<25 + random.next(30)).map { _ in object() }
        var loading = !simple && seed % 3 != 0
        func rows() -> [JSON] { objects + (loading ? [Placeholder.loadingRow] : []) }
        let manual = ManualSource(name: "c", identity: identity)
        let child: DataSource = simple ? SimpleDataSource(name: "c", identity: identity, objects: objects) : manual
        func replace() {
            if let child = child as? SimpleDataSource { child.replaceObjects(rows()) } else { manual.setRows(rows()) }
        }
        replace()
        var descriptors: [SortDescriptor] = []
        if seed % 3 != 0 { descriptors.append(SortDescriptor(keyPath: JSONKeyPath("v"), ascending: seed % 2 == 0)) }
        if seed % 5 == 1 { descriptors.append(SortDescriptor(keyPath: JSONKeyPath("id"), ascending: true)) }
        let view = SectionedDataSource(
            name: "t", identity: identity, child: child, sectioningKey: JSONKeyPath("g"), sortDescriptors: descriptors)
        let checker = Checker()
        checker.watch(view)
        let recorder = Recorder().observing(view)

        var smallChanges = 0, smallChangesFollowed = 0
        for step in 0..<12 {
            let before = (
                revision: child.revision, followed: view.changesFollowed, changes: recorder.changes(of: "t").count, layout: view.layout
            )
            var small = true
            let choice = random.next(12)
            if choice == 0, !simple {
                loading.toggle()  // the placeholder itself changes
                small = false
                replace()
            } else if choice == 1 {
                objects = (0..<70 + random.next(20)).map { _ in object() }
                small = false
                replace()
            } else if simple, choice == 2, let simple = child as? SimpleDataSource {
                // A direct edit of one row, between replacements.
                if objects.isEmpty || random.chance(50) {
                    try simple.insert([object()], at: random.next(objects.count + 1))
                } else {
                    try simple.remove(at: random.next(objects.count), count: 1)
                }
                objects = Array(simple.objects)
            } else {
                for _ in 0..<1 + random.next(5) {
                    let count = objects.count
                    switch random.next(4) {
                    case 0 where count > 0:
                        objects.remove(at: random.next(count))
                    case 1 where count > 1:
                        let row = objects.remove(at: random.next(count))
                        objects.insert(row, at: random.next(count))
                    case 2 where count > 0 && keyed:
                        let index = random.next(count)
                        var replacement = objects[index].setting("v", to: JSON(random.next(50)))
                        if random.chance(20) { replacement = replacement.setting("g", to: groups[random.next(groups.count)]) }
                        objects[index] = replacement
                    default:
                        objects.insert(object(), at: random.next(count + 1))
                    }
                }
                replace()
            }
            Self.checkAfterChange(
                view, checker: checker, recorder: recorder, before: (before.changes, before.layout), context: "seed \(seed) step \(step)")
            if small, child.revision > before.revision {
                smallChanges += 1
                if view.changesFollowed > before.followed { smallChangesFollowed += 1 }
            }
        }
        // Most small changes keep the sections in order, and were followed in place (the
        // first change of a simple child is recomputed: its rows were not kept until then).
        #expect(smallChangesFollowed * 2 >= smallChanges, "seed \(seed): \(smallChangesFollowed) of \(smallChanges) followed")
    }

    /// A refresh that deletes one row, inserts one and updates one, above a trailing loading
    /// row: the view follows it in place, and its change set is those three rows.
    @Test func aRefreshOfThreeRowsIsThoseThreeRowsInTheView() throws {
        let identity = Identity(key: JSONKeyPath("id"))
        let child = ManualSource(name: "c", identity: identity)
        var objects: [JSON] = (0..<100).map { ["id": JSON($0), "g": JSON("g\($0 % 3)"), "v": JSON(($0 * 37) % 100)] }
        child.setRows(objects + [Placeholder.loadingRow])
        let view = SectionedDataSource(
            name: "t", identity: identity, child: child, sectioningKey: JSONKeyPath("g"),
            sortDescriptors: [SortDescriptor(keyPath: JSONKeyPath("v"), ascending: true)])
        let recorder = Recorder().observing(view)

        objects.remove(at: 40)
        objects.insert(["id": 1000, "g": "g1", "v": 50], at: 10)
        let updated = try #require(objects.firstIndex { $0["id"] == 69 })
        objects[updated] = ["id": 69, "g": "g0", "v": 3]  // was v 53: it moves up its section
        child.setRows(objects + [Placeholder.loadingRow])

        #expect(view.changesFollowed == 1)
        let changes = try #require(recorder.changes(of: "t").last)
        #expect(recorder.changes(of: "t").count == 1)
        try #require(
            changes.deleted.count == 1 && changes.inserted.count == 1 && changes.updated.count == 1 && changes.moved.count == 1,
            "\(changes)")
        #expect(changes.insertedSections.isEmpty && changes.deletedSections.isEmpty)
        #expect(try view.object(at: changes.inserted[0])["id"] == 1000)
        #expect(try view.object(at: changes.updated[0]) == ["id": 69, "g": "g0", "v": 3])
        #expect(Self.matchesRecompute(view))
        #expect(view.allObjects.last == Placeholder.loadingRow)
    }

    /// A live paginated list through a fake loader: pages loaded, then refreshed while the
    /// server's rows change a little (each refresh replaces the rows once with the
    /// difference), and further pages appended, with the trailing loading row in place.
    /// In even seeds the sections are bands of the sort key (their order cannot change), and
    /// every change is followed; in odd ones they are not, and a change that reorders them
    /// is recomputed.
    @Test(arguments: seeds(100))
    func aSortedSectionedViewFollowsAPaginatedListsRefreshesAndPages(seed: Int) throws {
        var random = Generator(seed: seed)
        let banded = seed % 2 == 0
        var nextID = 0
        func valued(_ object: JSON) -> JSON {
            let value = random.next(100)
            return object.setting("v", to: JSON(value)).setting(
                "g", to: JSON(["low", "mid", "high"][banded ? value / 34 : random.next(3)]))
        }
        func object() -> JSON {
            nextID += 1
            return valued(["id": JSON(nextID)])
        }
        let (source, loader, _) = try PaginatedStateMachineTests.source()  // pages of 2
        var server = (0..<80).map { _ in object() }
        var answered = 0
        /// Answers every request made so far, and those they lead to, from the server's rows now.
        func answer() {
            while answered < loader.pending.count {
                let query = loader.pending[answered].request.url.split(separator: "?").last ?? ""
                let page = query.split(separator: "&").first { $0.hasPrefix("page=") }.flatMap { Int($0.dropFirst(5)) } ?? 1
                loader.respond(answered, json: .array(Array(server.dropFirst((page - 1) * 2).prefix(2))))
                answered += 1
            }
        }
        source.fetchData()
        answer()
        for _ in 0..<6 + random.next(6) {
            _ = source.fetchNextPage()
            answer()
        }
        let view = SectionedDataSource(
            name: "t", identity: source.identity, child: source, sectioningKey: JSONKeyPath("g"),
            sortDescriptors: [SortDescriptor(keyPath: JSONKeyPath("v"), ascending: seed % 4 < 2)])
        let checker = Checker()
        checker.watch(view)
        let recorder = Recorder().observing(view)
        #expect(source.allObjects.last.flatMap(Placeholder.kind(of:)) == .loading)

        var changes = 0, followed = 0
        for step in 0..<8 {
            let before = (
                revision: source.revision, followed: view.changesFollowed, changes: recorder.changes(of: "t").count, layout: view.layout
            )
            if random.chance(20) {
                _ = source.fetchNextPage()
            } else {
                let loaded = source.allObjects.count - 1
                for _ in 0..<1 + random.next(4) {
                    switch random.next(4) {
                    case 0: server.remove(at: random.next(loaded))
                    case 1: server.insert(object(), at: random.next(loaded))
                    case 2:
                        let index = random.next(loaded)
                        server[index] = valued(server[index])
                    default:
                        let row = server.remove(at: random.next(loaded))
                        server.insert(row, at: random.next(loaded))
                    }
                }
                #expect(source.refresh { _ in })
            }
            answer()
            Self.checkAfterChange(
                view, checker: checker, recorder: recorder, before: (before.changes, before.layout), context: "seed \(seed) step \(step)")
            if source.revision > before.revision {
                changes += 1
                if view.changesFollowed > before.followed { followed += 1 }
            }
        }
        #expect(banded ? followed == changes : followed > 0, "seed \(seed): \(followed) of \(changes) followed")
    }

    @Test(arguments: seeds(300))
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
        let sectioned = SectionedDataSource(
            name: "t", identity: identity, child: second, sectioningKey: JSONKeyPath("g"),
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
            #expect(
                multi.layout.sections == fresh.layout.sections && multi.sectionTitles == fresh.sectionTitles
                    && multi.layout.sectionIdentities == fresh.layout.sectionIdentities, "seed \(seed)")
            #expect(multi.rowHashes == fresh.rowHashes, "seed \(seed)")
            for probe in multi.allObjects.prefix(4) { #expect(multi.indexPath(for: probe) == fresh.indexPath(for: probe)) }
        }
        #expect(multi.changesFollowed > 0, "seed \(seed)")
    }

    @Test(arguments: seeds(100))
    func aSimpleSourcesIndexFollowsItsEdits(seed: Int) throws {
        var random = Generator(seed: seed)
        var nextID = 0
        func object() -> JSON {
            nextID += 1
            return ["id": JSON(nextID), "v": JSON(random.next(3))]
        }
        let source = SimpleDataSource(
            name: "s", identity: Identity(key: seed % 2 == 0 ? JSONKeyPath("id") : nil), objects: (0..<20).map { _ in object() })
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
