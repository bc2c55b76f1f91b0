#if canImport(Glibc)
import Glibc
#endif
@testable import Daemon
@testable import DataSources
import JSONKit
import WireSchema
import JSONRPC
import Testing

extension SourceRegistry {
    /// Creates a source from `createSource` params, decoded as the daemon decodes them.
    @discardableResult
    func create(_ params: JSON) throws -> DataSource {
        try create(SourceSpec.decoding(createSourceParams: params))
    }
}

extension FieldError {
    /// A member of the refusal's context (`numberOfObjects`, `parents`...).
    subscript(context key: String) -> JSON? { context.first { $0.0 == key }?.1 }
}

/// A model's refusal as the wire words it.
func worded(_ error: any Error) -> FieldError { FieldError(error as! Refusal) }

extension DataSource {
    /// `describeSource` as the daemon answers it.
    var summary: JSON { describe().json }
}

/// What a refusal looks like on the wire, whether the params or the model refused.
func wireRefusal(_ body: () throws -> Void) -> ResponseError? {
    do {
        try body()
        return nil
    } catch let refusal as FieldError {
        return refusal.responseError
    } catch let refusal as Refusal {
        return FieldError(refusal).responseError
    } catch let error as ResponseError {
        return error
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}

/// Records what sources emit, in order, as `"name.event"`, with each change set.
final class Recorder: DataSourceObserver {
    var events: [String] = []
    var changes: [(source: String, changes: ChangeSet)] = []
    /// `isFetching` as each event was delivered.
    var fetching: [Bool] = []
    var errors: [JSON] = []
    var loadStates: [(source: String, states: LoadStates)] = []
    var settlements: [MutationSettlement] = []

    func dataSource(_ source: DataSource, emitted event: DataSourceEvent) {
        if case .didChangeLoadState(let states) = event {
            // Apart from `events` and `fetching`: the seed's four events keep their sequences.
            return loadStates.append((source.name, states))
        }
        fetching.append(source.isFetching)
        switch event {
        case .willLoadData: events.append("\(source.name).will")
        case .didPartiallyLoad: events.append("\(source.name).partial")
        case .finishedLoading: events.append("\(source.name).finished")
        case .failedWithError(let error):
            events.append("\(source.name).failed")
            errors.append(error.json)
        case .didChange(let change):
            events.append("\(source.name).change")
            changes.append((source.name, change))
        case .didChangeFreshness(let stale, _):
            events.append("\(source.name).\(stale ? "stale" : "fresh")")
        case .didChangeLoadState: break
        case .didSettleMutation(let settlement):
            events.append("\(source.name).\(settlement.status.rawValue) \(settlement.mutation)")
            settlements.append(settlement)
        }
    }

    func changes(of name: String) -> [ChangeSet] { changes.filter { $0.source == name }.map(\.changes) }

    func reset() {
        events = []
        changes = []
        fetching = []
        errors = []
        loadStates = []
    }

    /// Observes `sources` as the daemon does, then forgets what creating them emitted.
    @discardableResult
    func observing(_ sources: DataSource...) -> Recorder {
        for source in sources { source.addObserver(self) }
        return self
    }
}

/// A child whose loads end when the test says, with success or failure: the shape of a
/// remote source, whose answers arrive after `fetchData` returns.
final class ManualSource: DataSource {
    var cancelCount = 0
    override var kind: String { "manual" }
    override init(name: String, identity: Identity = Identity(key: nil)) { super.init(name: name, identity: identity) }
    override func fetchData() { emit(.willLoadData) }
    override func cancelFetch(reason: CancelReason) { cancelCount += 1 }
    func partial(_ objects: [JSON]) {
        setRows(objects)
        emit(.didPartiallyLoad)
    }
    func succeed(_ objects: [JSON]) {
        setRows(objects)
        emit(.finishedLoading)
    }
    func fail(status: Int = 500) {
        emit(.failedWithError(.fetch(FetchError(kind: .http, message: "HTTP status \(status)", status: status))))
    }
    func setRows(_ objects: [JSON]) { replaceLayout(Layout(sections: [RowArray(objects)], titles: [""])) }
}

func path(_ section: Int, _ item: Int) -> IndexPath { IndexPath(section: section, item: item) }

/// A change set from literals, for exact comparisons.
func changeSet(
    deletedSections: [Int] = [], insertedSections: [Int] = [], deleted: [IndexPath] = [], inserted: [IndexPath] = [],
    moved: [(IndexPath, IndexPath)] = [], updated: [IndexPath] = []
) -> ChangeSet {
    var changes = ChangeSet()
    changes.deletedSections = deletedSections
    changes.insertedSections = insertedSections
    changes.deleted = IndexPathList(deleted)
    changes.inserted = IndexPathList(inserted)
    changes.moved = moved.map { ChangeSet.Move(from: $0.0, to: $0.1) }
    changes.updated = IndexPathList(updated)
    return changes
}

/// A small deterministic generator, so that every seed replays.
struct Generator {
    var state: UInt64
    init(seed: Int) { state = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 &+ 1 }
    mutating func next(_ bound: Int) -> Int {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Int((state >> 33) % UInt64(max(1, bound)))
    }
    mutating func chance(_ percent: Int) -> Bool { next(100) < percent }
}

/// Applies a change set the way a list view applies a batch update, to the old layout,
/// taking only what a client would be sent from the new one (inserted and updated rows),
/// and reports every way the change set fails to describe the change.
enum ChangeSetOracle {
    static func problems(_ changes: ChangeSet, old: Layout, new: Layout, identity: Identity) -> [String] {
        var problems: [String] = []
        func check(_ condition: Bool, _ message: @autoclosure () -> String) { if !condition { problems.append(message()) } }
        func valid(_ path: IndexPath, in layout: Layout) -> Bool {
            layout.sections.indices.contains(path.section) && layout.sections[path.section].indices.contains(path.item)
        }

        // Sections: the survivors of the old ones are, in order, the new ones not inserted.
        check(changes.deletedSections == Array(Set(changes.deletedSections)).sorted(), "deletedSections not sorted and unique")
        check(changes.insertedSections == Array(Set(changes.insertedSections)).sorted(), "insertedSections not sorted and unique")
        check(changes.deletedSections.allSatisfy(old.sections.indices.contains), "deletedSections out of range")
        check(changes.insertedSections.allSatisfy(new.sections.indices.contains), "insertedSections out of range")
        let keptOld = old.sections.indices.filter { !changes.deletedSections.contains($0) }
        let keptNew = new.sections.indices.filter { !changes.insertedSections.contains($0) }
        guard keptOld.count == keptNew.count else {
            return problems + ["\(keptOld.count) sections kept but \(keptNew.count) sections remain"]
        }
        for (from, to) in zip(keptOld, keptNew) {
            check(old.sectionIdentities[from] == new.sectionIdentities[to], "section \(from) became \(to) with another identity")
        }

        // Rows: every old row is deleted, moved away or stays; every new row is inserted,
        // moved in or stayed; each once.
        let removed = changes.deleted + changes.moved.map(\.from)
        let added = changes.inserted + changes.moved.map(\.to)
        check(Set(removed).count == removed.count, "an old row is deleted or moved twice")
        check(Set(added).count == added.count, "a new row is inserted or moved to twice")
        check(removed.allSatisfy { valid($0, in: old) }, "deleted or moved.from out of range")
        check(added.allSatisfy { valid($0, in: new) }, "inserted or moved.to out of range")
        check(
            Array(changes.deleted) == changes.deleted.sorted() && Array(changes.inserted) == changes.inserted.sorted()
                && Array(changes.updated) == changes.updated.sorted(),
            "deleted, inserted, updated not in order")
        guard problems.isEmpty else { return problems }
        let removedSet = Set(removed), addedSet = Set(added)
        for section in changes.deletedSections {
            check(
                old.sections[section].indices.allSatisfy { removedSet.contains(path(section, $0)) },
                "a row of deleted section \(section) stays")
        }
        for section in changes.insertedSections {
            check(
                new.sections[section].indices.allSatisfy { addedSet.contains(path(section, $0)) },
                "a row of inserted section \(section) is neither inserted nor moved in")
        }

        var result: [[JSON?]] = new.sections.map { [JSON?](repeating: nil, count: $0.count) }
        for (from, to) in zip(keptOld, keptNew) {
            let staying = old.sections[from].indices.filter { !removedSet.contains(path(from, $0)) }.map { old.sections[from][$0] }
            let slots = new.sections[to].indices.filter { !addedSet.contains(path(to, $0)) }
            guard staying.count == slots.count else {
                problems.append("section \(from) → \(to): \(staying.count) rows stay for \(slots.count) places")
                continue
            }
            for (object, slot) in zip(staying, slots) { result[to][slot] = object }
        }
        for move in changes.moved { result[move.to.section][move.to.item] = old.sections[move.from.section][move.from.item] }
        for path in changes.inserted { result[path.section][path.item] = new.sections[path.section][path.item] }
        let addedOnly = Set(changes.inserted)
        for path in changes.updated {
            check(!addedOnly.contains(path), "updated \(path) is an inserted row")
            check(valid(path, in: new), "updated \(path) out of range")
            if valid(path, in: new) {
                check(result[path.section][path.item] != new.sections[path.section][path.item], "updated \(path) did not change")
                result[path.section][path.item] = new.sections[path.section][path.item]
            }
        }
        guard problems.isEmpty else { return problems }
        for (section, objects) in new.sections.enumerated() {
            for (item, object) in objects.enumerated() {
                guard let applied = result[section][item] else {
                    problems.append("\(path(section, item)) left empty")
                    continue
                }
                check(
                    identity.of(applied) == identity.of(object),
                    "\(path(section, item)) holds \(applied), expected the identity of \(object)")
                check(applied == object, "\(path(section, item)) holds \(applied), expected \(object) (an update is missing)")
            }
        }
        return problems
    }
}

/// The seeds of a randomized test: `0..<count`, or a part of them when
/// `DATASOURCED_SEED_DIVISOR` is N (`scripts/sanitizers.sh` sets 10): under a sanitizer a seed
/// costs many times more, and what the sanitizer looks for (memory and thread errors) the first
/// seeds reach as well as the rest. The plain run covers every seed.
func seeds(_ count: Int) -> Range<Int> {
    let divisor = ProcessInfoLite.integer("DATASOURCED_SEED_DIVISOR").map { min(max($0, 1), count) } ?? 1
    return 0..<max(1, count / divisor)
}

/// An environment variable read as an integer, without Foundation.
enum ProcessInfoLite {
    static func integer(_ name: String) -> Int? {
        getenv(name).flatMap { Int(String(cString: $0)) }
    }
}
