import DataSources
import JSONKit
import JSONRPC

extension Daemon {
    static func registerSourceMethods(into table: inout MethodTable) {
        table.on(Methods.createSource) { daemon, params in
            let source = try refusalsAsFieldErrors { () throws(DataSourceError) in try daemon.registry.create(params.spec) }
            source.addObserver(daemon)
            if let remote = source as? RemoteCollection {
                if let cache = daemon.cache, let key = params.cacheKey {
                    remote.attachCache(cache, key: key, warn: { [logger = daemon.logger] in logger.warning("\($0)") })
                }
                if let interval = remote.configuration.refreshIntervalSeconds { daemon.setRefreshInterval(interval, of: remote) }
            }
            daemon.logger.info("created source", metadata: ["name": "\(source.name)", "kind": "\(source.kind)"])
            return source.describe()
        }
        table.on(Methods.destroySource) { daemon, params in
            let names = try refusalsAsFieldErrors { () throws(DataSourceError) in
                try daemon.registry.destroy(params.name, cascade: params.cascade)
            }
            for name in names { daemon.refreshTimers.disarm(name) }
            return DestroyedSources(names: names)
        }
        table.on(Methods.setRefreshInterval) { daemon, params in
            let source = try daemon.source(params.source)
            guard let remote = source as? RemoteCollection else {
                throw FieldError(field: "source", expected: "a remote or paginated source", got: JSON(source.name),
                                 message: "\"source\" must name a remote or paginated source to refresh; \"\(source.name)\" is \(source.kind)")
            }
            daemon.setRefreshInterval(params.seconds, of: remote)
            return remote.describe()
        }
        table.on(Methods.listSources) { daemon, _ in
            daemon.registry.all.map { SourceListing(name: $0.name, kind: $0.kind) }
        }
        table.on(Methods.describeSource) { daemon, params in try daemon.source(params.source).describe() }

        table.on(Methods.numberOfSections) { daemon, params in try daemon.source(params.source).numberOfSections }
        table.on(Methods.numberOfObjectsInSection) { daemon, params in
            let source = try daemon.source(params.source)
            try refusalsAsFieldErrors { () throws(DataSourceError) in try source.validate(section: params.section) }
            return source.numberOfObjects(inSection: params.section)
        }
        table.on(Methods.sectionTitles) { daemon, params in try daemon.source(params.source).sectionTitles }
        table.on(Methods.objectAtIndexPath) { daemon, params in
            let source = try daemon.source(params.source)
            let object = try refusalsAsFieldErrors { () throws(DataSourceError) in try source.object(at: params.indexPath) }
            return RevisionedRead(member: "object", value: object, revision: params.withRevision ? source.revision : nil)
        }
        table.on(Methods.indexPathForObject) { daemon, params in try daemon.source(params.source).indexPath(for: params.object) }
        table.on(Methods.objectsInSection) { daemon, params in
            let source = try daemon.source(params.source)
            let objects = try refusalsAsFieldErrors { () throws(DataSourceError) in
                try source.objects(inSection: params.section, start: params.start, count: params.count)
            }
            return SectionSlice(section: params.section, start: params.start, objects: objects,
                                numberOfObjects: source.numberOfObjects(inSection: params.section), revision: source.revision)
        }
        table.on(Methods.allObjects) { daemon, params in
            let source = try daemon.source(params.source)
            return RevisionedRead(member: "objects", value: .array(source.allObjects), revision: params.withRevision ? source.revision : nil)
        }

        table.on(Methods.replaceObjects) { daemon, params in
            let source = try daemon.simpleSource(params.source)
            source.replaceObjects(params.objects)
            return source.objects.count
        }
        table.on(Methods.insertObjects) { daemon, params in
            let source = try daemon.simpleSource(params.source)
            try refusalsAsFieldErrors { () throws(DataSourceError) in try source.insert(params.objects, at: params.index ?? source.objects.count) }
            return source.objects.count
        }
        table.on(Methods.removeObjects) { daemon, params in
            let source = try daemon.simpleSource(params.source)
            try refusalsAsFieldErrors { () throws(DataSourceError) in try source.remove(at: params.index, count: params.count) }
            return source.objects.count
        }
        table.on(Methods.updateObjects) { daemon, params in
            let source = try daemon.simpleSource(params.source)
            try refusalsAsFieldErrors { () throws(DataSourceError) in try source.update(params.objects) }
            return source.objects.count
        }

        table.on(Methods.fetchData) { daemon, params, answer in try daemon.fetchData(params, answer) }
        table.on(Methods.cancelFetch) { daemon, params in
            let source = try daemon.source(params.source)
            let wasFetching = source.isFetching
            source.cancelFetch()
            return CancelResult(cancelled: wasFetching && !source.isFetching)
        }
        table.on(Methods.fetchNextPage) { daemon, params in
            let source = try daemon.source(params.source)
            guard let paginated = source as? PaginatedDataSource else {
                throw FieldError(field: "source", expected: "a paginated source", got: JSON(source.name),
                                 message: "\"source\" must name a paginated source; \"\(source.name)\" is \(source.kind)")
            }
            if let refusal = paginated.nextPageRefusal { return NextPageResult(refusal: refusal) }
            paginated.fetchNextPage()
            return NextPageResult(refusal: nil)
        }
        table.on(Methods.willDisplayObjectAtIndexPath) { daemon, params in
            let source = try daemon.source(params.source)
            try refusalsAsFieldErrors { () throws(DataSourceError) in try source.validate(params.indexPath) }
            let wasFetching = source.isFetching
            source.willDisplayObject(at: params.indexPath)
            return DisplayResult(fetchStarted: !wasFetching && source.isFetching)
        }
    }

