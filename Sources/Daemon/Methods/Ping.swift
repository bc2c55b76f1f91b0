import DataSources
import Dispatch
import JSONKit
import WireSchema
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

    static let summary = "answers, after an optional delay"
    static let resultSchema: Schema = .object(
        [
            "delayMilliseconds": .integer(in: 0...60000)
        ],
        required: ["delayMilliseconds"])
}

struct PingParams: DeclaredParams {
    var delayMilliseconds: Int
    static let declaration = ObjectDeclaration(
        .optional("delayMilliseconds", .integer(in: 0...60_000), default: 0, doc: "answer after this long"), as: PingParams.init)
}

struct PingResult: WireEncodable {
    let delayMilliseconds: Int
    var json: JSON { ["delayMilliseconds": JSON(delayMilliseconds)] }
}
