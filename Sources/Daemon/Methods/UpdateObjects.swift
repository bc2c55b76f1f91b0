import DataSources
import JSONKit
import JSONRPC

/// `updateObjects`: replaces objects of a simple source by identity.
enum UpdateObjectsRequest: AnsweredAtOnce {
    static let name = "updateObjects"
    typealias Params = ObjectsParams
    typealias Result = Int

    static func handle(_ daemon: Daemon, _ params: ObjectsParams) throws -> Int {
        let source = try daemon.simpleSource(params.source)
        try source.update(params.objects)
        return source.objects.count
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "updateObjects",
          "summary": "replaces objects of a simple source by identity",
          "paramStructure": "by-name",
          "params": [
            {
              "name": "source",
              "schema": {
                "$ref": "#/components/schemas/SourceName"
              },
              "required": true
            },
            {
              "name": "objects",
              "schema": {
                "type": "array"
              },
              "required": true
            }
          ],
          "result": {
            "name": "updateObjectsResult",
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
