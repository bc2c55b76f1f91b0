import JSONKit

/// What a source tells its observers: Instant Cocoa's delegate methods, plus changes.
///
/// For every load cycle a source emits exactly one `willLoadData`, then zero or more
/// `didPartiallyLoad`, then exactly one of `finishedLoading` / `failedWithError`.
/// `didChange` may come at any time, inside a cycle or not.
public enum DataSourceEvent: Sendable {
    case willLoadData
    case didPartiallyLoad
    case finishedLoading
    case failedWithError(JSON)
    case didChange(ChangeSet)
}

public protocol DataSourceObserver: AnyObject {
    func dataSource(_ source: DataSource, emitted event: DataSourceEvent)
}

/// Instant Cocoa's `<ICDataSource>`: objects behind index paths, and a load cycle.
///
/// Every source lives on one thread (the daemon's main loop); events are delivered
/// synchronously to observers in the order they registered. The daemon registers first,
/// when it creates a source, and parents register after, so for a synchronous chain a
/// child's events reach the daemon before its parent reacts to them.
public class DataSource {
    public let name: String
    public let identity: Identity
    public private(set) var layout = Layout.empty
    public private(set) var isFetching = false
    private var index = IdentityIndex()
    private var observers: [Observation] = []

    private struct Observation {
        weak var observer: DataSourceObserver?
    }

    init(name: String, identity: Identity) {
        self.name = name
        self.identity = identity
    }

    // MARK: What every kind answers

    /// `simple`, `sectioned`, `multi`, `remote`, `paginated`.
    public var kind: String { fatalError("subclass") }

    /// The sources this one is built on, in order.
    public var children: [DataSource] { [] }

    public var numberOfSections: Int { layout.sections.count }

    public func numberOfObjects(inSection section: Int) -> Int {
        layout.sections.indices.contains(section) ? layout.sections[section].count : 0
    }

    public var sectionTitles: [JSON] { layout.titles }

    /// Every object, section after section.
    public var allObjects: [JSON] { layout.sections.flatMap { $0 } }

    public func object(at indexPath: IndexPath) throws(DataSourceError) -> JSON {
        try validate(indexPath)
        return layout.sections[indexPath.section][indexPath.item]
    }

    /// Where an object with the same identity is, or nil.
    public func indexPath(for object: JSON) -> IndexPath? {
        index.indexPath(of: identity.of(object))
    }

    /// Up to `count` objects of `section` from `start`.
    public func objects(inSection section: Int, start: Int, count: Int?) throws(DataSourceError) -> [JSON] {
        guard layout.sections.indices.contains(section) else {
            throw DataSourceError(field: "section", message: "\"section\" \(section) is out of range: \(rangeText(numberOfSections))",
                                  detail: [("numberOfSections", JSON(numberOfSections))])
        }
        let objects = layout.sections[section]
        guard start >= 0, start <= objects.count else {
            throw DataSourceError(field: "start", message: "\"start\" \(start) is out of range: 0...\(objects.count)",
                                  detail: [("numberOfObjects", JSON(objects.count))])
        }
        let end = count.map { min(objects.count, start + max(0, $0)) } ?? objects.count
        return Array(objects[start..<end])
    }

    public func validate(_ indexPath: IndexPath) throws(DataSourceError) {
        guard layout.sections.indices.contains(indexPath.section) else {
            throw DataSourceError(field: "indexPath", message: "\"indexPath\" \(indexPath): section \(indexPath.section) is out of range: \(rangeText(numberOfSections))",
                                  detail: [("numberOfSections", JSON(numberOfSections))])
        }
        let count = layout.sections[indexPath.section].count
        guard indexPath.item >= 0, indexPath.item < count else {
            throw DataSourceError(field: "indexPath", message: "\"indexPath\" \(indexPath): item \(indexPath.item) is out of range for section \(indexPath.section): \(rangeText(count))",
                                  detail: [("numberOfObjects", JSON(count))])
        }
    }

    private func rangeText(_ count: Int) -> String { count == 0 ? "it has none" : "0..<\(count)" }

    /// Starts a load cycle.
    public func fetchData() { fatalError("subclass") }

    /// Stops a load in flight; local sources have none.
    public func cancelFetch() {}

    /// Called on the last row being displayed; paginated sources load their next page.
    public func willDisplayObject(at indexPath: IndexPath) {}

    /// The kind's own state for `describeSource`.
    public var state: [(String, JSON)] { [] }

    public var summary: JSON {
        var members: [(String, JSON)] = [
            ("name", JSON(name)),
            ("kind", JSON(kind)),
            ("numberOfSections", JSON(numberOfSections)),
            ("sectionTitles", .array(sectionTitles)),
            ("counts", .array(layout.sections.map { JSON($0.count) })),
            ("isFetching", JSON(isFetching)),
        ]
        if let key = identity.key { members.append(("identityKey", JSON(key.description))) }
        if !children.isEmpty { members.append(("children", .array(children.map { JSON($0.name) }))) }
        return .object(members + state)
    }

    // MARK: Observers

    public func addObserver(_ observer: DataSourceObserver) {
        observers.append(Observation(observer: observer))
    }

    public func removeObserver(_ observer: DataSourceObserver) {
        observers.removeAll { $0.observer === observer || $0.observer == nil }
    }

    func emit(_ event: DataSourceEvent) {
        switch event {
        case .willLoadData: isFetching = true
        case .finishedLoading, .failedWithError: isFetching = false
        case .didPartiallyLoad, .didChange: break
        }
        for observation in observers {
            observation.observer?.dataSource(self, emitted: event)
        }
    }

    /// Replaces the rows and tells observers what changed (nothing, if nothing did).
    func replaceLayout(_ new: Layout) {
        let changes: ChangeSet
        if layout.sections.count == 1, new.sections.count == 1, layout.sectionIdentities == new.sectionIdentities {
            // One section on both sides (simple, remote, paginated): diff and re-index only
            // what lies between the unchanged head and tail, so appending a page to a long
            // list costs the page, not the list.
            let old = layout.sections[0], rows = new.sections[0]
            let shorter = min(old.count, rows.count)
            var head = 0
            while head < shorter, old[head] == rows[head] { head += 1 }
            var tail = 0
            while tail < shorter - head, old[old.count - 1 - tail] == rows[rows.count - 1 - tail] { tail += 1 }
            let oldMiddle = old[head..<old.count - tail], newMiddle = rows[head..<rows.count - tail]
            changes = ChangeSet.between(old: Layout(sections: [Array(oldMiddle)], titles: [""]),
                                        new: Layout(sections: [Array(newMiddle)], titles: [""]),
                                        identity: identity).shifted(by: head)
            index.reindex(section: 0, from: head, old: old[head...], new: rows[head...], identity: identity)
        } else {
            changes = ChangeSet.between(old: layout, new: new, identity: identity)
            index = IdentityIndex(sections: new.sections, identity: identity)
        }
        layout = new
        if !changes.isEmpty { emit(.didChange(changes)) }
    }
}
