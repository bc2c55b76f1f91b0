import DataSources
import JSONKit
import JSONRPC

/// `objectAtIndexPath`: one row; with withRevision or withMatches, {object, revision?, matches?}.
enum ObjectAtIndexPathRequest: AnsweredAtOnce {
    static let name = "objectAtIndexPath"
    typealias Params = IndexPathParams
    typealias Result = ObjectRead

    static func handle(_ daemon: Daemon, _ params: IndexPathParams) throws -> ObjectRead {
        let source = try daemon.source(params.source)
        let object = try source.object(at: params.indexPath)
        source.didRead(params.indexPath)
        // Optional.none spelt out: a bare nil here would be JSON's null literal.
        let matches: JSON? = params.withMatches ? .some(MatchEncoding.json(of: object, in: source)) : .none
        return ObjectRead(object: object, revision: params.withRevision ? source.revision : nil, matches: matches)
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "objectAtIndexPath",
          "summary": "one row; with withRevision or withMatches, {object, revision?, matches?}",
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
            },
            {
              "name": "withMatches",
              "schema": {
                "type": "boolean",
                "description": "also answer how the row matches its filtered source's query (matches)"
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
                    },
                    "matches": {
                      "$ref": "#/components/schemas/Matches"
                    }
                  },
                  "required": [
                    "object"
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
    var withMatches: Bool
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
        indexPath = try reader.required(
            "indexPath", inPlace: Decode.indexPath(inPlace:), Decode.indexPath,
            expected: "[section, item], an array of two non-negative integers")
        withRevision = try reader.optionalBool("withRevision") ?? false
        withMatches = try reader.optionalBool("withMatches") ?? false
    }
}

/// `objectAtIndexPath`: the row as it is (the 1.0 shape), or with `withRevision` or
/// `withMatches` `{object, revision?, matches?}`.
struct ObjectRead: WireEncodable {
    let object: JSON
    let revision: Int?
    /// nil: not asked; `.null`: asked, no match to show.
    let matches: JSON?

    var json: JSON {
        guard revision != nil || matches != nil else { return object }
        var members: [(String, JSON)] = [("object", object)]
        if let revision { members.append(("revision", JSON(revision))) }
        if let matches { members.append(("matches", matches)) }
        return .object(members)
    }
}
