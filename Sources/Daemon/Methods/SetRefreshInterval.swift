import DataSources
import JSONKit
import JSONRPC

/// `setRefreshInterval`: makes a remote or paginated source live (or stops it).
enum SetRefreshIntervalRequest: AnsweredAtOnce {
    static let name = "setRefreshInterval"
    typealias Params = SetRefreshIntervalParams
    typealias Result = SourceDescription

    static func handle(_ daemon: Daemon, _ params: SetRefreshIntervalParams) throws -> SourceDescription {
        let source = try daemon.source(params.source)
        guard let remote = source as? RemoteCollection else {
            throw FieldError(
                field: "source", expected: "a remote or paginated source", got: JSON(source.name),
                message: "\"source\" must name a remote or paginated source to refresh; \"\(source.name)\" is \(source.kind)")
        }
        daemon.setRefreshInterval(params.seconds, of: remote)
        return remote.describe()
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "setRefreshInterval",
          "summary": "makes a remote or paginated source live (or stops it)",
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
              "name": "seconds",
              "schema": {
                "anyOf": [
                  {
                    "type": "number",
                    "minimum": 1,
                    "maximum": 86400
                  },
                  {
                    "type": "null"
                  }
                ],
                "description": "seconds between refreshes of a live list; null: none"
              },
              "required": true
            }
          ],
          "result": {
            "name": "setRefreshIntervalResult",
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

/// `setRefreshInterval`: `{source, seconds}`, seconds a number or null (no refreshes).
struct SetRefreshIntervalParams: WireParams {
    var source: String
    var seconds: Double?
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
        // null is a value here (no refreshes), not an absent member.
        guard let value = reader.rawValue("seconds") else {
            throw .missing("seconds", expected: "a number of seconds in 1...86400, or null")
        }
        seconds = try RemoteConfigurationDecoding.refreshInterval(value, "seconds")
    }
}
