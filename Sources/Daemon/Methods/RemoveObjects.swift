import DataSources
import JSONKit
import JSONRPC

/// `removeObjects`: removes from a simple source.
enum RemoveObjectsRequest: AnsweredAtOnce {
    static let name = "removeObjects"
    typealias Params = RemoveObjectsParams
    typealias Result = Int

    static func handle(_ daemon: Daemon, _ params: RemoveObjectsParams) throws -> Int {
        let source = try daemon.simpleSource(params.source)
        try source.remove(at: params.index, count: params.count)
        return source.objects.count
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "removeObjects",
          "summary": "removes from a simple source",
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
              "name": "index",
              "schema": {
                "type": "integer",
                "minimum": 0
              },
              "required": true
            },
            {
              "name": "count",
              "schema": {
                "type": "integer",
                "minimum": 0
              },
              "required": false
            }
          ],
          "result": {
            "name": "removeObjectsResult",
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

struct RemoveObjectsParams: WireParams {
    var source: String
    var index: Int
    var count: Int
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
        index = try reader.integer("index", in: 0...Int.max)
        count = try reader.optionalInteger("count", in: 0...Int.max) ?? 1
    }
}
