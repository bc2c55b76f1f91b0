import DataSources
import JSONKit
import JSONRPC

/// `setFilter`: changes a filtered source's filter or match query, with one didChange.
enum SetFilterRequest: AnsweredAtOnce {
    static let name = "setFilter"
    typealias Params = SetFilterParams
    typealias Result = SourceDescription

    static func handle(_ daemon: Daemon, _ params: SetFilterParams) throws -> SourceDescription {
        let source = try daemon.source(params.source)
        guard let filtered = source as? FilteredDataSource else {
            throw FieldError(
                field: "source", expected: "a filtered source", got: JSON(source.name),
                message: "\"source\" must name a filtered source to set its filter; \"\(source.name)\" is \(source.kind)")
        }
        filtered.setFilter(params.filter ?? filtered.filter, match: params.match ?? filtered.match)
        return filtered.describe()
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "setFilter",
          "summary": "changes a filtered source's filter or match query, with one didChange",
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
              "name": "filter",
              "schema": {
                "anyOf": [
                  {
                    "$ref": "#/components/schemas/Predicate"
                  },
                  {
                    "type": "null"
                  }
                ],
                "description": "the new filter; null: none; absent: unchanged"
              },
              "required": false
            },
            {
              "name": "match",
              "schema": {
                "anyOf": [
                  {
                    "$ref": "#/components/schemas/MatchQuery"
                  },
                  {
                    "type": "null"
                  }
                ],
                "description": "the new match query; null: none; absent: unchanged"
              },
              "required": false
            }
          ],
          "result": {
            "name": "setFilterResult",
            "schema": {
              "$ref": "#/components/schemas/SourceDescription"
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

/// `setFilter`: `{source, filter?, match?}`; each absent keeps what the source has, null
/// removes it.
struct SetFilterParams: WireParams {
    var source: String
    /// nil: unchanged; `.some(nil)`: removed.
    var filter: Predicate??
    var match: MatchQuery??
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
        if let value = reader.rawValue("filter") {
            filter = .some(value.isNull ? nil : try FilterDecoding.predicate(value, "filter"))
        }
        if let value = reader.rawValue("match") {
            match = .some(value.isNull ? nil : try FilterDecoding.match(value, "match"))
        }
    }
}
