import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `cancelFetch`: ends a load in flight.
enum CancelFetchRequest: AnsweredAtOnce {
    static let name = "cancelFetch"
    static let section = "loading"
    typealias Params = SourceParams
    typealias Result = CancelResult

    static func handle(_ daemon: Daemon, _ params: SourceParams) throws -> CancelResult {
        let source = try daemon.source(params.source)
        let wasFetching = source.isFetching
        source.cancelFetch()
        return CancelResult(cancelled: wasFetching && !source.isFetching)
    }

    static let summary = "ends a load in flight"
    static let resultSchema: Schema = .object(
        [
            "cancelled": .boolean
        ],
        required: ["cancelled"])
}

struct CancelResult: WireEncodable {
    let cancelled: Bool
    var json: JSON { ["cancelled": JSON(cancelled)] }
}
