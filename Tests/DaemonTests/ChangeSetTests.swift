import Basics
@testable import DataSources
import JSONKit
import Testing

/// Applying a change set to the old layout must give the new one.
@Suite struct ChangeSetOracleTests {
    /// Rows `{"id": n % 7, "v": n}`: few identities, so duplicates, updates and moves are common.
    static func row(_ n: Int) -> JSON { ["id": JSON(n % 7), "v": JSON(n)] }

    static func randomLayout(_ random: inout Generator, sectionPool: [String]) -> Layout {
        var titles: [JSON] = [], sections: [[JSON]] = []
        for title in sectionPool where random.chance(70) {
            titles.append(JSON(title))
            sections.append((0..<random.next(7)).map { _ in row(random.next(14)) })
        }
        // Shuffle the sections now and then, so matched sections change order.
        if random.chance(30), sections.count > 1 {
            let a = random.next(sections.count), b = random.next(sections.count)
            sections.swapAt(a, b)
            titles.swapAt(a, b)
        }
        return Layout(sections: sections.map { RowArray($0) }, titles: titles)
    }

    @Test(arguments: seeds(500))
    func applyingTheChangesGivesTheNewLayout(seed: Int) {
        var random = Generator(seed: seed)
        // Some seeds repeat a section identity, which must pair first to first.
        let pool = seed % 5 == 0 ? ["a", "b", "a", "c"] : ["a", "b", "c", "d", "e"]
        let old = Self.randomLayout(&random, sectionPool: pool)
        var new = Self.randomLayout(&random, sectionPool: pool)
        if seed % 3 == 0 {
            // A small edit of the old layout, the common case (head and tail unchanged).
            new = old
            if !new.sections.isEmpty {
                let section = random.next(new.sections.count)
                new.sections[section].insert(Self.row(random.next(14)), at: random.next(new.sections[section].count + 1))
            }
        }
        for identity in [Identity(key: JSONKeyPath("id")), Identity(key: nil)] {
            let changes = ChangeSet.between(old: old, new: new, identity: identity)
            let problems = ChangeSetOracle.problems(changes, old: old, new: new, identity: identity)
            #expect(problems.isEmpty, "\(problems)\nold \(old.sections) \(old.titles)\nnew \(new.sections) \(new.titles)\n\(changes)")
        }
    }

    @Test func noChangeIsEmpty() {
        let layout = Layout(sections: [[1, 2, 3], [4]], titles: ["a", "b"])
        #expect(ChangeSet.between(old: layout, new: layout, identity: Identity(key: nil)).isEmpty)
    }

    @Test func oneObjectMovedToTheFrontIsOneMove() {
        let old = Layout(sections: [[1, 2, 3, 4, 5]], titles: [""]), new = Layout(sections: [[5, 1, 2, 3, 4]], titles: [""])
        #expect(ChangeSet.between(old: old, new: new, identity: Identity(key: nil)) == changeSet(moved: [(path(0, 4), path(0, 0))]))
    }

    @Test func reversingMovesAllButOne() {
        let old = Layout(sections: [RowArray(Array(0..<6).map { JSON($0) })], titles: [""])
        let new = Layout(sections: [RowArray(Array((0..<6).reversed()).map { JSON($0) })], titles: [""])
        #expect(ChangeSet.between(old: old, new: new, identity: Identity(key: nil)).moved.count == 5)
    }

    @Test func anUpdateKeepsItsPlaceAndIsReportedInNewCoordinates() {
        let identity = Identity(key: JSONKeyPath("id"))
        let old = Layout(sections: [[["id": 1], ["id": 2, "v": 0]]], titles: [""])
        let new = Layout(sections: [[["id": 0], ["id": 1], ["id": 2, "v": 1]]], titles: [""])
        #expect(ChangeSet.between(old: old, new: new, identity: identity) == changeSet(inserted: [path(0, 0)], updated: [path(0, 2)]))
    }

    @Test func anObjectChangingSectionIsAMoveEvenInRowOrder() {
        // Flat row order is unchanged, but the object crossed from section a to section b.
        let old = Layout(sections: [["x", "y"], ["z"]], titles: ["a", "b"])
        let new = Layout(sections: [["x"], ["y", "z"]], titles: ["a", "b"])
        #expect(ChangeSet.between(old: old, new: new, identity: Identity(key: nil)) == changeSet(moved: [(path(0, 1), path(1, 0))]))
    }

