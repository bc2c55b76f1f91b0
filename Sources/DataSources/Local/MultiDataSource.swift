import JSONKit

/// Several sources side by side: one section per child holding all of its objects,
/// titled with the child's name, or, with `preserveSections`, each child's own sections
/// (at least one per child). The layout is stable from creation, whatever loads first.
///
/// `fetchData` fetches every child: one `willLoadData`, `didPartiallyLoad` as each child
/// but the last completes, then `finishedLoading`, or `failedWithError` naming the
/// children that failed. A child that loads on its own (fetched directly, or paging)
/// makes this source run a cycle of its own around that load.
public final class MultiDataSource: DataSource, DataSourceObserver {
    public let sources: [DataSource]
    public let preserveSections: Bool

    /// The children a cycle waits for, those that have begun their load in it, and those done.
    private var members: Set<ObjectIdentifier> = []
    private var started: Set<ObjectIdentifier> = []
    private var answered: Set<ObjectIdentifier> = []
    private var failures: [LoadFailure.ChildFailure] = []
    /// True while `fetchData` is still asking children: the cycle cannot end before all were asked.
    private var starting = false

    public override var kind: String { "multi" }
    public override var children: [DataSource] { sources }

    public init(name: String, identity: Identity, sources: [DataSource], preserveSections: Bool) {
        self.sources = sources
        self.preserveSections = preserveSections
        super.init(name: name, identity: identity)
        for source in sources { source.addObserver(self) }
        relayout()
    }

    public override var kindState: SourceDescription.KindState {
        .multi(sources: sources.map(\.name), preserveSections: preserveSections)
    }

    public override func fetchData() {
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

    public override func cancelFetch(reason: CancelReason = .cancelFetch) {
        for source in sources where source.isFetching { source.cancelFetch(reason: reason) }
    }

    public override func willDisplayObject(at indexPath: IndexPath) {
        guard let (source, inner) = childPosition(of: indexPath), inner == source.lastIndexPath else { return }
        source.willDisplayObject(at: inner)
    }

    public func dataSource(_ source: DataSource, emitted event: DataSourceEvent) {
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
        case .didChange:
            relayout()
        }
    }

    /// Ends the cycle once every member answered: finished, or failed naming the failures.
    private func conclude() {
        guard !failures.isEmpty else { return endCycle(.finishedLoading) }
        let names = failures.map(\.source)
        endCycle(.failedWithError(.children(message: "\(names.count) of \(members.count) sources failed: \(names.joined(separator: ", "))",
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
        var sections: [[JSON]] = [], hashes: [[Int]] = [], titles: [JSON] = [], identities: [JSON] = []
        for source in sources {
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
            } else {
                sections.append(source.allObjects)
                hashes.append(Array(childHashes.joined()))
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
