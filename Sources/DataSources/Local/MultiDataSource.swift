import JSONKit

/// Several sources side by side: one section per child holding all of its objects,
/// titled with the child's name, or, with `preserveSections`, each child's own sections
/// (at least one per child). The layout is stable from creation, whatever loads first.
///
/// It follows its children: a child's change of a few rows (not of sections) is applied to
/// this source's rows in place and passed on in its coordinates; any other change lays the
/// children out again and diffs.
///
/// `fetchData` fetches every child: one `willLoadData`, `didPartiallyLoad` as each child
/// but the last completes, then `finishedLoading`, or `failedWithError` naming the
/// children that failed. A child that loads on its own (fetched directly, or paging)
/// makes this source run a cycle of its own around that load.
package final class MultiDataSource: DataSource, DataSourceObserver {
    package let sources: [DataSource]
    package let preserveSections: Bool

    /// The children a cycle waits for, those that have begun their load in it, and those done.
    private var members: Set<ObjectIdentifier> = []
    private var started: Set<ObjectIdentifier> = []
    private var answered: Set<ObjectIdentifier> = []
    private var failures: [LoadFailure.ChildFailure] = []
    /// True while `fetchData` is still asking children: the cycle cannot end before all were asked.
    private var starting = false

    package override var kind: String { "multi" }
    package override var children: [DataSource] { sources }

    package init(name: String, identity: Identity, sources: [DataSource], preserveSections: Bool) {
        self.sources = sources
        self.preserveSections = preserveSections
        super.init(name: name, identity: identity)
        for source in sources { source.addObserver(self) }
        relayout()
    }

    package override var kindState: SourceDescription.KindState {
        .multi(sources: sources.map(\.name), preserveSections: preserveSections)
    }

    package override func fetchData() {
        if isFetching {
            endCycle(.failedWithError(.cancelled("superseded by a new fetchData")))
        }
        members = Set(sources.map(ObjectIdentifier.init))
        emit(.willLoadData)
        starting = true
        // A child reached through another child (a diamond) has already started: not twice.
        for source in sources where !started.contains(ObjectIdentifier(source)) { source.fetchData() }
        starting = false
        if answered.count == members.count { conclude() }
    }

    package override func cancelFetch(reason: CancelReason = .cancelFetch) {
        for source in sources where source.isFetching { source.cancelFetch(reason: reason) }
    }

    package override func willDisplayObject(at indexPath: IndexPath) {
        guard let (source, inner) = childPosition(of: indexPath), inner == source.lastIndexPath else { return }
        source.willDisplayObject(at: inner)
    }

    package func dataSource(_ source: DataSource, emitted event: DataSourceEvent) {
        let id = ObjectIdentifier(source)
        switch event {
        case .willLoadData:
            if !isFetching {
                members = [id]
                emit(.willLoadData)
            }
            members.insert(id)
            started.insert(id)
        case .didPartiallyLoad:
            if isFetching, started.contains(id) { emit(.didPartiallyLoad) }
        case .finishedLoading, .failedWithError:
            // A final event before the child began loading in this cycle ends an older load.
            guard isFetching, started.contains(id), !answered.contains(id) else { return }
            answered.insert(id)
            if case .failedWithError(let error) = event { failures.append(LoadFailure.ChildFailure(source: source.name, failure: error)) }
            if answered.count < members.count {
                emit(.didPartiallyLoad)
            } else if !starting {
                conclude()
            }
        case .didChange(let changes):
            if !follow(source, changes) { relayout() }
        case .didChangeFreshness, .didChangeLoadState, .didSettleMutation:
            break
        }
    }

    /// The revision of each child that the layout shows, and the first section of each child.
    private var shownRevisions: [ObjectIdentifier: Int] = [:]
    private var firstSections: [Int] = []
    /// Past this many rows, a child's change is cheaper recomputed than applied row by row.
    static let largestFollowedChange = 64
    /// How many child changes were applied in place (for tests).
    private(set) var changesFollowed = 0

    /// Applies a child's change of rows (not of sections) to this source's rows in place, and
    /// emits it in this source's coordinates. False (nothing done) when it cannot: a child
    /// listed twice, a change of sections, a large change, or a child that changed before
    /// (in a diamond, through another child) without this source following.
    private func follow(_ source: DataSource, _ changes: ChangeSet) -> Bool {
        let id = ObjectIdentifier(source)
        guard shownRevisions[id] == source.revision - 1, source.identity.key == identity.key,
            changes.insertedSections.isEmpty, changes.deletedSections.isEmpty,
            changes.inserted.count + changes.deleted.count + changes.moved.count + changes.updated.count <= Self.largestFollowedChange,
            let child = sources.firstIndex(where: { $0 === source }),
            sources.lastIndex(where: { $0 === source }) == child
        else { return false }
        let base = firstSections[child]
        let translateOld: (IndexPath) -> IndexPath, translateNew: (IndexPath) -> IndexPath
        if preserveSections {
            guard source.numberOfSections > 0 else { return false }
            translateOld = { IndexPath(section: base + $0.section, item: $0.item) }
            translateNew = translateOld
        } else {
            // One section for the child: its sections' rows one after another, before and after.
            let counts = source.layout.sections.map(\.count)
            var oldCounts = counts
            for path in changes.inserted + changes.moved.map(\.to) { oldCounts[path.section] -= 1 }
            for path in changes.deleted + changes.moved.map(\.from) { oldCounts[path.section] += 1 }
            func starts(_ counts: [Int]) -> [Int] {
                var result: [Int] = [], total = 0
                for count in counts {
                    result.append(total)
                    total += count
                }
                return result
            }
            let oldStarts = starts(oldCounts), newStarts = starts(counts)
            translateOld = { IndexPath(section: base, item: oldStarts[$0.section] + $0.item) }
            translateNew = { IndexPath(section: base, item: newStarts[$0.section] + $0.item) }
        }
        var own = ChangeSet()
        own.deleted = IndexPathList(changes.deleted.map(translateOld))
        own.inserted = IndexPathList(changes.inserted.map(translateNew))
        own.updated = IndexPathList(changes.updated.map(translateNew))
        own.moved = changes.moved.map { ChangeSet.Move(from: translateOld($0.from), to: translateNew($0.to)) }
        // Rows leave from the back, so earlier positions hold; then arrive from the front.
        let leaving = (own.deleted + own.moved.map(\.from)).sorted { ($0.section, $0.item) > ($1.section, $1.item) }
        for path in leaving { removeRow(at: path) }
        let arriving = (changes.inserted.map { ($0, translateNew($0)) } + changes.moved.map { ($0.to, translateNew($0.to)) })
            .sorted { ($0.1.section, $0.1.item) < ($1.1.section, $1.1.item) }
        for (childPath, path) in arriving {
            insertRow(
                source.layout.sections[childPath.section][childPath.item], hash: source.rowHashes[childPath.section][childPath.item],
                at: path)
        }
        for (childPath, path) in zip(changes.updated, own.updated) {
            replaceRow(at: path, with: source.layout.sections[childPath.section][childPath.item])
        }
        shownRevisions[id] = source.revision
        changesFollowed += 1
        commitFollowing(own)
        return true
    }

    /// Ends the cycle once every member answered: finished, or failed naming the failures.
    private func conclude() {
        guard !failures.isEmpty else { return endCycle(.finishedLoading) }
        let names = failures.map(\.source)
        endCycle(
            .failedWithError(
                .children(
                    message: "\(names.count) of \(members.count) sources failed: \(names.joined(separator: ", "))",
                    failures: failures)))
    }

    private func endCycle(_ event: DataSourceEvent) {
        members = []
        started = []
        answered = []
        failures = []
        emit(event)
    }

    private func relayout() {
        var sections: [RowArray<JSON>] = [], hashes: [RowArray<Int>] = [], titles: [JSON] = [], identities: [JSON] = []
        firstSections = []
        for source in sources {
            shownRevisions[ObjectIdentifier(source)] = source.revision
            firstSections.append(sections.count)
            let own = JSON(source.name)
            // Identity hashes carry over from a child that tells objects apart alike.
            let childHashes = source.identity.key == identity.key ? source.rowHashes : identity.hashes(of: source.layout.sections)
            if preserveSections, source.numberOfSections > 0 {
                for (index, objects) in source.layout.sections.enumerated() {
                    sections.append(objects)
                    hashes.append(childHashes[index])
                    titles.append(source.sectionTitles[index])
                    identities.append([own, source.layout.sectionIdentities[index]])
                }
            } else if source.numberOfSections == 1 {
                // Shared with the child until either is edited.
                sections.append(source.layout.sections[0])
                hashes.append(childHashes[0])
                titles.append(own)
                identities.append([own])
            } else {
                sections.append(RowArray(source.allObjects))
                hashes.append(RowArray(childHashes.joined()))
                titles.append(own)
                identities.append([own])
            }
        }
        replaceLayout(Layout(sections: sections, titles: titles, sectionIdentities: identities), hashes: hashes)
    }

    /// The child and its own index path for one of this source's index paths.
    private func childPosition(of indexPath: IndexPath) -> (DataSource, IndexPath)? {
        var first = 0
        for source in sources {
            let count = preserveSections ? max(1, source.numberOfSections) : 1
            if indexPath.section < first + count {
                if preserveSections, source.numberOfSections > 0 {
                    return (source, IndexPath(section: indexPath.section - first, item: indexPath.item))
                }
                var item = indexPath.item
                for section in 0..<source.numberOfSections {
                    let size = source.numberOfObjects(inSection: section)
                    if item < size { return (source, IndexPath(section: section, item: item)) }
                    item -= size
                }
                return nil
            }
            first += count
        }
        return nil
    }
}