    @Test func sectionsThatSwapPlacesAreDeletedAndInserted() {
        let old = Layout(sections: [["x"], ["y"], ["z"]], titles: ["a", "b", "c"])
        let new = Layout(sections: [["x"], ["z"], ["y"]], titles: ["a", "c", "b"])
        let changes = ChangeSet.between(old: old, new: new, identity: Identity(key: nil))
        #expect(changes.deletedSections.count == 1 && changes.insertedSections.count == 1)
        #expect(ChangeSetOracle.problems(changes, old: old, new: new, identity: Identity(key: nil)).isEmpty)
    }

    @Test func duplicatesPairUp() {
        let identity = Identity(key: nil)
        // The unchanged tail keeps the last two "a"s; the first one leaves.
        var old = Layout(sections: [["a", "b", "a", "a"]], titles: [""]), new = Layout(sections: [["b", "a", "a"]], titles: [""])
        #expect(ChangeSet.between(old: old, new: new, identity: identity) == changeSet(deleted: [path(0, 0)]))
        // Between the unchanged head and tail, duplicates pair first to first.
        old = Layout(sections: [["a", "b", "c", "c", "a"]], titles: [""])
        new = Layout(sections: [["a", "c", "d", "c", "b"]], titles: [""])
        let changes = ChangeSet.between(old: old, new: new, identity: identity)
        #expect(changes == changeSet(deleted: [path(0, 4)], inserted: [path(0, 2)], moved: [(path(0, 1), path(0, 4))]))
        #expect(ChangeSetOracle.problems(changes, old: old, new: new, identity: identity).isEmpty)
    }

    @Test func manyDuplicatesStayLinear() {
        let old = Layout(sections: [RowArray([JSON](repeating: ["same": true], count: 20_000))], titles: [""])
        let new = Layout(sections: [RowArray(old.sections[0].dropFirst())], titles: [""])
        let changes = ChangeSet.between(old: old, new: new, identity: Identity(key: nil))
        #expect(changes.deleted.count == 1 && changes.inserted.isEmpty && changes.moved.isEmpty)
    }

    /// Rows are matched by hash first and checked afterwards; when hashes collide, the
    /// check fails and the exact matching runs. It must pair the same rows as with hashes
    /// that never collide: a chain holding several identities still gives each new row the
    /// first unmatched old row of its own.
    @Test(arguments: seeds(300))
    func collidingHashesGiveTheSameChanges(seed: Int) {
        var random = Generator(seed: seed)
        let pool = ["a", "b", "c"]
        let old = Self.randomLayout(&random, sectionPool: pool), new = Self.randomLayout(&random, sectionPool: pool)
        for identity in [Identity(key: JSONKeyPath("id")), Identity(key: nil)] {
            let expected = ChangeSet.between(old: old, new: new, identity: identity)
            // Two buckets: most pairs matched by hash alone are of other identities.
            func colliding(_ layout: Layout) -> [RowArray<Int>] { identity.hashes(of: layout.sections).map { RowArray($0.map { $0 & 1 }) } }
            let changes = ChangeSet.between(old: old, oldHashes: colliding(old), new: new, newHashes: colliding(new), identity: identity)
            #expect(changes == expected, "seed \(seed), identity \(String(describing: identity.key))")
        }
    }

