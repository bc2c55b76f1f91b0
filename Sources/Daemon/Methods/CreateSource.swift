import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `createSource`: creates a named data source.
enum CreateSourceRequest: AnsweredAtOnce {
    static let name = "createSource"
    typealias Params = CreateSourceParams
    typealias Result = SourceDescription

    static func handle(_ daemon: Daemon, _ params: CreateSourceParams) throws -> SourceDescription {
        let source = try daemon.registry.create(params.spec)
        source.addObserver(daemon)
        if let paginated = source as? PaginatedDataSource, !daemon.sendsChangeRanges {
            // Without runs in change sets, each row of a change is a path on the wire.
            paginated.maximumCountedRowsForClient = PaginatedDataSource.maximumCountedRowsWithoutRanges
        }
        if let remote = source as? RemoteCollection {
            if let cache = daemon.cache, let key = params.cacheKey {
                remote.attachCache(cache, key: key, warn: { [logger = daemon.logger] in logger.warning("\($0)") })
            }
            if let interval = remote.configuration.refreshIntervalSeconds { daemon.setRefreshInterval(interval, of: remote) }
            daemon.sourceParams[remote.name] = params.wire
        }
        daemon.logger.info("created source", metadata: ["name": "\(source.name)", "kind": "\(source.kind)"])
        return source.describe()
    }

    static let summary = "creates a named data source"

    /// The params are a SourceSpec, whose kinds OpenRPC's by-name params cannot say: the
    /// whole object's schema goes beside them.
    static var openRPC: JSON {
        defaultOpenRPC.setting("x-params-schema", to: Schema.ref("SourceSpec").json)
    }
    static let resultSchema: Schema = .ref("SourceDescription")
}
