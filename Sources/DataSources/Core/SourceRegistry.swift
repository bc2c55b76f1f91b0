import JSONKit

/// The named sources of one session: creation from checked specs, lookup, and
/// destruction that respects who is built on whom.
package final class SourceRegistry {
    /// Builds the kinds whose data is remote; the daemon supplies it, with its HTTP client.
    package typealias RemoteFactory = (_ name: String, _ identity: Identity, _ kind: SourceSpec.Kind) -> DataSource

    private var sources: [String: DataSource] = [:]
    private var creationOrder: [String] = []
    private let remoteFactory: RemoteFactory?

    package static let localKinds = ["simple", "sectioned", "multi", "filtered"]
    package static let remoteKinds = ["remote", "paginated"]

    package init(remoteFactory: RemoteFactory? = nil) {
        self.remoteFactory = remoteFactory
    }

    package var kinds: [String] { Self.localKinds + (remoteFactory == nil ? [] : Self.remoteKinds) }

    /// Every source, oldest first.
    package var all: [DataSource] { creationOrder.compactMap { sources[$0] } }

    package func source(named name: String, field: String = "source") throws(Refusal) -> DataSource {
        guard let source = sources[name] else {
            throw .noSuchSource(argument: field, name: name, existing: creationOrder)
        }
        return source
    }

    /// The sources built directly on `source`.
    package func parents(of source: DataSource) -> [DataSource] {
        all.filter { candidate in candidate.children.contains { $0 === source } }
    }

    // MARK: Creation

    package func create(_ spec: SourceSpec) throws(Refusal) -> DataSource {
        let name = spec.name
        guard sources[name] == nil else {
            throw .nameTaken(name)
        }
        let identity = Identity(key: spec.identityKey)
        /// Without its own identityKey, a composed source uses its children's when they agree.
        func inherited(from children: [DataSource]) -> Identity {
            guard spec.identityKey == nil, let first = children.first?.identity.key,
                children.allSatisfy({ $0.identity.key == first })
            else { return identity }
            return Identity(key: first)
        }
        let source: DataSource
        switch spec.kind {
        case .simple(let objects):
            source = SimpleDataSource(name: name, identity: identity, objects: objects)
        case .sectioned(let childName, let sectioningKey, let sortDescriptors):
            let child = try self.child(childName, field: "source", parent: name)
            source = SectionedDataSource(
                name: name, identity: inherited(from: [child]), child: child, sectioningKey: sectioningKey,
                sortDescriptors: sortDescriptors)
        case .multi(let names, let preserveSections):
            var children: [DataSource] = []
            for (index, childName) in names.enumerated() {
                let field = "sources[\(index)]"
                let child = try self.child(childName, field: field, parent: name)
                guard !children.contains(where: { $0 === child }) else {
                    throw .listedTwice(argument: field, name: childName)
                }
                children.append(child)
            }
            source = MultiDataSource(name: name, identity: inherited(from: children), sources: children, preserveSections: preserveSections)
        case .filtered(let childName, let filter, let match, let fill):
            let child = try self.child(childName, field: "source", parent: name)
            source = FilteredDataSource(
                name: name, identity: inherited(from: [child]), child: child, filter: filter, match: match, fill: fill)
        case .remote, .paginated:
            guard let remoteFactory else {
                throw .kindNotServed(kind: spec.kind.name, served: kinds)
            }
            source = remoteFactory(name, identity, spec.kind)
        }
        sources[name] = source
        creationOrder.append(name)
        return source
    }

    private func child(_ childName: String, field: String, parent: String) throws(Refusal) -> DataSource {
        guard childName != parent else {
            throw .builtOnItself(argument: field, name: parent)
        }
        return try source(named: childName, field: field)
    }

    // MARK: Destruction

    /// Destroys a source; refused while others are built on it, unless `cascade`, which
    /// destroys those too (and theirs). Returns the names destroyed, dependents first.
    package func destroy(_ name: String, cascade: Bool) throws(Refusal) -> [String] {
        let target = try source(named: name, field: "name")
        let dependents = parents(of: target)
        if !dependents.isEmpty, !cascade {
            let names = dependents.map(\.name)
            throw .stillUsed(name: name, by: names)
        }
        var destroyed: [String] = []
        for dependent in dependents where sources[dependent.name] != nil {
            destroyed += try destroy(dependent.name, cascade: true)
        }
        target.cancelFetch(reason: .destroySource)
        for child in target.children {
            if let observer = target as? DataSourceObserver { child.removeObserver(observer) }
        }
        sources[name] = nil
        creationOrder.removeAll { $0 == name }
        return destroyed + [name]
    }
}