    /// Lists long enough that hashing and checking run on all cores, edited at random
    /// places, with updates and moves; with real and with colliding hashes.
    @Test(arguments: 0..<6)
    func longListsGiveChangesTheOracleAccepts(seed: Int) {
        var random = Generator(seed: seed)
        let count = 3 * Parallel.threshold
        var rows = (0..<count).map { n -> JSON in ["id": JSON(n), "v": JSON(n % 5)] }
        let old = Layout(sections: [RowArray(rows)], titles: [""])
        for _ in 0..<(count / 50) {
            switch random.next(4) {
            case 0: rows.remove(at: random.next(rows.count))
            case 1: rows.insert(["id": JSON(count + random.next(count)), "v": 0], at: random.next(rows.count + 1))
            case 2: rows[random.next(rows.count)] = ["id": JSON(random.next(count)), "v": 9]  // an update, or a duplicate identity
            default: rows.swapAt(random.next(rows.count), random.next(rows.count))
            }
        }
        let new = Layout(sections: [RowArray(rows)], titles: [""])
        for identity in [Identity(key: JSONKeyPath("id")), Identity(key: nil)] {
            let changes = ChangeSet.between(old: old, new: new, identity: identity)
            let problems = ChangeSetOracle.problems(changes, old: old, new: new, identity: identity)
            #expect(problems.isEmpty, "seed \(seed): \(problems.prefix(5))")
            func colliding(_ layout: Layout) -> [RowArray<Int>] {
                identity.hashes(of: layout.sections).map { RowArray($0.map { $0 & 255 }) }
            }
            let exact = ChangeSet.between(old: old, oldHashes: colliding(old), new: new, newHashes: colliding(new), identity: identity)
            #expect(exact == changes, "seed \(seed)")
        }
    }
}

/// Sources keep identity hashes, diff between an unchanged head and tail, and follow their
/// children incrementally: random edits through a simple → sectioned → multi chain must
/// give change sets the oracle accepts at every level, and indexes a fresh search agrees with.
@Suite struct SourceChangeSetTests {
    final class Snapshots: DataSourceObserver {
        var before: [ObjectIdentifier: Layout] = [:]
        var problems: [String] = []
        func dataSource(_ source: DataSource, emitted event: DataSourceEvent) {
            guard case .didChange(let changes) = event else { return }
            let old = before[ObjectIdentifier(source)] ?? .empty
            problems += ChangeSetOracle.problems(changes, old: old, new: source.layout, identity: source.identity).map {
                "\(source.name): \($0)"
            }
            before[ObjectIdentifier(source)] = source.layout
        }
        func remember(_ sources: [DataSource]) { for source in sources { before[ObjectIdentifier(source)] = source.layout } }
    }

    static func firstIndexPath(of object: JSON, in source: DataSource) -> IndexPath? {
        let key = source.identity.of(object)
        for (section, objects) in source.layout.sections.enumerated() {
            if let item = objects.firstIndex(where: { source.identity.of($0) == key }) { return path(section, item) }
        }
        return nil
    }

    @Test(arguments: seeds(120))
    func randomEditsThroughAChain(seed: Int) throws {
        var random = Generator(seed: seed)
        func objects(_ count: Int) -> [JSON] {
            (0..<count).map { _ in
                var members: [(String, JSON)] = [("id", JSON(random.next(12))), ("v", JSON(random.next(3)))]
                if random.chance(80) { members.append(("g", JSON(["x", "y", "z"][random.next(3)]))) }
                return .object(members)
            }
        }
        let registry = SourceRegistry()
        let identityKey: JSON = seed % 2 == 0 ? "id" : .null
        let simple =
            try registry.create(["name": "s", "kind": "simple", "identityKey": identityKey, "objects": .array(objects(random.next(10)))])
            as! SimpleDataSource
        let other =
            try registry.create(["name": "o", "kind": "simple", "identityKey": identityKey, "objects": .array(objects(3))])
            as! SimpleDataSource
        var sectionedParams: [(String, JSON)] = [("name", "t"), ("kind", "sectioned"), ("source", "s"), ("sectioningKey", "g")]
        if seed % 3 != 0 { sectionedParams.append(("sortDescriptors", [["keyPath": "v", "ascending": JSON(seed % 4 == 0)]])) }
        let sectioned = try registry.create(.object(sectionedParams))
        let multi = try registry.create([
            "name": "m", "kind": "multi", "sources": ["t", "o", "s"], "preserveSections": JSON(seed % 2 == 1),
        ])
        let all: [DataSource] = [simple, other, sectioned, multi]
        let snapshots = Snapshots()
        snapshots.remember(all)
        for source in all { source.addObserver(snapshots) }

        for _ in 0..<10 {
            let target = random.chance(75) ? simple : other
            let count = target.objects.count
            switch random.next(5) {
            case 0: try target.insert(objects(random.next(4)), at: random.next(count + 1))
            case 1 where count > 0:
                let index = random.next(count)
                try target.remove(at: index, count: random.next(count - index) + 1)
            case 2 where count > 0 && target.identity.key != nil:
                let victim = target.objects[random.next(count)]
                try target.update([victim.setting("v", to: JSON(random.next(3))).setting("g", to: "z")])
            case 3: target.replaceObjects(target.objects + objects(random.next(3)))
            default: target.replaceObjects(objects(random.next(10)))
            }
            #expect(snapshots.problems.isEmpty, "\(snapshots.problems)")
            snapshots.problems = []
            for source in all {
                for probe in source.allObjects + objects(4) {
                    #expect(source.indexPath(for: probe) == Self.firstIndexPath(of: probe, in: source), "\(source.name) \(probe)")
                }
            }
        }
    }
}

