import DataSources
import JSONKit
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

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "createSource",
          "summary": "creates a named data source",
          "paramStructure": "by-name",
          "params": [
            {
              "name": "spec",
              "schema": {
                "$ref": "#/components/schemas/SourceSpec"
              },
              "required": true,
              "description": "the params object itself (every member of SourceSpec is a param)"
            }
          ],
          "x-params-schema": {
            "$ref": "#/components/schemas/SourceSpec"
          },
          "result": {
            "name": "createSourceResult",
            "schema": {
              "$ref": "#/components/schemas/SourceDescription"
            }
          },
          "errors": [
            {
              "$ref": "#/components/errors/InvalidParams"
            }
          ]
        }
        """#
}
