import JSONKit

/// The named sources of one session: creation from `createSource` params, lookup, and
/// destruction that respects who is built on whom.
public final class SourceRegistry {
    /// Builds the kinds whose data is remote; the daemon supplies it, with its HTTP client.
    public typealias RemoteFactory = (_ kind: String, _ name: String, _ identity: Identity, _ params: JSON) throws(DataSourceError) -> DataSource

    private var sources: [String: DataSource] = [:]
    private var creationOrder: [String] = []
    private let remoteFactory: RemoteFactory?

    public static let localKinds = ["simple", "sectioned", "multi"]
    public static let remoteKinds = ["remote", "paginated"]

    public init(remoteFactory: RemoteFactory? = nil) {
        self.remoteFactory = remoteFactory
    }

    public var kinds: [String] { Self.localKinds + (remoteFactory == nil ? [] : Self.remoteKinds) }

    /// Every source, oldest first.
    public var all: [DataSource] { creationOrder.compactMap { sources[$0] } }

    public func source(named name: String, field: String = "source") throws(DataSourceError) -> DataSource {
        guard let source = sources[name] else {
            throw DataSourceError(field: field, message: "\"\(field)\": no source named \"\(name)\"\(sources.isEmpty ? " (there are none)" : "")",
                                  detail: [("name", JSON(name)), ("sources", .array(creationOrder.map { JSON($0) }))])
        }
        return source
    }

    /// The sources built directly on `source`.
    public func parents(of source: DataSource) -> [DataSource] {
        all.filter { candidate in candidate.children.contains { $0 === source } }
    }

    // MARK: Creation

    public func create(_ params: JSON) throws(DataSourceError) -> DataSource {
        guard let name = params["name"]?.stringValue, !name.isEmpty else {
            throw DataSourceError.expected("name", "a non-empty string", got: params["name"])
        }
        guard sources[name] == nil else {
            throw DataSourceError(field: "name", message: "a source named \"\(name)\" already exists", detail: [("name", JSON(name))])
        }
        guard let kind = params["kind"]?.stringValue else {
            throw DataSourceError.expected("kind", "one of \(kinds.joined(separator: ", "))", got: params["kind"])
        }
        var identity = Identity(key: nil)
        let explicitIdentity = params["identityKey"].map { !$0.isNull } ?? false
        if explicitIdentity, let key = params["identityKey"] {
            guard let text = key.stringValue, !text.isEmpty else { throw DataSourceError.expected("identityKey", "a non-empty key path string", got: key) }
            identity = Identity(key: KeyPath(text))
        }
        /// Without its own identityKey, a composed source uses its children's when they agree.
        func inherited(from children: [DataSource]) -> Identity {
            guard !explicitIdentity, let first = children.first?.identity.key,
                  children.allSatisfy({ $0.identity.key == first }) else { return identity }
            return Identity(key: first)
        }
        let source: DataSource
        switch kind {
        case "simple":
            let objects = params["objects"] ?? []
            guard let list = objects.arrayValue else { throw DataSourceError.expected("objects", "an array", got: objects) }
            source = SimpleDataSource(name: name, identity: identity, objects: list)
        case "sectioned":
            let child = try self.child(params["source"], field: "source", parent: name)
            guard let key = params["sectioningKey"]?.stringValue, !key.isEmpty else {
                throw DataSourceError.expected("sectioningKey", "a non-empty key path string", got: params["sectioningKey"])
            }
            source = SectionedDataSource(name: name, identity: inherited(from: [child]), child: child, sectioningKey: KeyPath(key),
                                         sortDescriptors: try sortDescriptors(params["sortDescriptors"]))
        case "multi":
            guard let names = params["sources"]?.arrayValue else {
                throw DataSourceError.expected("sources", "an array of source names", got: params["sources"])
            }
            var children: [DataSource] = []
            for (index, value) in names.enumerated() {
                let child = try self.child(value, field: "sources[\(index)]", parent: name)
                guard !children.contains(where: { $0 === child }) else {
                    throw DataSourceError(field: "sources[\(index)]", message: "\"sources[\(index)]\": \"\(child.name)\" is listed twice")
                }
                children.append(child)
            }
            var preserve = false
            if let flag = params["preserveSections"], !flag.isNull {
                guard let value = flag.boolValue else { throw DataSourceError.expected("preserveSections", "a boolean", got: flag) }
                preserve = value
            }
            source = MultiDataSource(name: name, identity: inherited(from: children), sources: children, preserveSections: preserve)
        case "remote", "paginated":
            guard let remoteFactory else { fallthrough }
            source = try remoteFactory(kind, name, identity, params)
        default:
            throw DataSourceError(field: "kind", message: "\"kind\" must be one of \(kinds.joined(separator: ", ")), got \"\(kind)\"",
                                  detail: [("expected", .array(kinds.map { JSON($0) })), ("got", JSON(kind))])
        }
        sources[name] = source
        creationOrder.append(name)
        return source
    }

    private func child(_ value: JSON?, field: String, parent: String) throws(DataSourceError) -> DataSource {
        guard let childName = value?.stringValue else { throw DataSourceError.expected(field, "the name of an existing source", got: value) }
        guard childName != parent else {
            throw DataSourceError(field: field, message: "\"\(field)\": a source cannot be built on itself (\"\(parent)\" → \"\(parent)\" is a cycle)",
                                  detail: [("cycle", [JSON(parent), JSON(parent)])])
        }
        return try source(named: childName, field: field)
    }

    private func sortDescriptors(_ value: JSON?) throws(DataSourceError) -> [SortDescriptor] {
        guard let value, !value.isNull else { return [] }
        guard let list = value.arrayValue else { throw DataSourceError.expected("sortDescriptors", "an array of {keyPath, ascending}", got: value) }
        var descriptors: [SortDescriptor] = []
        for (index, element) in list.enumerated() {
            let field = "sortDescriptors[\(index)]"
            guard element.isObject else { throw DataSourceError.expected(field, "an object {keyPath, ascending}", got: element) }
            guard let keyPath = element["keyPath"]?.stringValue, !keyPath.isEmpty else {
                throw DataSourceError.expected("\(field).keyPath", "a non-empty key path string", got: element["keyPath"])
            }
            var ascending = true
            if let flag = element["ascending"], !flag.isNull {
                guard let value = flag.boolValue else { throw DataSourceError.expected("\(field).ascending", "a boolean", got: flag) }
                ascending = value
            }
            descriptors.append(SortDescriptor(keyPath: KeyPath(keyPath), ascending: ascending))
        }
        return descriptors
    }

    // MARK: Destruction

    /// Destroys a source; refused while others are built on it, unless `cascade`, which
    /// destroys those too (and theirs). Returns the names destroyed, dependents first.
    public func destroy(_ name: String, cascade: Bool) throws(DataSourceError) -> [String] {
        let target = try source(named: name, field: "name")
        let dependents = parents(of: target)
        if !dependents.isEmpty, !cascade {
            let names = dependents.map(\.name)
            throw DataSourceError(field: "name", message: "\"\(name)\" is used by \(names.map { "\"\($0)\"" }.joined(separator: ", ")); destroy them first or pass \"cascade\": true",
                                  detail: [("parents", .array(names.map { JSON($0) }))])
        }
        var destroyed: [String] = []
        for dependent in dependents where sources[dependent.name] != nil {
            destroyed += try destroy(dependent.name, cascade: true)
        }
        target.cancelFetch()
        for child in target.children {
            if let observer = target as? DataSourceObserver { child.removeObserver(observer) }
        }
        sources[name] = nil
        creationOrder.removeAll { $0 == name }
        return destroyed + [name]
    }
}
