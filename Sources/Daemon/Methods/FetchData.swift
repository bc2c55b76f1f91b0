import DataSources
import JSONKit
import JSONRPC

/// `fetchData`: starts a load cycle; with wait, answers when it ends.
enum FetchDataRequest: RequestMethod {
    static let name = "fetchData"
    typealias Params = FetchDataParams
    typealias Result = FetchDataResult

    static func handle(
        _ daemon: Daemon, _ params: FetchDataParams, _ answer: PendingAnswer<FetchDataResult>
    ) throws -> Reply<FetchDataResult> {
        let source = try daemon.source(params.source)
        guard params.wait else {
            source.fetchData()
            return .now(.started(isFetching: source.isFetching))
        }
        // Registered before the cycle starts (a local source's cycle ends within fetchData), but
        // armed only by this cycle's willLoadData: the final event of a load this fetchData
        // supersedes must not answer it.
        daemon.fetchWaiters[ObjectIdentifier(source), default: []].append(FetchWaiter(answer: answer))
        source.fetchData()
        return .later
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "fetchData",
          "summary": "starts a load cycle; with wait, answers when it ends",
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
              "name": "wait",
              "schema": {
                "type": "boolean"
              },
              "required": false
            }
          ],
          "result": {
            "name": "fetchDataResult",
            "schema": {
              "anyOf": [
                {
                  "type": "object",
                  "properties": {
                    "isFetching": {
                      "type": "boolean"
                    }
                  },
                  "required": [
                    "isFetching"
                  ],
                  "additionalProperties": false
                },
                {
                  "type": "object",
                  "properties": {
                    "isFetching": {
                      "const": false
                    },
                    "outcome": {
                      "const": "finished"
                    }
                  },
                  "required": [
                    "isFetching",
                    "outcome"
                  ],
                  "additionalProperties": false
                },
                {
                  "type": "object",
                  "properties": {
                    "isFetching": {
                      "const": false
                    },
                    "outcome": {
                      "const": "failed"
                    },
                    "error": {
                      "$ref": "#/components/schemas/LoadFailure"
                    }
                  },
                  "required": [
                    "isFetching",
                    "outcome",
                    "error"
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

struct FetchDataParams: WireParams {
    var source: String
    var wait: Bool
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
        wait = try reader.optionalBool("wait") ?? false
    }
}

/// `fetchData`: whether a cycle is in flight, or with `wait: true` how it ended.
enum FetchDataResult: WireEncodable {
    case started(isFetching: Bool)
    case finished
    case failed(LoadFailure)

    var json: JSON {
        switch self {
        case .started(let isFetching): ["isFetching": JSON(isFetching)]
        case .finished: ["isFetching": false, "outcome": "finished"]
        case .failed(let failure): ["isFetching": false, "outcome": "failed", "error": failure.json]
        }
    }
}
