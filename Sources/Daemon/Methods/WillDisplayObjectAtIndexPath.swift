import DataSources
import JSONKit
import JSONRPC

/// `willDisplayObjectAtIndexPath`: a row is shown: near either end of a paginated source's loaded rows the
/// page next to them loads; on a counted list's far unloaded row, that row's page (a jump).
enum WillDisplayObjectAtIndexPathRequest: AnsweredAtOnce {
    static let name = "willDisplayObjectAtIndexPath"
    typealias Params = DisplayParams
    typealias Result = DisplayResult

    static func handle(_ daemon: Daemon, _ params: DisplayParams) throws -> DisplayResult {
        let source = try daemon.source(params.source)
        try source.validate(params.indexPath)
        if let paginated = source as? PaginatedDataSource, let refusal = paginated.displayRefusal(at: params.indexPath) {
            throw FieldError(
                field: "indexPath", expected: "a loaded row, or an unloaded one within jumpThreshold rows of them",
                got: [JSON(params.indexPath.section), JSON(params.indexPath.item)], message: refusal)
        }
        let cycles = source.cyclesStarted
        source.willDisplayObject(at: params.indexPath)
        return DisplayResult(fetchStarted: source.cyclesStarted != cycles && source.isFetching)
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "willDisplayObjectAtIndexPath",
          "summary": "a row is shown: near either end of a paginated source's loaded rows the page next to them loads; on a counted list's far unloaded row, that row's page (a jump)",
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
            }
          ],
          "result": {
            "name": "willDisplayObjectAtIndexPathResult",
            "schema": {
              "type": "object",
              "properties": {
                "fetchStarted": {
                  "type": "boolean"
                }
              },
              "required": [
                "fetchStarted"
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

/// `willDisplayObjectAtIndexPath`: no revision to ask for.
struct DisplayParams: WireParams {
    var source: String
    var indexPath: IndexPath
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
        indexPath = try reader.required(
            "indexPath", inPlace: Decode.indexPath(inPlace:), Decode.indexPath,
            expected: "[section, item], an array of two non-negative integers")
    }
}

struct DisplayResult: WireEncodable {
    let fetchStarted: Bool
    var json: JSON { ["fetchStarted": JSON(fetchStarted)] }
}
