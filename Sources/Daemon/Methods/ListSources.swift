import DataSources
import JSONKit
import JSONRPC

/// `listSources`: every source, oldest first.
enum ListSourcesRequest: AnsweredAtOnce {
    static let name = "listSources"
    typealias Params = NoParams
    typealias Result = [SourceListing]

    static func handle(_ daemon: Daemon, _ params: NoParams) throws -> [SourceListing] {
        daemon.registry.all.map { SourceListing(name: $0.name, kind: $0.kind) }
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "listSources",
          "summary": "every source, oldest first",
          "paramStructure": "by-name",
          "params": [],
          "result": {
            "name": "listSourcesResult",
            "schema": {
              "type": "array",
              "items": {
                "type": "object",
                "properties": {
                  "name": {
                    "type": "string"
                  },
                  "kind": {
                    "type": "string"
                  }
                },
                "required": [
                  "name",
                  "kind"
                ],
                "additionalProperties": false
              }
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

struct SourceListing: WireEncodable {
    let name: String
    let kind: String
    var json: JSON { ["name": JSON(name), "kind": JSON(kind)] }
}
