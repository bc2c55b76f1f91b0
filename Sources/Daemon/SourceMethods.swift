import DataSources
import JSONKit
import JSONRPC

extension DataSourceError {
    var responseError: ResponseError { .invalidParams(message, data: detail) }
}

/// Runs a model call, turning its refusals into `-32602`.
private func model<T>(_ body: () throws(DataSourceError) -> T) throws(ResponseError) -> T {
    do {
        return try body()
    } catch {
        throw error.responseError
    }
}

extension Params {
    func indexPath(_ key: String = "indexPath") throws(ResponseError) -> IndexPath {
        let value = try required(key, expected: "[section, item], an array of two integers")
        guard let indexPath = IndexPath(json: value) else {
            throw Params.mistyped(key, expected: "[section, item], an array of two integers", got: value)
        }
        return indexPath
    }

    func objectArray(_ key: String) throws(ResponseError) -> [JSON] {
        let value = try required(key, expected: "an array")
        guard let list = value.arrayValue else { throw Params.mistyped(key, expected: "an array", got: value) }
        return list
    }
}

extension Daemon: DataSourceObserver {
    static func registerSourceMethods(into table: inout [String: Handler]) {
        func method(_ name: String, _ body: @escaping (Daemon, Params) throws -> JSON) {
            table[name] = { daemon, request, _ in .result(try body(daemon, try Params(request.params))) }
        }
        method("createSource") { daemon, params in
            let source = try model { () throws(DataSourceError) in try daemon.registry.create(params.object) }
            source.addObserver(daemon)
            daemon.logger.info("created source", metadata: ["name": "\(source.name)", "kind": "\(source.kind)"])
            return source.summary
        }
        method("destroySource") { daemon, params in
            let name = try params.string("name")
            let cascade = try params.optionalBool("cascade") ?? false
            let destroyed = try model { () throws(DataSourceError) in try daemon.registry.destroy(name, cascade: cascade) }
            return ["destroyed": .array(destroyed.map { JSON($0) })]
        }
        method("listSources") { daemon, _ in
            .array(daemon.registry.all.map { ["name": JSON($0.name), "kind": JSON($0.kind)] })
        }
        method("describeSource") { daemon, params in try daemon.source(params).summary }
        method("numberOfSections") { daemon, params in JSON(try daemon.source(params).numberOfSections) }
        method("numberOfObjectsInSection") { daemon, params in
            let source = try daemon.source(params)
            let section = try params.integer("section")
            guard section >= 0, section < source.numberOfSections else {
                throw ResponseError.invalidParams("\"section\" must be in 0..<\(source.numberOfSections), got \(section)",
                                                  data: ["field": "section", "numberOfSections": JSON(source.numberOfSections)])
            }
            return JSON(source.numberOfObjects(inSection: section))
        }
        method("sectionTitles") { daemon, params in .array(try daemon.source(params).sectionTitles) }
        method("objectAtIndexPath") { daemon, params in
            let source = try daemon.source(params)
            let indexPath = try params.indexPath()
            return try model { () throws(DataSourceError) in try source.object(at: indexPath) }
        }
        method("indexPathForObject") { daemon, params in
            let source = try daemon.source(params)
            let object = try params.object["object"] ?? { throw Params.missing("object", expected: "a JSON value") }()
            return source.indexPath(for: object)?.json ?? .null
        }
        method("objectsInSection") { daemon, params in
            let source = try daemon.source(params)
            let section = try params.integer("section")
            let start = try params.optionalInteger("start") ?? 0
            let count = try params.optionalInteger("count", in: 0...Int.max)
            let objects = try model { () throws(DataSourceError) in try source.objects(inSection: section, start: start, count: count) }
            return ["section": JSON(section), "start": JSON(start), "objects": .array(objects),
                    "numberOfObjects": JSON(source.numberOfObjects(inSection: section))]
        }
        method("allObjects") { daemon, params in .array(try daemon.source(params).allObjects) }
        method("cancelFetch") { daemon, params in
            let source = try daemon.source(params)
            let wasFetching = source.isFetching
            source.cancelFetch()
            return ["cancelled": JSON(wasFetching && !source.isFetching)]
        }
        method("willDisplayObjectAtIndexPath") { daemon, params in
            let source = try daemon.source(params)
            let indexPath = try params.indexPath()
            try model { () throws(DataSourceError) in try source.validate(indexPath) }
            let wasFetching = source.isFetching
            source.willDisplayObject(at: indexPath)
            return ["fetchStarted": JSON(!wasFetching && source.isFetching)]
        }
        method("replaceObjects") { daemon, params in
            let source = try daemon.simpleSource(params)
            source.replaceObjects(try params.objectArray("objects"))
            return JSON(source.objects.count)
        }
        method("insertObjects") { daemon, params in
            let source = try daemon.simpleSource(params)
            let objects = try params.objectArray("objects")
            let index = try params.optionalInteger("index") ?? source.objects.count
            try model { () throws(DataSourceError) in try source.insert(objects, at: index) }
            return JSON(source.objects.count)
        }
        method("removeObjects") { daemon, params in
            let source = try daemon.simpleSource(params)
            let index = try params.integer("index")
            let count = try params.optionalInteger("count") ?? 1
            try model { () throws(DataSourceError) in try source.remove(at: index, count: count) }
            return JSON(source.objects.count)
        }
        method("updateObjects") { daemon, params in
            let source = try daemon.simpleSource(params)
            let objects = try params.objectArray("objects")
            try model { () throws(DataSourceError) in try source.update(objects) }
            return JSON(source.objects.count)
        }
        method("fetchNextPage") { daemon, params in
            let source = try daemon.source(params)
            guard let paginated = source as? PaginatedDataSource else {
                throw ResponseError.invalidParams("\"source\" must name a paginated source; \"\(source.name)\" is \(source.kind)",
                                                  data: ["field": "source", "expected": "a paginated source", "got": JSON(source.kind)])
            }
            if let refusal = paginated.nextPageRefusal { return ["started": false, "reason": JSON(refusal)] }
            paginated.fetchNextPage()
            return ["started": true]
        }
        table["fetchData"] = { daemon, request, token in try daemon.fetchData(try Params(request.params), token) }
    }

