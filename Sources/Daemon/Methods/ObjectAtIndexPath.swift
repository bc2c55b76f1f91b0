import DataSources
import JSONKit
import JSONRPC

/// `objectAtIndexPath`: one row; with withRevision, {object, revision}.
enum ObjectAtIndexPathRequest: AnsweredAtOnce {
    static let name = "objectAtIndexPath"
    typealias Params = IndexPathParams
    typealias Result = RevisionedRead

    static func handle(_ daemon: Daemon, _ params: IndexPathParams) throws -> RevisionedRead {
        let source = try daemon.source(params.source)
        let object = try source.object(at: params.indexPath)
        return RevisionedRead(member: "object", value: object, revision: params.withRevision ? source.revision : nil)
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "objectAtIndexPath",
          "summary": "one row; with withRevision, {object, revision}",
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
              "name": "indexPath",
              "schema": {
                "$ref": "#/components/schemas/IndexPath"
              },
              "required": true
            },
            {
              "name": "withRevision",
              "schema": {
                "type": "boolean"
              },
              "required": false
            }
          ],
          "result": {
            "name": "objectAtIndexPathResult",
            "schema": {
              "anyOf": [
                {
                  "$ref": "#/components/schemas/Row"
                },
                {
                  "type": "object",
                  "properties": {
                    "object": {
                      "$ref": "#/components/schemas/Row"
                    },
                    "revision": {
                      "type": "integer",
                      "minimum": 0
                    }
                  },
                  "required": [
                    "object",
                    "revision"
                  ],
                  "additionalProperties": false
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

struct IndexPathParams: WireParams {
    var source: String
    var indexPath: IndexPath
    var withRevision: Bool
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
        indexPath = try reader.required("indexPath", inPlace: Decode.indexPath(inPlace:), Decode.indexPath, expected: "[section, item], an array of two non-negative integers")
        withRevision = try reader.optionalBool("withRevision") ?? false
    }
}
