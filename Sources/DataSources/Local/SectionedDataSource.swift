import JSONKit

/// Its child's objects, sorted, then grouped into sections by the value at a key path.
///
/// Unlike the original, which grouped only adjacent runs: all objects with equal values
/// share one section, sections in order of first appearance, titled by the value; objects
/// lacking the key share one section titled `null`.
///
/// It follows its child: a change of a few rows of a one-section child (a direct edit, or a
/// remote source's refresh or page) is applied in place, each row found or placed by a
/// binary search (see `follow(_:)`); any other change recomputes the sections; either way
/// it emits this source's own change set; its load cycle mirrors the child's (`fetchData` fetches the
/// child, whose `willLoadData` opens this source's cycle), with partial loads and failures
/// passed on (the original never finished after a failure). Section titles are compared as
/// JSON values: `1` and `1.0` are different sections, member order in objects is not.
package final class SectionedDataSource: DerivedDataSource, DataSourceObserver {
    package let sectioningKey: JSONKeyPath
    package let sortDescriptors: [SortDescriptor]

    package override var kind: String { "sectioned" }
    package init(name: String, identity: Identity, child: DataSource, sectioningKey: JSONKeyPath, sortDescriptors: [SortDescriptor]) {
        self.sectioningKey = sectioningKey
        self.sortDescriptors = sortDescriptors
        super.init(name: name, identity: identity, child: child)
        keepsChildRows = !(child is SimpleDataSource)
        child.addObserver(self)
        recompute()
    }

    package override var kindState: SourceDescription.KindState {
        .sectioned(source: child.name, sectioningKey: sectioningKey, sortDescriptors: sortDescriptors)
    }

    package func dataSource(_ source: DataSource, emitted event: DataSourceEvent) {
        // A load's rows arrive as a didChange before its final event; `recompute` skips rows
        // it has already sectioned, so each change costs one pass.
        guard case .didChange(let changes) = event else { return mirrorLoadCycle(of: child, event, catchUp: recompute) }
        if child.revision == computedRevision + 1, follow(changes) { return }
        // A change that carried no old rows, from a child whose rows are not kept: keep
        // them from now on, so that its next change can be followed.
        if childRows == nil, child.lastEdit == nil { keepsChildRows = true }
        recompute()
    }

    /// The child revision the sections were computed from.
    private var computedRevision = -1

    // What following a change needs, valid for `computedRevision`. Rows are ordered by their
    // sort keys, then by a label that increases with the child's row order (what a stable
    // sort keeps), so every row has one place a binary search finds. Labels are spaced
    // apart, so rows inserted in the child get labels between their neighbours'.
    /// The label of each of the child's rows, in the child's order.
    private var childLabels = RowArray<UInt64>()
    /// The child's rows, parallel to `childLabels`, when kept: what the rows a change deletes,
    /// moves or updates were, to find them here. A simple source's direct edits carry those
    /// rows (`lastEdit`), so a simple child's rows are kept only once it has replaced its
    /// rows: keeping them shares the child's chunks, and each edit of the child then copies
    /// the chunk it edits.
    private var childRows: RowArray<JSON>?
    private var keepsChildRows = false
    /// The label of each row here, parallel to `layout.sections`.
    private var rowLabels: [RowArray<UInt64>] = []
    private var sectionOfTitle: [JSON: Int] = [:]
    /// Placeholder rows sit after the sorted rows, outside the order: at the end of the
    /// section of their title (their own, last, unless objects lack the key too). Following
    /// a change needs them all in one section (`placeholderTitle`'s), and leaves them alone.
    private var placeholderCount = 0
    private var placeholderTitle: JSON?
    private var placeholdersInOneSection = true
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
        let childCount = child.layout.sections.reduce(0) { $0 + $1.count }
        childLabels = []
        childLabels.reserveCapacity(childCount)
        // Only a one-section child's changes are followed.
        childRows = keepsChildRows && child.layout.sections.count == 1 ? child.layout.sections[0] : nil
        var rows: [(object: JSON, hash: Int, group: Int, label: UInt64)] = [],
            placeholders: [(object: JSON, hash: Int, group: Int, label: UInt64)] = []
        rows.reserveCapacity(childCount)
        var sortKeys = SortKeys(sortDescriptors)
        var groups = GroupNumbering(keyPath: sectioningKey)
        for (section, objects) in child.layout.sections.enumerated() {
            let sectionHashes = childHashes?[section]
            for (item, object) in objects.enumerated() {
                let group = groups.group(of: object)
                let label = UInt64(childLabels.count + 1) * Self.labelSpacing
                childLabels.append(label)
                let row = (object, sectionHashes?[item] ?? identity.hash(of: object), group, label)
                if Placeholder.kind(of: object) == nil {
                    rows.append(row)
                    sortKeys.append(object)
                } else {
                    placeholders.append(row)
                }
            }
        }

        // Sections in order of first appearance after sorting.
        let groupKeys = groups.values
        var sectionOfGroup = [Int](repeating: -1, count: groupKeys.count)
        var sections: [RowArray<JSON>] = [], hashes: [RowArray<Int>] = [], titles: [JSON] = [], labels: [RowArray<UInt64>] = []
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
        placeholderTitle = placeholders.first.map { groupKeys[$0.group] }
        placeholdersInOneSection = placeholders.allSatisfy { $0.group == placeholders[0].group }
        indexTitles(titles)
        replaceLayout(Layout(sections: sections, titles: titles), hashes: hashes)
    }

    private func indexTitles(_ titles: [JSON]) {
        sectionOfTitle = [:]
        for (section, title) in titles.enumerated() { sectionOfTitle[title] = section }
    }

    // MARK: Following a change of the child

    /// Past this many rows, a child's change is cheaper recomputed than applied row by row.
    static let largestFollowedChange = 64
    /// When false, every change of the child recomputes the sections (to measure what
    /// following saves).
    package var followsChanges = true
    /// How many child changes were applied in place (for tests and measurements).
    package private(set) var changesFollowed = 0

    /// A child row as placed here: its object and its label.
    private struct PlacedRow {
        let object: JSON
        let label: UInt64
    }

    /// A row the child kept but moved or updated: it leaves its place here for its new one,
    /// or is replaced where it is when that is still its place.
    private struct Relocation {
        let from: PlacedRow
        let to: PlacedRow
        let hash: Int
        let updated: Bool
    }

    /// A change of a one-section child as rows to take out and put in here.
    private struct ChildChange {
        /// Old indexes of the child's rows that left their place (deleted or moved), ascending.
        var leaving: [Int]
        /// New indexes of the child's rows that took a new place (inserted or moved),
        /// ascending, and their labels.
        var arriving: [Int]
        var arrivingLabels: [UInt64]
        var deletions: [PlacedRow] = []
        var insertions: [(row: PlacedRow, hash: Int)] = []
        var relocations: [Relocation] = []
    }

    /// What was done to the layout while applying a change, to undo it (a section order that
    /// changed) and to tell where sections are meanwhile.
    private struct FollowLog {
        enum Step {
            case insertedRow(IndexPath)
            case removedRow(IndexPath, JSON, hash: Int, label: UInt64)
            case replacedRow(IndexPath, JSON, label: UInt64)
            case insertedSection(Int)
            case removedSection(Int, title: JSON)
        }
        var steps: [Step] = []
        /// Sections inserted or removed, in order: `sectionOfTitle` is brought up to date
        /// once at the end, and section indexes in between are read through this.
        var shifts: [(at: Int, inserted: Bool)] = []
        /// Sections created by the change: where, and how many shifts there were then (its own included).
        var created: [JSON: (section: Int, since: Int)] = [:]
        /// Titles of sections whose first row changed, or that are new: only their places
        /// among the sections can be wrong.
        var touched: Set<JSON> = []

        /// Where the row put at `path` by step `step` is after all the steps.
        func finalPath(of path: IndexPath, placedAt step: Int) -> IndexPath {
            var path = path
            for later in steps[(step + 1)...] {
                switch later {
                case .insertedRow(let other) where other.section == path.section && other.item <= path.item: path.item += 1
                case .removedRow(let other, _, _, _) where other.section == path.section && other.item < path.item: path.item -= 1
                case .insertedSection(let section) where section <= path.section: path.section += 1
                case .removedSection(let section, _) where section < path.section: path.section -= 1
                default: break
                }
            }
            return path
        }
    }

    /// Applies the child's change in place and emits this source's change set for it: each
    /// row the child deleted, inserted, moved or updated is found here by a binary search
    /// on its old sort keys and label, and put at its new place by another. False, with
    /// nothing changed, when it cannot: a change of sections or of more than
    /// `largestFollowedChange` rows, a child of several sections or another identity,
    /// placeholders involved, old rows not at hand, no label left between two rows, or
    /// sections that would change order (then everything is recomputed).
    private func follow(_ changes: ChangeSet) -> Bool {
        guard followsChanges, placeholdersInOneSection, child.identity.key == identity.key, child.layout.sections.count == 1,
            changes.insertedSections.isEmpty, changes.deletedSections.isEmpty,
            changes.deleted.count + changes.inserted.count + changes.moved.count + changes.updated.count <= Self.largestFollowedChange,
            let change = childChange(changes)
        else { return false }

        // Where the rows leaving are, before anything moves.
        var deletionPaths: [IndexPath] = [], relocationPaths: [IndexPath] = []
        for row in change.deletions {
            guard let path = locate(row.object, label: row.label) else { return false }
            deletionPaths.append(path)
        }
        for relocation in change.relocations {
            guard let path = locate(relocation.from.object, label: relocation.from.label) else { return false }
            relocationPaths.append(path)
        }

        var log = FollowLog()
        // A row whose new place is still between its neighbours is replaced where it is (by
        // the step of the log given here).
        var replacedAt: [Int: Int] = [:]
        for (index, relocation) in change.relocations.enumerated() {
            let path = relocationPaths[index], section = path.section
            guard title(of: relocation.to.object) == layout.titles[section] else { continue }
            let new = Place(relocation.to.object, label: relocation.to.label, descriptors: sortDescriptors)
            if path.item > 0, !place(at: IndexPath(section: section, item: path.item - 1)).precedes(new) { continue }
            if path.item + 1 < dataCount(section), !new.precedes(place(at: IndexPath(section: section, item: path.item + 1))) { continue }
            log.steps.append(.replacedRow(path, layout.sections[section][path.item], label: rowLabels[section][path.item]))
            replaceRow(at: path, with: relocation.to.object)
            rowLabels[section][path.item] = relocation.to.label
            if path.item == 0 { log.touched.insert(layout.titles[section]) }
            replacedAt[index] = log.steps.count - 1
        }
        // The others leave, from the back so that the places found hold; then arrive.
        let moving = change.relocations.indices.filter { replacedAt[$0] == nil }
        let departures = (deletionPaths + moving.map { relocationPaths[$0] }).sorted(by: >)
        let arrivals = change.insertions + moving.map { (change.relocations[$0].to, change.relocations[$0].hash) }
        for path in departures { takeOut(path, &log) }
        let placed = arrivals.map { putIn($0.row, hash: $0.hash, &log) }
        guard keepsSectionOrder(log) else {
            undo(log)
            return false
        }

        // The change set, in this source's coordinates.
        let originalSections = sectionOfTitle
        if !log.shifts.isEmpty { indexTitles(layout.titles) }
        let arrivalPaths = placed.map { log.finalPath(of: $0.path, placedAt: $0.step) }
        var own = ChangeSet()
        let departedTitles = Set(
            change.deletions.map { title(of: $0.object) } + moving.map { title(of: change.relocations[$0].from.object) })
        own.deletedSections = departedTitles.filter { sectionOfTitle[$0] == nil }.map { originalSections[$0]! }.sorted()
        own.insertedSections = Set(arrivalPaths.map { layout.titles[$0.section] }).filter { originalSections[$0] == nil }.map {
            sectionOfTitle[$0]!
        }.sorted()
        own.deleted = IndexPathList(deletionPaths.sorted())
        own.inserted = IndexPathList(arrivalPaths.prefix(change.insertions.count).sorted())
        let relocated = zip(moving, arrivalPaths.dropFirst(change.insertions.count)).map { index, to in
            (
                index: index, from: relocationPaths[index], to: to,
                sameSection: title(of: change.relocations[index].from.object) == layout.titles[to.section]
            )
        }
        let updatedInPlace = replacedAt.filter { change.relocations[$0.key].updated }.map {
            log.finalPath(of: relocationPaths[$0.key], placedAt: $0.value)
        }
        own.updated = IndexPathList((updatedInPlace + relocated.filter { change.relocations[$0.index].updated }.map(\.to)).sorted())
        own.moved = moves(relocated.map { ($0.from, $0.to, $0.sameSection) }, departures: departures, arrivals: arrivalPaths)

        let rows = child.layout.sections[0]
        for item in change.leaving.reversed() {
            childLabels.remove(at: item)
            childRows?.remove(at: item)
        }
        for (item, label) in zip(change.arriving, change.arrivingLabels) {
            childLabels.insert(label, at: item)
            childRows?.insert(rows[item], at: item)
        }
        for path in changes.updated { childRows?[path.item] = rows[path.item] }
        computedRevision = child.revision
        changesFollowed += 1
        commitFollowing(own)
        return true
    }

    /// The child's change as rows leaving and arriving, with labels for the rows arriving;
    /// nil when it cannot be followed.
    private func childChange(_ changes: ChangeSet) -> ChildChange? {
        let rows = child.layout.sections[0], hashes = child.rowHashes[0]
        let paths = Array(changes.deleted) + changes.inserted + changes.updated + changes.moved.flatMap { [$0.from, $0.to] }
        guard paths.allSatisfy({ $0.section == 0 }), childLabels.count - changes.deleted.count + changes.inserted.count == rows.count else {
            return nil
        }
        let leaving = (changes.deleted + changes.moved.map(\.from)).map(\.item).sorted()
        let arriving = (changes.inserted + changes.moved.map(\.to)).map(\.item).sorted()

        func oldIndex(ofKept item: Int) -> Int { ChangeSet.oldItem(ofKept: item, leaving: leaving, arriving: arriving) }

        // Each run of rows arriving side by side shares the gap between its neighbours' labels.
        var arrivingLabels: [UInt64] = []
        var runStart = 0
        while runStart < arriving.count {
            var runEnd = runStart + 1
            while runEnd < arriving.count, arriving[runEnd] == arriving[runEnd - 1] + 1 { runEnd += 1 }
            let low = arriving[runStart] > 0 ? childLabels[oldIndex(ofKept: arriving[runStart] - 1)] : 0
            let high = arriving[runEnd - 1] + 1 < rows.count ? childLabels[oldIndex(ofKept: arriving[runEnd - 1] + 1)] : .max
            let step = high > low ? (high - low) / UInt64(runEnd - runStart + 1) : 0
            guard step > 0 else { return nil }  // no labels left between them
            for offset in 1...(runEnd - runStart) { arrivingLabels.append(low + step * UInt64(offset)) }
            runStart = runEnd
        }
        func label(arriving item: Int) -> UInt64 { arrivingLabels[arriving.firstIndex(of: item)!] }

        /// The child's row at old index `index`: kept here, or carried by a direct edit.
        func oldRow(_ index: Int) -> JSON? {
            if let childRows { return childRows[index] }
            switch child.lastEdit {
            case .removed(let start, let removed, _)? where index >= start && index - start < removed.count: return removed[index - start]
            case .updated(let items)?: return items.first { $0.item == index }?.old
            default: return nil
            }
        }

        var change = ChildChange(leaving: leaving, arriving: arriving, arrivingLabels: arrivingLabels)
        for path in changes.deleted {
            guard let old = oldRow(path.item) else { return nil }
            change.deletions.append(PlacedRow(object: old, label: childLabels[path.item]))
        }
        for path in changes.inserted {
            change.insertions.append((PlacedRow(object: rows[path.item], label: label(arriving: path.item)), hashes[path.item]))
        }
        let updated = Set(changes.updated.map(\.item)), movedTo = Set(changes.moved.map(\.to.item))
        for move in changes.moved {
            guard let old = oldRow(move.from.item) else { return nil }
            change.relocations.append(
                Relocation(
                    from: PlacedRow(object: old, label: childLabels[move.from.item]),
                    to: PlacedRow(object: rows[move.to.item], label: label(arriving: move.to.item)),
                    hash: hashes[move.to.item], updated: updated.contains(move.to.item)))
        }
        for path in changes.updated where !movedTo.contains(path.item) {
            let index = oldIndex(ofKept: path.item)
            guard let old = oldRow(index) else { return nil }
            change.relocations.append(
                Relocation(
                    from: PlacedRow(object: old, label: childLabels[index]),
                    to: PlacedRow(object: rows[path.item], label: childLabels[index]),
                    hash: hashes[path.item], updated: true))
        }
        // Placeholders stay outside the order.
        let objects =
            change.deletions.map(\.object) + change.insertions.map(\.row.object)
            + change.relocations.flatMap { [$0.from.object, $0.to.object] }
        guard objects.allSatisfy({ Placeholder.kind(of: $0) == nil }) else { return nil }
        return change
    }

    /// How many rows of `section` are data: all but the placeholders at the end of theirs.
    private func dataCount(_ section: Int) -> Int {
        layout.sections[section].count - (placeholderCount > 0 && layout.titles[section] == placeholderTitle ? placeholderCount : 0)
    }

    /// The place of the first data row of `section`; nil for a section of placeholders only,
    /// which comes after all others.
    private func firstPlace(of section: Int) -> Place? {
        dataCount(section) > 0 ? place(at: IndexPath(section: section, item: 0)) : nil
    }

    /// Removes the row at `path`, and its section if that empties it.
    private func takeOut(_ path: IndexPath, _ log: inout FollowLog) {
        let section = path.section, title = layout.titles[section]
        log.steps.append(
            .removedRow(
                path, layout.sections[section][path.item], hash: rowHashes[section][path.item], label: rowLabels[section][path.item]))
        removeRow(at: path)
        rowLabels[section].remove(at: path.item)
        if layout.sections[section].isEmpty {
            removeSection(at: section)
            rowLabels.remove(at: section)
            log.steps.append(.removedSection(section, title: title))
            log.shifts.append((section, false))
        } else if path.item == 0 {
            log.touched.insert(title)
        }
    }

    /// Inserts `row` at its place: in its title's section, or in a new one among the others
    /// by first rows.
    private func putIn(_ row: PlacedRow, hash: Int, _ log: inout FollowLog) -> (path: IndexPath, step: Int) {
        let title = title(of: row.object)
        let new = Place(row.object, label: row.label, descriptors: sortDescriptors)
        let section: Int
        if let existing = currentSection(of: title, log) {
            section = existing
        } else {
            var low = 0, high = layout.sections.count
            while low < high {
                let middle = (low + high) / 2
                if let first = firstPlace(of: middle), first.precedes(new) { low = middle + 1 } else { high = middle }
            }
            insertSection(at: low, title: title, identity: title)
            rowLabels.insert([], at: low)
            log.steps.append(.insertedSection(low))
            log.shifts.append((low, true))
            log.created[title] = (low, log.shifts.count)
            section = low
        }
        let item = position(of: new, in: section)
        insertRow(row.object, hash: hash, at: IndexPath(section: section, item: item))
        rowLabels[section].insert(row.label, at: item)
        log.steps.append(.insertedRow(IndexPath(section: section, item: item)))
        if item == 0 { log.touched.insert(title) }
        return (IndexPath(section: section, item: item), log.steps.count - 1)
    }

    /// Where the section titled `title` is while a change is being applied, or nil.
    private func currentSection(of title: JSON, _ log: FollowLog) -> Int? {
        var section: Int, since: Int
        if let created = log.created[title] {
            (section, since) = created
        } else if let original = sectionOfTitle[title] {
            (section, since) = (original, 0)
        } else {
            return nil
        }
        for shift in log.shifts[since...] {
            if shift.inserted {
                if shift.at <= section { section += 1 }
            } else if shift.at == section {
                return nil
            } else if shift.at < section {
                section -= 1
            }
        }
        return section
    }

    /// Whether the sections are still in the order of their first rows, and the sections that
    /// were there before in their old order (a change set has no section moves). Only the
    /// sections touched can be out of place: the first rows of the others did not change.
    private func keepsSectionOrder(_ log: FollowLog) -> Bool {
        let sections = layout.sections.count
        for title in log.touched {
            guard let section = currentSection(of: title, log) else { continue }
            // A section of placeholders only is last; the others are in order of first rows.
            guard let first = firstPlace(of: section) else {
                if section == sections - 1 { continue } else { return false }
            }
            if section > 0 {
                guard let previous = firstPlace(of: section - 1), previous.precedes(first) else { return false }
            }
            if section + 1 < sections, let next = firstPlace(of: section + 1), !first.precedes(next) { return false }
            // The nearest sections that were there before, past any new ones.
            guard let original = sectionOfTitle[title] else { continue }
            var before = section - 1
            while before >= 0, sectionOfTitle[layout.titles[before]] == nil { before -= 1 }
            if before >= 0, sectionOfTitle[layout.titles[before]]! > original { return false }
            var after = section + 1
            while after < sections, sectionOfTitle[layout.titles[after]] == nil { after += 1 }
            if after < sections, sectionOfTitle[layout.titles[after]]! < original { return false }
        }
        return true
    }

    private func undo(_ log: FollowLog) {
        for step in log.steps.reversed() {
            switch step {
            case .insertedRow(let path):
                removeRow(at: path)
                rowLabels[path.section].remove(at: path.item)
            case .removedRow(let path, let object, let hash, let label):
                insertRow(object, hash: hash, at: path)
                rowLabels[path.section].insert(label, at: path.item)
            case .replacedRow(let path, let object, let label):
                replaceRow(at: path, with: object)
                rowLabels[path.section][path.item] = label
            case .insertedSection(let section):
                removeSection(at: section)
                rowLabels.remove(at: section)
            case .removedSection(let section, let title):
                insertSection(at: section, title: title, identity: title)
                rowLabels.insert([], at: section)
            }
        }
    }

    /// The moves among the rows that left their place and took another: those that changed
    /// section, or whose order among the rows of their section that stayed put changed. Of
    /// those that kept both, the longest run still in old order stays (the fewest moves).
    private func moves(
        _ relocated: [(from: IndexPath, to: IndexPath, sameSection: Bool)], departures: [IndexPath], arrivals: [IndexPath]
    ) -> [ChangeSet.Move] {
        var moves: [ChangeSet.Move] = [], steady: [ChangeSet.Move] = []
        for (from, to, sameSection) in relocated {
            // How many rows that stayed put come before it, before and after.
            let before = from.item - departures.filter { $0.section == from.section && $0.item < from.item }.count
            let after = to.item - arrivals.filter { $0.section == to.section && $0.item < to.item }.count
            if sameSection, before == after {
                steady.append(ChangeSet.Move(from: from, to: to))
            } else {
                moves.append(ChangeSet.Move(from: from, to: to))
            }
        }
        steady.sort { $0.to < $1.to }
        let kept = ChangeSet.longestIncreasingSubsequence(steady.map { $0.from.section << 32 | $0.from.item })
        for (position, move) in steady.enumerated() where !kept.contains(position) { moves.append(move) }
        return moves
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

    /// How many data rows of `section` come before `place`: where it goes, or where it is.
    private func position(of place: Place, in section: Int) -> Int {
        var low = 0, high = dataCount(section)
        while low < high {
            let middle = (low + high) / 2
            if self.place(at: IndexPath(section: section, item: middle)).precedes(place) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Where the row of `object` with `label` is, or nil if it is not there (then this source
    /// is not what the change expects, and everything is recomputed).
    private func locate(_ object: JSON, label: UInt64) -> IndexPath? {
        guard let section = sectionOfTitle[title(of: object)] else { return nil }
        let item = position(of: Place(object, label: label, descriptors: sortDescriptors), in: section)
        guard item < dataCount(section), rowLabels[section][item] == label else { return nil }
        return IndexPath(section: section, item: item)
    }
}

extension DataSource {
    /// The last row, or nil when there are none.
    var lastIndexPath: IndexPath? {
        guard let section = layout.sections.lastIndex(where: { !$0.isEmpty }) else { return nil }
        return IndexPath(section: section, item: layout.sections[section].count - 1)
    }
}