    func source(_ params: Params) throws(ResponseError) -> DataSource {
        let name = try params.string("source")
        return try model { () throws(DataSourceError) in try registry.source(named: name) }
    }

    func simpleSource(_ params: Params) throws(ResponseError) -> SimpleDataSource {
        let source = try self.source(params)
        guard let simple = source as? SimpleDataSource else {
            throw ResponseError.invalidParams("\"source\" must name a simple source to be edited; \"\(source.name)\" is \(source.kind)",
                                              data: ["field": "source", "expected": "a simple source", "got": JSON(source.kind)])
        }
        return simple
    }

    /// Starts a load cycle. With `wait: true` the answer waits for the cycle's final event.
    private func fetchData(_ params: Params, _ token: RequestToken) throws -> Reply {
        let source = try self.source(params)
        guard try params.optionalBool("wait") == true else {
            source.fetchData()
            return .result(["isFetching": JSON(source.isFetching)])
        }
        // Registered first, so a cycle that ends during fetchData (local sources) answers it too.
        fetchWaiters[ObjectIdentifier(source), default: []].append(token)
        source.fetchData()
        return .deferred
    }

    public func dataSource(_ source: DataSource, emitted event: DataSourceEvent) {
        let name = JSON(source.name)
        switch event {
        case .willLoadData:
            send(Notification(method: "dataSource/willLoadData", params: ["source": name]))
        case .didPartiallyLoad:
            send(Notification(method: "dataSource/didPartiallyLoad", params: ["source": name]))
        case .finishedLoading:
            send(Notification(method: "dataSource/finishedLoading", params: ["source": name]))
            answerWaiters(of: source, ["isFetching": false, "outcome": "finished"])
        case .failedWithError(let error):
            send(Notification(method: "dataSource/failedWithError", params: ["source": name, "error": error]))
            answerWaiters(of: source, ["isFetching": false, "outcome": "failed", "error": error])
        case .didChange(let changes):
            send(Notification(method: "dataSource/didChange", params: ["source": name, "changes": changes.json]))
        }
    }

    private func answerWaiters(of source: DataSource, _ result: JSON) {
        for token in fetchWaiters.removeValue(forKey: ObjectIdentifier(source)) ?? [] {
            finish(token, .success(result))
        }
    }
}
