import DataSources
import JSONKit
import JSONRPC

/// `numberOfObjectsInSection`: the number of rows in a section.
enum NumberOfObjectsInSectionRequest: AnsweredAtOnce {
    static let name = "numberOfObjectsInSection"
    typealias Params = SectionParams
    typealias Result = Int

    static func handle(_ daemon: Daemon, _ params: SectionParams) throws -> Int {
        let source = try daemon.source(params.source)
        try source.validate(section: params.section)
        return source.numberOfObjects(inSection: params.section)
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "numberOfObjectsInSection",
          "summary": "the number of rows in a section",
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
            }
          ],
          "result": {
            "name": "numberOfObjectsInSectionResult",
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

struct SectionParams: WireParams {
    var source: String
    var section: Int
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
        section = try reader.integer("section", in: 0...Int.max)
    }
}
