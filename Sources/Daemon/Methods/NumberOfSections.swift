import DataSources
import JSONKit
import JSONRPC

/// `numberOfSections`: the number of sections.
enum NumberOfSectionsRequest: AnsweredAtOnce {
    static let name = "numberOfSections"
    typealias Params = SourceParams
    typealias Result = Int

    static func handle(_ daemon: Daemon, _ params: SourceParams) throws -> Int {
        try daemon.source(params.source).numberOfSections
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "numberOfSections",
          "summary": "the number of sections",
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
            "name": "numberOfSectionsResult",
            "schema": {
              "type": "integer",
              "minimum": 0
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
