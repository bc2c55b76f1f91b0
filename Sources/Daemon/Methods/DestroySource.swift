import DataSources
import JSONKit
import JSONRPC

/// `destroySource`: destroys a source (and, with cascade, the sources built on it).
enum DestroySourceRequest: AnsweredAtOnce {
    static let name = "destroySource"
    typealias Params = DestroySourceParams
    typealias Result = DestroyedSources

    static func handle(_ daemon: Daemon, _ params: DestroySourceParams) throws -> DestroyedSources {
        // The rows of each source destroyed, the ones built on it with `cascade` included.
        let rowsBefore = Dictionary(daemon.registry.all.map { ($0.name, $0.totalObjectCount) }, uniquingKeysWith: +)
        let names = try daemon.registry.destroy(params.name, cascade: params.cascade)
        let rows = names.reduce(0) { $0.addingReportingOverflow(rowsBefore[$1] ?? 0).partialValue }
        // malloc keeps what the rows took for reuse: without this, a source of millions of rows
        // destroyed would leave the daemon at its peak size for good.
        if rows >= Daemon.largeSourceRows { daemon.freedLargeMessage = true }
        for name in names {
            daemon.refreshTimers.disarm(name)
            daemon.debounceTimers.disarm(name)
            daemon.sourceParams[name] = nil
        }
        return DestroyedSources(names: names)
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "destroySource",
          "summary": "destroys a source (and, with cascade, the sources built on it)",
          "paramStructure": "by-name",
          "params": [
            {
              "name": "name",
              "schema": {
                "type": "string"
              },
              "required": true
            },
            {
              "name": "cascade",
              "schema": {
                "type": "boolean"
              },
              "required": false
            }
          ],
          "result": {
            "name": "destroySourceResult",
            "schema": {
              "type": "object",
              "properties": {
                "destroyed": {
                  "type": "array",
                  "items": {
                    "type": "string"
                  }
                }
              },
              "required": [
                "destroyed"
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

struct DestroySourceParams: WireParams {
    var name: String
    var cascade: Bool
    init(_ reader: inout ObjectReader) throws(FieldError) {
        name = try reader.string("name")
        cascade = try reader.optionalBool("cascade") ?? false
    }
}

struct DestroyedSources: WireEncodable {
    let names: [String]
    var json: JSON { ["destroyed": .array(names.map { JSON($0) })] }
}
