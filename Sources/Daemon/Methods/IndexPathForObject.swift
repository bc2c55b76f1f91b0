import DataSources
import JSONKit
import JSONRPC

/// `indexPathForObject`: where the first row with the same identity is.
enum IndexPathForObjectRequest: AnsweredAtOnce {
    static let name = "indexPathForObject"
    typealias Params = IndexPathForObjectParams
    typealias Result = IndexPath?

    static func handle(_ daemon: Daemon, _ params: IndexPathForObjectParams) throws -> IndexPath? {
        try daemon.source(params.source).indexPath(for: params.object)
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "indexPathForObject",
          "summary": "where the first row with the same identity is",
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
              "name": "object",
              "schema": {},
              "required": true
            }
          ],
          "result": {
            "name": "indexPathForObjectResult",
            "schema": {
              "anyOf": [
                {
                  "$ref": "#/components/schemas/IndexPath"
                },
                {
                  "type": "null"
                }
              ]
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

struct IndexPathForObjectParams: WireParams {
    var source: String
    var object: JSON
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
        // Any JSON value, null included, is an object a source may hold.
        guard let object = reader.rawValue("object") else { throw .missing("object", expected: "a JSON value") }
        self.object = object
    }
}
