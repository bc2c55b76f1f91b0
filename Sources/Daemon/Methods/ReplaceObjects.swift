import DataSources
import JSONKit
import JSONRPC

/// `replaceObjects`: replaces a simple source's objects.
enum ReplaceObjectsRequest: AnsweredAtOnce {
    static let name = "replaceObjects"
    typealias Params = ObjectsParams
    typealias Result = Int

    static func handle(_ daemon: Daemon, _ params: ObjectsParams) throws -> Int {
        let source = try daemon.simpleSource(params.source)
        source.replaceObjects(params.objects)
        return source.objects.count
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "replaceObjects",
          "summary": "replaces a simple source's objects",
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
            "name": "replaceObjectsResult",
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
