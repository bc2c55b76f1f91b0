import DataSources
import JSONKit
import JSONRPC

/// `fetchNextPage`: loads a paginated source's next page.
enum FetchNextPageRequest: AnsweredAtOnce {
    static let name = "fetchNextPage"
    typealias Params = SourceParams
    typealias Result = NextPageResult

    static func handle(_ daemon: Daemon, _ params: SourceParams) throws -> NextPageResult {
        let paginated = try daemon.paginatedSource(params.source)
        if let refusal = paginated.nextPageRefusal { return NextPageResult(refusal: refusal) }
        paginated.fetchNextPage()
        return NextPageResult(refusal: nil)
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "fetchNextPage",
          "summary": "loads a paginated source's next page",
          "paramStructure": "by-name",
          "params": [
            {
              "name": "source",
              "schema": {
                "$ref": "#/components/schemas/SourceName"
              },
              "required": true
            }
          ],
          "result": {
            "name": "fetchNextPageResult",
            "schema": {
              "$ref": "#/components/schemas/NextPageResult"
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

struct NextPageResult: WireEncodable {
    /// nil: the page was started.
    let refusal: String?
    var json: JSON {
        guard let refusal else { return ["started": true] }
        return ["started": false, "reason": JSON(refusal)]
    }
}
