import DataSources
import Dispatch
import JSONKit
import JSONRPC

/// `ping`: answers, after an optional delay.
enum PingRequest: RequestMethod {
    static let name = "ping"
    typealias Params = PingParams
    typealias Result = PingResult

    static func handle(_ daemon: Daemon, _ params: PingParams, _ answer: PendingAnswer<PingResult>) throws -> Reply<PingResult> {
        let delay = params.delayMilliseconds
        guard delay > 0 else { return .now(PingResult(delayMilliseconds: 0)) }
        let mailbox = daemon.mailbox
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + .milliseconds(delay))
        timer.setEventHandler { mailbox.post(.delayElapsed(answer.token, milliseconds: delay)) }
        daemon.delayTimers[answer.token] = timer
        timer.resume()
        return .later
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "ping",
          "summary": "answers, after an optional delay",
          "paramStructure": "by-name",
          "params": [
            {
              "name": "delayMilliseconds",
              "schema": {
                "type": "integer",
                "minimum": 0,
                "maximum": 60000
              },
              "required": false
            }
          ],
          "result": {
            "name": "pingResult",
            "schema": {
              "type": "object",
              "properties": {
                "delayMilliseconds": {
                  "type": "integer",
                  "minimum": 0,
                  "maximum": 60000
                }
              },
              "required": [
                "delayMilliseconds"
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

struct PingParams: WireParams {
    var delayMilliseconds: Int
    init(_ reader: inout ObjectReader) throws(FieldError) {
        delayMilliseconds = try reader.optionalInteger("delayMilliseconds", in: 0...60_000) ?? 0
    }
}

struct PingResult: WireEncodable {
    let delayMilliseconds: Int
    var json: JSON { ["delayMilliseconds": JSON(delayMilliseconds)] }
}
