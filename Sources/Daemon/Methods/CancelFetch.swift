import DataSources
import JSONKit
import JSONRPC

/// `cancelFetch`: ends a load in flight.
enum CancelFetchRequest: AnsweredAtOnce {
    static let name = "cancelFetch"
    typealias Params = SourceParams
    typealias Result = CancelResult

    static func handle(_ daemon: Daemon, _ params: SourceParams) throws -> CancelResult {
        let source = try daemon.source(params.source)
        let wasFetching = source.isFetching
        source.cancelFetch()
        return CancelResult(cancelled: wasFetching && !source.isFetching)
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "cancelFetch",
          "summary": "ends a load in flight",
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
            "name": "cancelFetchResult",
            "schema": {
              "type": "object",
              "properties": {
                "cancelled": {
                  "type": "boolean"
                }
              },
              "required": [
                "cancelled"
              ],
              "additionalProperties": false
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

struct CancelResult: WireEncodable {
    let cancelled: Bool
    var json: JSON { ["cancelled": JSON(cancelled)] }
}
