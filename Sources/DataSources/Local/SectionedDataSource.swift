import JSONKit

/// Its child's objects, sorted, then grouped into sections by the value at a key path.
///
/// Unlike the original, which grouped only adjacent runs: all objects with equal values
/// share one section, sections in order of first appearance, titled by the value; objects
/// lacking the key share one section titled `null`.
///
/// It follows its child: every change or load of the child recomputes the sections and
/// emits this source's own change set and load events, including failures.
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

    /// Fetches the child; this source's cycle mirrors the child's.
    public override func fetchData() { child.fetchData() }
    public override func cancelFetch() { child.cancelFetch() }
    public override func willDisplayObject(at indexPath: IndexPath) {
        // The last row here may not be the child's last row: ask about the child's.
        guard indexPath == lastIndexPath, let last = child.lastIndexPath else { return }
        child.willDisplayObject(at: last)
    }

    public override var state: [(String, JSON)] {
        [("source", JSON(child.name)), ("sectioningKey", JSON(sectioningKey.description)),
         ("sortDescriptors", .array(sortDescriptors.map(\.json)))]
    }

    public func dataSource(_ source: DataSource, emitted event: DataSourceEvent) {
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
            if isFetching { emit(.failedWithError(error.isObject && error["source"] == nil ? error.setting("source", to: JSON(child.name)) : error)) }
        case .didChange:
            recompute()
        }
    }

    func recompute() {
        // Placeholders are not data: they stay after the sorted objects (a trailing loading
        // row stays at the bottom), in a section of their own unless objects lack the key too.
        let objects = child.allObjects
        let sorted = SortDescriptor.sorted(objects.filter { Placeholder.kind(of: $0) == nil }, by: sortDescriptors)
            + objects.filter { Placeholder.kind(of: $0) != nil }
        var sectionOfKey: [JSON: Int] = [:]
        var sections: [[JSON]] = []
        var titles: [JSON] = []
        for object in sorted {
            let key = object.value(at: sectioningKey) ?? .null
            if let section = sectionOfKey[key] {
                sections[section].append(object)
            } else {
                sectionOfKey[key] = sections.count
                sections.append([object])
                titles.append(key)
            }
        }
        replaceLayout(Layout(sections: sections, titles: titles))
    }
}

extension DataSource {
    /// The last row, or nil when there are none.
    var lastIndexPath: IndexPath? {
        guard let section = layout.sections.lastIndex(where: { !$0.isEmpty }) else { return nil }
        return IndexPath(section: section, item: layout.sections[section].count - 1)
    }
}
