import DataSources
import JSONKit
import JSONRPC

/// `retry`: asks a paginated source again for the direction that failed, and only that one
/// (Paging 3's `retry()`).
enum RetryRequest: AnsweredAtOnce {
    static let name = "retry"
    typealias Params = SourceParams
    typealias Result = RetryResult

    static func handle(_ daemon: Daemon, _ params: SourceParams) throws -> RetryResult {
        let paginated = try daemon.paginatedSource(params.source)
        if let refusal = paginated.retryRefusal { return RetryResult(outcome: .refused(refusal)) }
        guard let direction = paginated.retry() else {
            return RetryResult(outcome: .refused(paginated.retryRefusal ?? "nothing to retry"))
        }
        return RetryResult(outcome: .started(direction))
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "retry",
          "summary": "asks a paginated source again for the direction whose load failed, and only that one",
          "paramStructure": "by-name",
          "params": [
            {
              "name": "source",
              "schema": {
                "$ref": "#/components/schemas/SourceName"
              },
              "required": true
            }
          ],
          "result": {
            "name": "retryResult",
            "schema": {
              "anyOf": [
                {
                  "type": "object",
                  "properties": {
                    "started": {
                      "const": true
                    },
                    "direction": {
                      "enum": [
                        "refresh",
                        "prepend",
                        "append"
                      ]
                    }
                  },
                  "required": [
                    "started",
                    "direction"
                  ],
                  "additionalProperties": false
                },
                {
                  "$ref": "#/components/schemas/Refusal"
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

struct RetryResult: WireEncodable {
    enum Outcome {
        case started(LoadDirection)
        case refused(String)
    }
    let outcome: Outcome
    var json: JSON {
        switch outcome {
        case .started(let direction): ["started": true, "direction": JSON(direction.rawValue)]
        case .refused(let reason): ["started": false, "reason": JSON(reason)]
        }
    }
}
