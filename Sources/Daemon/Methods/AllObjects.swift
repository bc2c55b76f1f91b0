import DataSources
import JSONKit
import JSONRPC

/// `allObjects`: every row, section after section.
enum AllObjectsRequest: AnsweredAtOnce {
    static let name = "allObjects"
    typealias Params = AllObjectsParams
    typealias Result = RevisionedRead

    static func handle(_ daemon: Daemon, _ params: AllObjectsParams) throws -> RevisionedRead {
        let source = try daemon.source(params.source)
        try source.checkAllObjectsReadable()
        return RevisionedRead(member: "objects", value: .array(source.allObjects), revision: params.withRevision ? source.revision : nil)
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "allObjects",
          "summary": "every row, section after section",
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
              "name": "withRevision",
              "schema": {
                "type": "boolean"
              },
              "required": false
            }
          ],
          "result": {
            "name": "allObjectsResult",
            "schema": {
              "anyOf": [
                {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/Row"
                  }
                },
                {
                  "type": "object",
                  "properties": {
                    "objects": {
                      "type": "array",
                      "items": {
                        "$ref": "#/components/schemas/Row"
                      }
                    },
                    "revision": {
                      "type": "integer",
                      "minimum": 0
                    }
                  },
                  "required": [
                    "objects",
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

struct AllObjectsParams: WireParams {
    var source: String
    var withRevision: Bool
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
        withRevision = try reader.optionalBool("withRevision") ?? false
    }
}