/// A paginated list replaces its tail (a page and the loading row after it) through a
/// shortcut when rows were only added or only removed between rows it kept: the change set
/// must be the one `ChangeSet.between` gives, exactly.
@Suite struct TailShortcutTests {
    @Test func theShortcutGivesWhatTheDiffGives() {
        var taken = 0
        for seed in 0..<600 where check(seed: seed) { taken += 1 }
        #expect(taken > 200, "the shortcut was taken in \(taken) of 600 cases")
    }

    /// Whether the shortcut was taken.
    private func check(seed: Int) -> Bool {
        var random = Generator(seed: seed)
        let identity = Identity(key: random.chance(50) ? JSONKeyPath("id") : nil)
        // Few identities and values, so that equal values in distinct storage, rows of one
        // identity with other values, and repeated rows all come up.
        let pool: [JSON] = (0..<12).map { _ in ["id": JSON(random.next(5)), "v": JSON(random.next(2))] } + [Placeholder.loadingRow]
        let old = (0..<random.next(6)).map { _ in pool[random.next(pool.count)] }
        var new = old
        switch random.next(3) {
        case 0:  // rows added at one place
            let at = random.next(new.count + 1)
            new.insert(
                contentsOf: (0..<random.next(5)).map { _ in
                    random.chance(70) ? pool[random.next(pool.count)] : ["id": JSON(random.next(5)), "v": 0]
                }, at: at)
        case 1:  // rows removed from one place
            let start = random.next(new.count + 1), length = random.next(new.count - start + 1)
            new.removeSubrange(start..<start + length)
        default:  // anything
            new = (0..<random.next(6)).map { _ in pool[random.next(pool.count)] }
        }
        let oldHashes = identity.hashes(of: old), newHashes = identity.hashes(of: new)
        let diff = ChangeSet.between(
            old: Layout(sections: [RowArray(old)], titles: [""]), oldHashes: [RowArray(oldHashes)],
            new: Layout(sections: [RowArray(new)], titles: [""]), newHashes: [RowArray(newHashes)], identity: identity)
        guard let shortcut = DataSource.rowsAddedOrRemovedOnly(old: old, oldHashes: oldHashes, new: new, newHashes: newHashes) else {
            return false
        }
        #expect(shortcut == diff, "seed \(seed): old \(old), new \(new)")
        return true
    }

    @Test func aPageBeforeTheLoadingRowTakesTheShortcut() {
        let identity = Identity(key: JSONKeyPath("id"))
        let old = [Placeholder.loadingRow]
        let new: [JSON] = [["id": 1], ["id": 2], Placeholder.loadingRow]
        let shortcut = DataSource.rowsAddedOrRemovedOnly(
            old: old, oldHashes: identity.hashes(of: old), new: new, newHashes: identity.hashes(of: new))
        #expect(shortcut?.inserted == [IndexPath(section: 0, item: 0), IndexPath(section: 0, item: 1)] && shortcut?.deleted == [])
        let both = DataSource.rowsAddedOrRemovedOnly(
            old: [["id": 3], Placeholder.loadingRow], oldHashes: [1, 2], new: [["id": 4], Placeholder.loadingRow], newHashes: [3, 2])
        #expect(both == nil, "a row removed and another added: the diff decides")
    }
}
