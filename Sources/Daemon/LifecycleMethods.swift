import DataSources
import Dispatch
import JSONKit
import JSONRPC

public enum DaemonInfo {
    public static let name = "datasourced"
    public static let version = "0.2.0"
    /// The version of Protocol.md (and Protocol/openrpc.json) this daemon speaks: the minor
    /// number grows with additive changes, the major one with changes that break clients.
    public static let protocolVersion = "1.3"
}

extension Daemon {
    static func registerLifecycleMethods(into table: inout MethodTable) {
        table.on(Methods.initialize) { daemon, params in try daemon.initialize(params) }
        table.on(Methods.shutdown) { daemon, _, answer in daemon.shutdown(answer) }
        table.on(Methods.ping) { daemon, params, answer in daemon.ping(params, answer) }
    }

    private func initialize(_ params: InitializeParams) throws(ResponseError) -> InitializeResult {
        guard lifecycle == .uninitialized else {
            throw .invalidRequest("\"initialize\" was already received; send it once per session")
        }
        if params.clientName != nil || params.clientVersion != nil {
            logger.info("client", metadata: ["name": "\(params.clientName ?? "?")", "version": "\(params.clientVersion ?? "?")"])
        }
        changeValuesLimit = params.changeValuesLimit
        loader.userAgent = DaemonInfo.userAgent(clientName: params.clientName, clientVersion: params.clientVersion)
        lifecycle = .running
        return InitializeResult(methods: methods.names, sourceKinds: registry.kinds, maxMessageSize: options.maximumMessageSize,
                                changeValues: true)
    }

    private func shutdown(_ answer: PendingAnswer<NullResult>) -> Reply<NullResult> {
        lifecycle = .shutDown
        refreshTimers.disarmAll()
        for case let source as RemoteCollection in registry.all { source.stopRefresh() }
        // Loads in flight end now (as cancelled), then waiting requests, then `shutdown` itself.
        for source in registry.all where source.isFetching { source.cancelFetch(reason: .shutdown) }
        for token in pending.all(except: answer.token) {
            finish(token, .failure(ResponseError(code: ErrorCode.requestCancelled,
                                                 message: "Request cancelled by shutdown",
                                                 data: ["reason": "shutdown"])))
        }
        return .now(NullResult())
    }

    /// Answers at once, or after `delayMilliseconds`: a request clients can use to test
    /// their own timeouts and `$/cancelRequest` handling.
    private func ping(_ params: PingParams, _ answer: PendingAnswer<PingResult>) -> Reply<PingResult> {
        let delay = params.delayMilliseconds
        guard delay > 0 else { return .now(PingResult(delayMilliseconds: 0)) }
        let mailbox = self.mailbox
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + .milliseconds(delay))
        timer.setEventHandler { mailbox.post(.delayElapsed(answer.token, milliseconds: delay)) }
        delayTimers[answer.token] = timer
        timer.resume()
        return .later
    }
}
