import JSONKit

/// Its child's objects, sorted, then grouped into sections by the value at a key path.
///
/// Unlike the original, which grouped only adjacent runs: all objects with equal values
/// share one section, sections in order of first appearance, titled by the value; objects
/// lacking the key share one section titled `null`.
///
/// It follows its child: every change of the child recomputes the sections and emits this
/// source's own change set; its load cycle mirrors the child's (`fetchData` fetches the
/// child, whose `willLoadData` opens this source's cycle), with partial loads and failures
/// passed on (the original never finished after a failure). Section titles are compared as
/// JSON values: `1` and `1.0` are different sections, member order in objects is not.
public final class SectionedDataSource: DataSource, DataSourceObserver {
    public let child: DataSource
    public let sectioningKey: KeyPath
    public let sortDescriptors: [SortDescriptor]

    public override var kind: String { "sectioned" }
    public override var children: [DataSource] { [child] }

    public init(name: String, identity: Identity, child: DataSource, sectioningKey: KeyPath, sortDescriptors: [SortDescriptor]) {
        self.child = child
        self.sectioningKey = sectioningKey
        self.sortDescriptors = sortDescriptors
        super.init(name: name, identity: identity)
        child.addObserver(self)
        recompute()
    }

    /// Fetches the child; this source's cycle mirrors the child's, which a well-behaved child
    /// opens at once with `willLoadData`.
    public override func fetchData() { child.fetchData() }
    public override func cancelFetch(reason: CancelReason = .cancelFetch) { child.cancelFetch(reason: reason) }
    public override func willDisplayObject(at indexPath: IndexPath) {
        // The last row here may not be the child's last row: ask about the child's.
        guard indexPath == lastIndexPath, let last = child.lastIndexPath else { return }
        child.willDisplayObject(at: last)
    }

    public override var kindState: SourceDescription.KindState {
        .sectioned(source: child.name, sectioningKey: sectioningKey, sortDescriptors: sortDescriptors)
    }

    public func dataSource(_ source: DataSource, emitted event: DataSourceEvent) {
        // A load's rows arrive as a didChange before its final event; `recompute` skips rows
        // it has already sectioned, so each change costs one pass.
        switch event {
        case .willLoadData:
            if !isFetching { emit(.willLoadData) }
        case .didPartiallyLoad:
            recompute()
            if isFetching { emit(.didPartiallyLoad) }
        case .finishedLoading:
            recompute()
            if isFetching { emit(.finishedLoading) }
        case .failedWithError(let error):
            recompute()
            if isFetching { emit(.failedWithError(.child(source: child.name, error))) }
        case .didChange:
            recompute()
        }
    }

    /// The child revision the sections were computed from.
    private var computedRevision = -1

    func recompute() {
        guard child.revision != computedRevision else { return }
        computedRevision = child.revision
        // Identity hashes carry over from the child when both tell objects apart alike.
        let childHashes = child.identity.key == identity.key ? child.rowHashes : nil

        // One pass over the child's rows reads everything needed from each tree while it is
        // in cache, and numbers the distinct key values so that grouping in sorted order
        // (random memory order) touches no tree. Placeholders are not data: they stay after
        // the sorted objects (a trailing loading row stays at the bottom), in a section of
        // their own unless objects lack the key too.
        var rows: [(object: JSON, hash: Int, group: Int)] = [], placeholders: [(object: JSON, hash: Int, group: Int)] = []
        rows.reserveCapacity(child.layout.sections.reduce(0) { $0 + $1.count })
        var sortKeys = SortKeys(sortDescriptors)
        var groupOfKey: [JSON: Int] = [:], groupKeys: [JSON] = []
        for (section, objects) in child.layout.sections.enumerated() {
            for (item, object) in objects.enumerated() {
                let key = object.value(at: sectioningKey) ?? .null
                let group: Int
                if let known = groupOfKey[key] {
                    group = known
                } else {
                    group = groupKeys.count
                    groupOfKey[key] = group
                    groupKeys.append(key)
                }
                let row = (object, childHashes?[section][item] ?? identity.hash(of: object), group)
                if Placeholder.kind(of: object) == nil {
                    rows.append(row)
                    sortKeys.append(object)
                } else {
                    placeholders.append(row)
                }
            }
        }

        // Sections in order of first appearance after sorting.
        var sectionOfGroup = [Int](repeating: -1, count: groupKeys.count)
        var sections: [[JSON]] = [], hashes: [[Int]] = [], titles: [JSON] = []
        func place(_ row: (object: JSON, hash: Int, group: Int)) {
            var section = sectionOfGroup[row.group]
            if section < 0 {
                section = sections.count
                sectionOfGroup[row.group] = section
                sections.append([])
                hashes.append([])
                titles.append(groupKeys[row.group])
            }
            sections[section].append(row.object)
            hashes[section].append(row.hash)
        }
        for position in sortKeys.sortedOrder() { place(rows[position]) }
        for row in placeholders { place(row) }
        replaceLayout(Layout(sections: sections, titles: titles), hashes: hashes)
    }
}

extension DataSource {
    /// The last row, or nil when there are none.
    var lastIndexPath: IndexPath? {
        guard let section = layout.sections.lastIndex(where: { !$0.isEmpty }) else { return nil }
        return IndexPath(section: section, item: layout.sections[section].count - 1)
    }
}
