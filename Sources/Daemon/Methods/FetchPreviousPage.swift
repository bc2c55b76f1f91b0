import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `fetchPreviousPage`: loads the page before the first one a paginated source has loaded.
enum FetchPreviousPageRequest: AnsweredAtOnce {
    static let name = "fetchPreviousPage"
    static let section = "paging-backwards"
    typealias Params = SourceParams
    typealias Result = NextPageResult

    static func handle(_ daemon: Daemon, _ params: SourceParams) throws -> NextPageResult {
        let paginated = try daemon.paginatedSource(params.source)
        if let refusal = paginated.previousPageRefusal { return NextPageResult(refusal: refusal) }
        paginated.fetchPreviousPage()
        return NextPageResult(refusal: nil)
    }

    static let summary = "loads the page before the first one a paginated source has loaded, inserting its rows at the top"
    static let resultSchema: Schema = .ref("NextPageResult")
}
