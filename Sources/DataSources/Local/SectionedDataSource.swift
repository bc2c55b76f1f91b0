import JSONKit

/// Its child's objects, sorted, then grouped into sections by the value at a key path.
///
/// Unlike the original, which grouped only adjacent runs: all objects with equal values
/// share one section, sections in order of first appearance, titled by the value; objects
/// lacking the key share one section titled `null`.
///
/// It follows its child: an edit of one row of a one-section child is applied in place (a
/// binary search, see `follow(_:)`), any other change recomputes the sections; either way
/// it emits this source's own change set; its load cycle mirrors the child's (`fetchData` fetches the
/// child, whose `willLoadData` opens this source's cycle), with partial loads and failures
/// passed on (the original never finished after a failure). Section titles are compared as
/// JSON values: `1` and `1.0` are different sections, member order in objects is not.
public final class SectionedDataSource: DataSource, DataSourceObserver {
    public let child: DataSource
    public let sectioningKey: JSONKeyPath
    public let sortDescriptors: [SortDescriptor]

    public override var kind: String { "sectioned" }
    public override var children: [DataSource] { [child] }

    public init(name: String, identity: Identity, child: DataSource, sectioningKey: JSONKeyPath, sortDescriptors: [SortDescriptor]) {
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
            if let edit = child.lastEdit, child.revision == computedRevision + 1, follow(edit) {
                computedRevision = child.revision
                editsFollowed += 1
            } else {
                recompute()
            }
        case .didChangeFreshness:
            break
        }
    }

    /// The child revision the sections were computed from.
    private var computedRevision = -1
    /// How many child edits were applied in place (for tests).
    private(set) var editsFollowed = 0

    // What following an edit needs, valid for `computedRevision`. Rows are ordered by their
    // sort keys, then by a label that increases with the child's row order (what a stable
    // sort keeps), so every row has one place a binary search finds. Labels are spaced
    // apart, so a row inserted in the child gets one between its neighbours' labels.
    /// The label of each of the child's rows, in the child's order.
    private var childLabels: [UInt64] = []
    /// The label of each row here, parallel to `layout.sections`.
    private var rowLabels: [[UInt64]] = []
    private var sectionOfTitle: [JSON: Int] = [:]
    /// Placeholder rows sit after the sorted rows, outside the order: edits then recompute.
    private var placeholderCount = 0
    static let labelSpacing: UInt64 = 1 << 32

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
        childLabels = []
        childLabels.reserveCapacity(child.layout.sections.reduce(0) { $0 + $1.count })
        var rows: [(object: JSON, hash: Int, group: Int, label: UInt64)] = [], placeholders: [(object: JSON, hash: Int, group: Int, label: UInt64)] = []
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
                let label = UInt64(childLabels.count + 1) * Self.labelSpacing
                childLabels.append(label)
                let row = (object, childHashes?[section][item] ?? identity.hash(of: object), group, label)
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
        var sections: [[JSON]] = [], hashes: [[Int]] = [], titles: [JSON] = [], labels: [[UInt64]] = []
        func place(_ row: (object: JSON, hash: Int, group: Int, label: UInt64)) {
            var section = sectionOfGroup[row.group]
            if section < 0 {
                section = sections.count
                sectionOfGroup[row.group] = section
                sections.append([])
                hashes.append([])
                labels.append([])
                titles.append(groupKeys[row.group])
            }
            sections[section].append(row.object)
            hashes[section].append(row.hash)
            labels[section].append(row.label)
        }
        for position in sortKeys.sortedOrder() { place(rows[position]) }
        for row in placeholders { place(row) }
        rowLabels = labels
        placeholderCount = placeholders.count
        indexTitles(titles)
        replaceLayout(Layout(sections: sections, titles: titles), hashes: hashes)
    }

    private func indexTitles(_ titles: [JSON]) {
        sectionOfTitle = [:]
        for (section, title) in titles.enumerated() { sectionOfTitle[title] = section }
    }

    // MARK: Following one edit of the child

    /// Applies the child's edit of one row in place and emits exactly its change: the row
    /// inserted, deleted, updated, or moved and updated. False (nothing done) when the edit
    /// is not of one row, or reorders sections (a section's first row overtaking another's):
    /// then everything is recomputed.
    private func follow(_ edit: RowEdit) -> Bool {
        guard placeholderCount == 0, child.layout.sections.count == 1, child.identity.key == identity.key else { return false }
        switch edit {
        case .inserted(let start, let rows, let hashes):
            guard rows.count == 1, Placeholder.kind(of: rows[0]) == nil else { return false }
            let low = start > 0 ? childLabels[start - 1] : 0
            let high = start < childLabels.count ? childLabels[start] : .max
            guard high - low >= 2 else { return false }  // no label left between them
            let label = low + (high - low) / 2
            guard let changes = insert(rows[0], hash: hashes[0], label: label) else { return false }
            childLabels.insert(label, at: start)
            commitFollowing(changes)
        case .removed(let start, let rows, _):
            guard rows.count == 1 else { return false }
            guard let changes = remove(rows[0], label: childLabels[start]) else { return false }
            childLabels.remove(at: start)
            commitFollowing(changes)
        case .updated(let items):
            guard items.count == 1 else { return false }
            let (item, old) = items[0]
            let new = child.layout.sections[0][item]
            guard Placeholder.kind(of: new) == nil, let changes = update(old, to: new, label: childLabels[item]) else { return false }
            commitFollowing(changes)
        }
        return true
    }

    /// A row's place in the order: its sort keys and label.
    private struct Place {
        let keys: SortKeys
        let label: UInt64

        init(_ object: JSON, label: UInt64, descriptors: [SortDescriptor]) {
            var keys = SortKeys(descriptors)
            keys.append(object)
            self.keys = keys
            self.label = label
        }

        /// Whether this place comes before `other`'s.
        func precedes(_ other: Place) -> Bool {
            let order = keys.compare(0, with: other.keys, 0)
            return order != 0 ? order < 0 : label < other.label
        }
    }

    private func place(at path: IndexPath) -> Place {
        Place(layout.sections[path.section][path.item], label: rowLabels[path.section][path.item], descriptors: sortDescriptors)
    }

    private func title(of object: JSON) -> JSON { object.value(at: sectioningKey) ?? .null }

    /// How many rows of `section` come before `place`: where it goes, or where it is.
    private func position(of place: Place, in section: Int) -> Int {
        var low = 0, high = layout.sections[section].count
        while low < high {
            let middle = (low + high) / 2
            if self.place(at: IndexPath(section: section, item: middle)).precedes(place) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Whether `first`, as the first row of `section`, keeps the sections in the order of
    /// their first rows.
    private func keepsSectionOrder(_ first: Place, asFirstOf section: Int) -> Bool {
        if section > 0, !place(at: IndexPath(section: section - 1, item: 0)).precedes(first) { return false }
        if section + 1 < layout.sections.count, !first.precedes(place(at: IndexPath(section: section + 1, item: 0))) { return false }
        return true
    }

    private func insert(_ object: JSON, hash: Int, label: UInt64) -> ChangeSet? {
        let new = Place(object, label: label, descriptors: sortDescriptors)
        let title = title(of: object)
        var changes = ChangeSet()
        if let section = sectionOfTitle[title] {
            let item = position(of: new, in: section)
            if item == 0, !keepsSectionOrder(new, asFirstOf: section) { return nil }
            insertRow(object, hash: hash, at: IndexPath(section: section, item: item))
            rowLabels[section].insert(label, at: item)
            changes.inserted = [IndexPath(section: section, item: item)]
        } else {
            // A new section, among the others by first rows.
            var low = 0, high = layout.sections.count
            while low < high {
                let middle = (low + high) / 2
                if place(at: IndexPath(section: middle, item: 0)).precedes(new) { low = middle + 1 } else { high = middle }
            }
            insertSection(at: low, title: title, identity: title)
            insertRow(object, hash: hash, at: IndexPath(section: low, item: 0))
            rowLabels.insert([label], at: low)
            indexTitles(layout.titles)
            changes.insertedSections = [low]
            changes.inserted = [IndexPath(section: low, item: 0)]
        }
        return changes
    }

    /// Where the row of `object` with `label` is, or nil if it is not there (then the
    /// state is not what the edit expects, and everything is recomputed).
    private func locate(_ object: JSON, label: UInt64) -> (path: IndexPath, place: Place)? {
        guard let section = sectionOfTitle[title(of: object)] else { return nil }
        let place = Place(object, label: label, descriptors: sortDescriptors)
        let item = position(of: place, in: section)
        guard item < rowLabels[section].count, rowLabels[section][item] == label else { return nil }
        return (IndexPath(section: section, item: item), place)
    }

    private func remove(_ object: JSON, label: UInt64) -> ChangeSet? {
        guard let (path, _) = locate(object, label: label) else { return nil }
        var changes = ChangeSet()
        if layout.sections[path.section].count == 1 {
            removeSection(at: path.section)
            rowLabels.remove(at: path.section)
            indexTitles(layout.titles)
            changes.deletedSections = [path.section]
        } else {
            if path.item == 0, !keepsSectionOrder(place(at: IndexPath(section: path.section, item: 1)), asFirstOf: path.section) { return nil }
            removeRow(at: path)
            rowLabels[path.section].remove(at: path.item)
        }
        changes.deleted = [path]
        return changes
    }

    private func update(_ old: JSON, to new: JSON, label: UInt64) -> ChangeSet? {
        guard title(of: new) == title(of: old), let (from, _) = locate(old, label: label) else { return nil }
        let section = from.section
        let newPlace = Place(new, label: label, descriptors: sortDescriptors)
        // Where it goes among the section's other rows.
        var item = position(of: newPlace, in: section)
        if item > from.item { item -= 1 }
        if item == 0 || from.item == 0 {
            let first = item == 0 ? newPlace : place(at: IndexPath(section: section, item: from.item == 0 ? 1 : 0))
            if !keepsSectionOrder(first, asFirstOf: section) { return nil }
        }
        let to = IndexPath(section: section, item: item)
        var changes = ChangeSet()
        if to == from {
            replaceRow(at: from, with: new)
        } else {
            let hash = rowHashes[section][from.item]
            removeRow(at: from)
            rowLabels[section].remove(at: from.item)
            insertRow(new, hash: hash, at: to)
            rowLabels[section].insert(label, at: item)
            changes.moved = [ChangeSet.Move(from: from, to: to)]
        }
        changes.updated = [to]
        return changes
    }
}

extension DataSource {
    /// The last row, or nil when there are none.
    var lastIndexPath: IndexPath? {
        guard let section = layout.sections.lastIndex(where: { !$0.isEmpty }) else { return nil }
        return IndexPath(section: section, item: layout.sections[section].count - 1)
    }
}
