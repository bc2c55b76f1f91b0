import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `fetchNextPage`: loads a paginated source's next page.
enum FetchNextPageRequest: AnsweredAtOnce {
    static let name = "fetchNextPage"
    static let section = "loading"
    typealias Params = SourceParams
    typealias Result = NextPageResult

    static func handle(_ daemon: Daemon, _ params: SourceParams) throws -> NextPageResult {
        let paginated = try daemon.paginatedSource(params.source)
        if let refusal = paginated.nextPageRefusal { return NextPageResult(refusal: refusal) }
        paginated.fetchNextPage()
        return NextPageResult(refusal: nil)
    }

    static let summary = "loads a paginated source's next page"
    static let resultSchema: Schema = .ref("NextPageResult")
}

struct NextPageResult: WireEncodable {
    /// nil: the page was started.
    let refusal: String?
    var json: JSON {
        guard let refusal else { return ["started": true] }
        return ["started": false, "reason": JSON(refusal)]
    }
}
