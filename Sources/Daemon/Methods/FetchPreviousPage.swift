import DataSources
import JSONKit
import JSONRPC

/// `fetchPreviousPage`: loads the page before the first one a paginated source has loaded.
enum FetchPreviousPageRequest: AnsweredAtOnce {
    static let name = "fetchPreviousPage"
    typealias Params = SourceParams
    typealias Result = NextPageResult

    static func handle(_ daemon: Daemon, _ params: SourceParams) throws -> NextPageResult {
        let paginated = try daemon.paginatedSource(params.source)
        if let refusal = paginated.previousPageRefusal { return NextPageResult(refusal: refusal) }
        paginated.fetchPreviousPage()
        return NextPageResult(refusal: nil)
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "fetchPreviousPage",
          "summary": "loads the page before the first one a paginated source has loaded, inserting its rows at the top",
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
            "name": "fetchPreviousPageResult",
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
