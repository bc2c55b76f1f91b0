import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `fetchNextPage`: loads a paginated source's next page.
enum FetchNextPageRequest: PageStepRequest {
    static let name = "fetchNextPage"
    static let section = "loading"
    static let direction = LoadDirection.append
    static let summary = "loads a paginated source's next page"
}

/// `fetchNextPage` and `fetchPreviousPage`: one page further in `direction`, or why not.
protocol PageStepRequest: AnsweredAtOnce where Params == SourceParams, Result == NextPageResult {
    /// `.append` or `.prepend`.
    static var direction: LoadDirection { get }
}

extension PageStepRequest {
    static func handle(_ daemon: Daemon, _ params: SourceParams) throws -> NextPageResult {
        let paginated = try daemon.paginatedSource(params.source)
        let backwards = direction == .prepend
        if let refusal = backwards ? paginated.previousPageRefusal : paginated.nextPageRefusal {
            return NextPageResult(refusal: refusal)
        }
        if backwards { paginated.fetchPreviousPage() } else { paginated.fetchNextPage() }
        return NextPageResult(refusal: nil)
    }

    static var resultSchema: Schema { .ref("NextPageResult") }
}

struct NextPageResult: WireEncodable {
    /// nil: the page was started.
    let refusal: String?
    var json: JSON {
        guard let refusal else { return ["started": true] }
        return ["started": false, "reason": JSON(refusal)]
    }
}