    func source(_ name: String) throws(FieldError) -> DataSource {
        try refusalsAsFieldErrors { () throws(DataSourceError) in try registry.source(named: name) }
    }

    func simpleSource(_ name: String) throws(FieldError) -> SimpleDataSource {
        let source = try self.source(name)
        guard let simple = source as? SimpleDataSource else {
            throw FieldError(field: "source", expected: "a simple source", got: JSON(source.name),
                             message: "\"source\" must name a simple source to be edited; \"\(source.name)\" is \(source.kind)")
        }
        return simple
    }

    /// Starts a load cycle. With `wait: true` the answer waits for this cycle's final event.
    private func fetchData(_ params: FetchDataParams, _ answer: PendingAnswer<FetchDataResult>) throws -> Reply<FetchDataResult> {
        let source = try self.source(params.source)
        guard params.wait else {
            source.fetchData()
            return .now(.started(isFetching: source.isFetching))
        }
        // Registered before the cycle starts (a local source's cycle ends within fetchData), but
        // armed only by this cycle's willLoadData: the final event of a load this fetchData
        // supersedes must not answer it.
        fetchWaiters[ObjectIdentifier(source), default: []].append(FetchWaiter(answer: answer))
        source.fetchData()
        return .later
    }
}

extension Daemon: DataSourceObserver {
    public func dataSource(_ source: DataSource, emitted event: DataSourceEvent) {
        let wireEvent: SourceNotification.Event
        switch event {
        case .willLoadData: wireEvent = .willLoadData
        case .didPartiallyLoad: wireEvent = .didPartiallyLoad
        case .finishedLoading: wireEvent = .finishedLoading
        case .failedWithError(let failure): wireEvent = .failedWithError(failure)
        case .didChange(let changes): wireEvent = .didChange(changes, revision: source.revision, values: changeValues(of: changes, in: source))
        case .didChangeFreshness:
            guard let remote = source as? RemoteCollection else { return }
            wireEvent = .didChangeFreshness(stale: remote.isStale, cachedAt: remote.cachedAt)
        }
        send(SourceNotification(source: source.name, event: wireEvent).notification)
        switch event {
        case .willLoadData: armWaiters(of: source)
        case .finishedLoading: answerWaiters(of: source, .finished)
        case .failedWithError(let failure): answerWaiters(of: source, .failed(failure))
        case .didPartiallyLoad, .didChange, .didChangeFreshness: break
        }
    }

    /// The inserted and updated rows, when the client asked for them and they fit its limit.
    private func changeValues(of changes: ChangeSet, in source: DataSource) -> SourceNotification.ChangeValues? {
        guard let limit = changeValuesLimit else { return nil }
        var bytes = 0
        func rows(_ paths: [IndexPath]) -> [JSON]? {
            var rows: [JSON] = []
            rows.reserveCapacity(paths.count)
            for path in paths {
                guard let row = try? source.object(at: path) else { return nil }
                bytes += row.encoded().count
                if bytes > limit { return nil }
                rows.append(row)
            }
            return rows
        }
        guard let inserted = rows(changes.inserted), let updated = rows(changes.updated) else { return nil }
        return SourceNotification.ChangeValues(inserted: inserted, updated: updated)
    }

    private func armWaiters(of source: DataSource) {
        guard var waiters = fetchWaiters[ObjectIdentifier(source)] else { return }
        for index in waiters.indices { waiters[index].armed = true }
        fetchWaiters[ObjectIdentifier(source)] = waiters
    }

    /// Answers the waits armed by the cycle that just ended; the others wait for their own.
    private func answerWaiters(of source: DataSource, _ result: FetchDataResult) {
        guard let waiters = fetchWaiters[ObjectIdentifier(source)] else { return }
        for waiter in waiters where waiter.armed { answer(waiter.answer, with: result) }
        let unarmed = waiters.filter { !$0.armed }
        fetchWaiters[ObjectIdentifier(source)] = unarmed.isEmpty ? nil : unarmed
    }
}

/// A `fetchData {wait: true}` waiting for the final event of the cycle it started.
struct FetchWaiter {
    let answer: PendingAnswer<FetchDataResult>
    /// Set by the cycle's willLoadData; a final event before it belongs to an older cycle.
    var armed = false
}
