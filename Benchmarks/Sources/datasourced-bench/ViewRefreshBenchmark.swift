// A live list's refresh under a sorted, sectioned view: what following the child's change
// in place saves over recomputing the view. See BENCHMARKS-HISTORY.md, "Issue 14: a sectioned view
// following a live child".

import DataSources
import JSONKit

/// Notes the time at which the child's change reaches it: observers are called in the order
/// they registered, so stamps registered before, between and after two views split each
/// refresh into the child's own work and each view's.
final class Stamp: DataSourceObserver {
    var time = 0.0
    func dataSource(_ source: DataSource, emitted event: DataSourceEvent) {
        if case .didChange = event { time = Clock.now() }
    }
}

/// Counts the rows of each change set a view emits.
final class ChangeRows: DataSourceObserver {
    var rows: [Int] = []
    func dataSource(_ source: DataSource, emitted event: DataSourceEvent) {
        guard case .didChange(let changes) = event else { return }
        rows.append(
            changes.deleted.count + changes.inserted.count + changes.moved.count + changes.updated.count
                + changes.insertedSections.count + changes.deletedSections.count)
    }
}

/// An N-object simple source replaced, refresh after refresh, by its rows with one deleted,
/// one inserted and one updated at random places (a general change set, as a remote source's
/// refresh makes), with two sorted, sectioned views over it: one recomputing on every change
/// (`followsChanges` off: what every such change cost before), one following it in place.
/// Both see the same refreshes in one run; their times are told apart by stamps.
func viewRefreshBenchmark(_ options: Options) {
    let count = options.int("--objects", default: 300_000)
    let refreshes = options.int("--refreshes", default: 20)
    let groups = options.int("--groups", default: 100)
    let identity = Identity(key: JSONKeyPath("id"))
    let (child, createSeconds) = timed {
        SimpleDataSource(name: "big", identity: identity, objects: makeObjects(0..<count, groups: groups))
    }
    say(
        "viewrefresh: a simple source of \(count) objects (created in \(fixed(createSeconds * 1000)) ms), \(refreshes) refreshes each replacing the rows"
    )
    say(
        "  with one deleted, one inserted and one updated at random places; two views (group, sorted by score): one recomputing, one following"
    )

    let start = Stamp(), between = Stamp(), end = Stamp()
    func view(_ name: String) -> SectionedDataSource {
        SectionedDataSource(
            name: name, identity: identity, child: child, sectioningKey: JSONKeyPath("group"),
            sortDescriptors: [SortDescriptor(keyPath: JSONKeyPath("score"), ascending: true)])
    }
    child.addObserver(start)
    let (recomputing, viewSeconds) = timed { view("recomputing") }
    recomputing.followsChanges = false
    child.addObserver(between)
    let following = view("following")
    child.addObserver(end)
    let recomputedRows = ChangeRows(), followedRows = ChangeRows()
    recomputing.addObserver(recomputedRows)
    following.addObserver(followedRows)
    say("  each view created in about \(fixed(viewSeconds * 1000)) ms, \(following.numberOfSections) sections")

    var random = SplitMix(seed: 14)
    var nextID = count
    /// When the replacement began and ended.
    func refresh() -> (began: Double, ended: Double) {
        var rows = Array(child.objects)
        rows.remove(at: random.below(rows.count))
        rows.insert(makeObjects([nextID], groups: groups)[0], at: random.below(rows.count + 1))
        nextID += 1
        let target = random.below(rows.count)
        let id = rows[target]["id"]!.integerValue!
        rows[target] = makeObjects([id], groups: groups, salt: { _ in UInt64(nextID) })[0]
        let began = Clock.now()
        child.replaceObjects(rows)
        return (began, Clock.now())
    }
    // A simple child's rows are kept from its first replacement on: that one is recomputed.
    _ = refresh()
    recomputedRows.rows = []
    followedRows.rows = []

    var childTimes: [Double] = [], recomputeTimes: [Double] = [], followTimes: [Double] = []
    for _ in 0..<refreshes {
        let (began, ended) = refresh()
        childTimes.append((start.time - began) + (ended - end.time))
        recomputeTimes.append(between.time - start.time)
        followTimes.append(end.time - between.time)
    }
    guard recomputing.layout.sections == following.layout.sections else { fail("the two views differ") }
    let alone = Sample(childTimes), recompute = Sample(recomputeTimes), follow = Sample(followTimes)
    say("  the child's replacement alone (its diff): median \(fixed(alone.median * 1000, 2)) ms (best \(fixed(alone.min * 1000, 2)))")
    say(
        "  the view recomputing: median \(fixed(recompute.median * 1000, 2)) ms (best \(fixed(recompute.min * 1000, 2))); change sets of \(recomputedRows.rows.prefix(5)) rows"
    )
    say(
        "  the view following:   median \(fixed(follow.median * 1000, 3)) ms (best \(fixed(follow.min * 1000, 3))); change sets of \(followedRows.rows.prefix(5)) rows;"
            + " \(following.changesFollowed) of \(refreshes + 1) followed")
    say(
        "  recomputing ÷ following: \(fixed(recompute.median / follow.median))×; the refresh with the following view ÷ without it: "
            + "\(fixed((alone.median + follow.median) / alone.median, 2))× (with the recomputing one: \(fixed((alone.median + recompute.median) / alone.median, 2))×)"
    )
    say(
        "RESULT viewrefresh objects=\(count) child_ms=\(fixed(alone.median * 1000, 2)) recompute_ms=\(fixed(recompute.median * 1000, 2)) follow_ms=\(fixed(follow.median * 1000, 3)) ratio=\(fixed(recompute.median / follow.median))"
    )

    directEditsBenchmark(count: count, groups: groups, edits: options.int("--edits", default: 100))
}

