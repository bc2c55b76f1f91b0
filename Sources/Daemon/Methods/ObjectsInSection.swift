import DataSources
import JSONKit
import JSONRPC

/// `objectsInSection`: a slice of a section, at a revision.
enum ObjectsInSectionRequest: AnsweredAtOnce {
    static let name = "objectsInSection"
    typealias Params = ObjectsInSectionParams
    typealias Result = SectionSlice

    static func handle(_ daemon: Daemon, _ params: ObjectsInSectionParams) throws -> SectionSlice {
        let source = try daemon.source(params.source)
        let objects = try source.objects(inSection: params.section, start: params.start, count: params.count)
        // A read of a counted slice is rows on screen: the window keeps pages around them.
        if params.count != nil, !objects.isEmpty {
            source.didRead(IndexPath(section: params.section, item: params.start + objects.count / 2))
        }
        return SectionSlice(
            section: params.section, start: params.start, objects: objects,
            numberOfObjects: source.numberOfObjects(inSection: params.section), revision: source.revision,
            matches: params.withMatches ? objects.map { MatchEncoding.json(of: $0, in: source) } : nil)
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "objectsInSection",
          "summary": "a slice of a section, at a revision",
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
              "name": "section",
              "schema": {
                "type": "integer",
                "minimum": 0
              },
              "required": true
            },
            {
              "name": "start",
              "schema": {
                "type": "integer",
                "minimum": 0
              },
              "required": false
            },
            {
              "name": "count",
              "schema": {
                "type": "integer",
                "minimum": 0
              },
              "required": false
            },
            {
              "name": "withMatches",
              "schema": {
                "type": "boolean",
                "description": "also answer how each row matches its filtered source's query (matches, parallel to objects)"
              },
              "required": false
            }
          ],
          "result": {
            "name": "objectsInSectionResult",
            "schema": {
              "type": "object",
              "properties": {
                "section": {
                  "type": "integer",
                  "minimum": 0
                },
                "start": {
                  "type": "integer",
                  "minimum": 0
                },
                "objects": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/Row"
                  }
                },
                "numberOfObjects": {
                  "type": "integer",
                  "minimum": 0
                },
                "revision": {
                  "type": "integer",
                  "minimum": 0
                },
                "matches": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/Matches"
                  }
                }
              },
              "required": [
                "section",
                "start",
                "objects",
                "numberOfObjects",
                "revision"
              ],
              "additionalProperties": false
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

struct ObjectsInSectionParams: WireParams {
    var source: String
    var section: Int
    var start: Int
    var count: Int?
    var withMatches: Bool
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
        section = try reader.integer("section", in: 0...Int.max)
        start = try reader.optionalInteger("start", in: 0...Int.max) ?? 0
        count = try reader.optionalInteger("count", in: 0...Int.max)
        withMatches = try reader.optionalBool("withMatches") ?? false
    }
}

/// `objectsInSection`: a slice of one section, and the revision it was read at.
struct SectionSlice: WireEncodable {
    let section: Int
    let start: Int
    let objects: [JSON]
    let numberOfObjects: Int
    let revision: Int
    /// With `withMatches`: how each row matches, parallel to `objects`.
    let matches: [JSON]?

    var json: JSON {
        var members: [(String, JSON)] = [
            ("section", JSON(section)), ("start", JSON(start)), ("objects", .array(objects)),
            ("numberOfObjects", JSON(numberOfObjects)), ("revision", JSON(revision)),
        ]
        if let matches { members.append(("matches", .array(matches))) }
        return .object(members)
    }
}
