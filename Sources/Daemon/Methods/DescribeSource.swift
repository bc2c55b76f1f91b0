import DataSources
import JSONKit
import JSONRPC

/// `describeSource`: a source's state.
enum DescribeSourceRequest: AnsweredAtOnce {
    static let name = "describeSource"
    typealias Params = SourceParams
    typealias Result = SourceDescription

    static func handle(_ daemon: Daemon, _ params: SourceParams) throws -> SourceDescription {
        try daemon.source(params.source).describe()
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "describeSource",
          "summary": "a source's state",
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
            "name": "describeSourceResult",
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
