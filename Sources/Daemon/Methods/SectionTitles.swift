import DataSources
import JSONKit
import JSONRPC

/// `sectionTitles`: the sections' titles.
enum SectionTitlesRequest: AnsweredAtOnce {
    static let name = "sectionTitles"
    typealias Params = SourceParams
    typealias Result = [JSON]

    static func handle(_ daemon: Daemon, _ params: SourceParams) throws -> [JSON] {
        try daemon.source(params.source).sectionTitles
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "sectionTitles",
          "summary": "the sections' titles",
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
            "name": "sectionTitlesResult",
            "schema": {
              "type": "array"
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
