import DataSources
import JSONKit
import JSONRPC

/// `insertObjects`: inserts into a simple source.
enum InsertObjectsRequest: AnsweredAtOnce {
    static let name = "insertObjects"
    typealias Params = InsertObjectsParams
    typealias Result = Int

    static func handle(_ daemon: Daemon, _ params: InsertObjectsParams) throws -> Int {
        let source = try daemon.simpleSource(params.source)
        try source.insert(params.objects, at: params.index ?? source.objects.count)
        return source.objects.count
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "insertObjects",
          "summary": "inserts into a simple source",
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
            },
            {
              "name": "index",
              "schema": {
                "type": "integer",
                "minimum": 0
              },
              "required": false
            }
          ],
          "result": {
            "name": "insertObjectsResult",
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

struct InsertObjectsParams: WireParams {
    var source: String
    var objects: [JSON]
    var index: Int?
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
        objects = try reader.required(
            "objects", { value, field throws(FieldError) in try Decode.array(value, field) }, expected: "an array")
        index = try reader.optionalInteger("index", in: 0...Int.max)
    }
}
