import DataSources
import JSONKit
import JSONRPC
import WireSchema

extension Daemon {
    func source(_ name: String) throws(FieldError) -> DataSource {
        do { return try registry.source(named: name) } catch { throw FieldError(error) }
    }

    func simpleSource(_ name: String) throws(FieldError) -> SimpleDataSource {
        try source(name, as: SimpleDataSource.self, "a simple source", for: " to be edited")
    }

    /// The paginated source `name` names, for the methods that page.
    func paginatedSource(_ name: String) throws(FieldError) -> PaginatedDataSource {
        try source(name, as: PaginatedDataSource.self, "a paginated source")
    }

    /// The source `name` names, when it is of `kind`; refused naming what it is otherwise.
    func source<Kind: DataSource>(
        _ name: String, as kind: Kind.Type, _ expected: String, for purpose: String = ""
    )
        throws(FieldError) -> Kind
    {
        let source = try self.source(name)
        guard let typed = source as? Kind else {
            throw FieldError(
                field: "source", expected: expected, got: JSON(source.name),
                message: "\"source\" must name \(expected)\(purpose); \"\(source.name)\" is \(source.kind)")
        }
        return typed
    }
}

extension Daemon: DataSourceObserver {
    package func dataSource(_ source: DataSource, emitted event: DataSourceEvent) {
        let wireEvent: SourceNotification.Event
        switch event {
        case .willLoadData: wireEvent = .willLoadData
        case .didPartiallyLoad: wireEvent = .didPartiallyLoad
        case .finishedLoading: wireEvent = .finishedLoading
        case .failedWithError(let failure): wireEvent = .failedWithError(failure)
        case .didChange(let changes):
            wireEvent = .didChange(changes, revision: source.revision, values: changeValues(of: changes, in: source))
        case .didChangeFreshness(let stale, let cachedAt): wireEvent = .didChangeFreshness(stale: stale, cachedAt: cachedAt)
        case .didChangeLoadState(let states):
            guard sendsLoadStates else { return }
            wireEvent = .didChangeLoadState(states)
        case .didSettleMutation(let settlement): wireEvent = .didSettleMutation(settlement)
        }
        send(SourceNotification(source: source.name, event: wireEvent, changeRanges: sendsChangeRanges).notification)
        switch event {
        case .willLoadData: armWaiters(of: source)
        case .finishedLoading: answerWaiters(of: source, .finished)
        case .failedWithError(let failure): answerWaiters(of: source, .failed(failure))
        case .didSettleMutation(let settlement): revalidate(settlement.invalidates)
        case .didPartiallyLoad, .didChange, .didChangeFreshness, .didChangeLoadState: break
        }
    }

    /// A committed action's `invalidates`: each remote source named loads again (revalidating
    /// its rows), unless it is loading already. Names of sources that do not exist are passed by.
    private func revalidate(_ names: [String]) {
        for name in names {
            guard let source = try? registry.source(named: name), source is RemoteCollection, !source.isFetching else { continue }
            source.fetchData()
        }
    }

    /// The inserted and updated rows, when the client asked for them and they fit its limit:
    /// each row's JSON and a separator.
    private func changeValues(of changes: ChangeSet, in source: DataSource) -> SourceNotification.ChangeValues? {
        guard let limit = changeValuesLimit else { return nil }
        // A row takes two bytes at least: a change of more rows than half the limit cannot fit,
        // and is not encoded to find out (a counted list's million rows).
        let fitting = limit / 2
        guard changes.inserted.count <= fitting, changes.updated.count <= fitting - changes.inserted.count else { return nil }
        var bytes = 0
        func rows(_ paths: IndexPathList) -> [JSON]? {
            var rows: [JSON] = []
            rows.reserveCapacity(paths.count)
            for path in paths {
                guard let row = try? source.object(at: path) else { return nil }
                bytes += row.encoded().count + 1
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