/// One-row `insert`, `remove` and `update` of an N-object simple source under a sorted,
/// sectioned view following them (issue 13's figure, in process): the child's own time and
/// the view's, told apart by stamps; first as a simple child is usually edited (its old rows
/// come with each edit), then once it has been replaced (its rows are kept by the view).
func directEditsBenchmark(count: Int, groups: Int, edits: Int) {
    let identity = Identity(key: JSONKeyPath("id"))
    let child = SimpleDataSource(name: "edited", identity: identity, objects: makeObjects(0..<count, groups: groups))
    let before = Stamp(), after = Stamp()
    child.addObserver(before)
    let view = SectionedDataSource(
        name: "view", identity: identity, child: child, sectioningKey: JSONKeyPath("group"),
        sortDescriptors: [SortDescriptor(keyPath: JSONKeyPath("score"), ascending: true)])
    child.addObserver(after)
    var random = SplitMix(seed: 13)
    var nextID = count
    for rowsKept in [false, true] {
        if rowsKept { child.replaceObjects(child.objects + makeObjects([nextID], groups: groups)) }
        nextID += 1
        for kind in ["insert", "remove", "update"] {
            var childTimes: [Double] = [], viewTimes: [Double] = []
            let followedBefore = view.changesFollowed
            for _ in 0..<edits {
                let rows = child.objects.count
                let inserted = makeObjects([nextID], groups: groups)
                let updated = makeObjects(
                    [child.objects[random.below(rows)]["id"]!.integerValue!], groups: groups, salt: { _ in UInt64(nextID) })
                nextID += 1
                let began = Clock.now()
                switch kind {
                case "insert": try? child.insert(inserted, at: random.below(rows + 1))
                case "remove": try? child.remove(at: random.below(rows), count: 1)
                default: try? child.update(updated)
                }
                let ended = Clock.now()
                childTimes.append((before.time - began) + (ended - after.time))
                viewTimes.append(after.time - before.time)
            }
            let edit = Sample(childTimes), following = Sample(viewTimes)
            let label = rowsKept ? "rows kept" : "rows not kept"
            say(
                "  one-row \(kind) of \(count) (\(label)): the child \(fixed(edit.median * 1e6, 1)) µs, the view following it \(fixed(following.median * 1e6, 1)) µs"
                    + " (\(view.changesFollowed - followedBefore) of \(edits) followed; the others recomputed)")
            say(
                "RESULT viewrefresh_edit objects=\(count) kind=\(kind) kept=\(rowsKept) child_us=\(fixed(edit.median * 1e6, 1)) view_us=\(fixed(following.median * 1e6, 1))"
            )
        }
    }
    let fresh = SectionedDataSource(
        name: "check", identity: identity, child: child, sectioningKey: JSONKeyPath("group"),
        sortDescriptors: [SortDescriptor(keyPath: JSONKeyPath("score"), ascending: true)])
    guard view.layout.sections == fresh.layout.sections else { fail("the following view differs from a fresh one") }
}
