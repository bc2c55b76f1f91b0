import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `shutdown`: ends loads in flight and waiting requests; then only exit is accepted.
enum ShutdownRequest: RequestMethod {
    static let name = "shutdown"
    typealias Params = NoParams
    typealias Result = NullResult

    static func handle(_ daemon: Daemon, _ params: NoParams, _ answer: PendingAnswer<NullResult>) throws -> Reply<NullResult> {
        daemon.lifecycle = .shutDown
        daemon.refreshTimers.disarmAll()
        daemon.debounceTimers.disarmAll()
        for case let source as RemoteCollection in daemon.registry.all { source.stopRefresh() }
        // Loads in flight end now (as cancelled), then waiting requests, then `shutdown` itself.
        for source in daemon.registry.all where source.isFetching { source.cancelFetch(reason: .shutdown) }
        for token in daemon.pending.all(except: answer.token) {
            daemon.finish(
                token,
                .failure(
                    ResponseError(
                        code: ErrorCode.requestCancelled,
                        message: "Request cancelled by shutdown",
                        data: ["reason": "shutdown"])))
        }
        return .now(NullResult())
    }

    static let summary = "ends loads in flight and waiting requests; then only exit is accepted"
    static let resultSchema: Schema = .null
}
