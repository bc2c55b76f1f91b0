import Dispatch
import JSONKit
import JSONRPC

public enum DaemonInfo {
    public static let name = "datasourced"
    public static let version = "0.1.0"
    /// Bumped when a change to Protocol.md breaks existing clients.
    public static let protocolVersion = "1.0"
}

extension Daemon {
    static func registerLifecycleMethods(into table: inout [String: Handler]) {
        table["initialize"] = { daemon, request, _ in try daemon.initialize(request) }
        table["shutdown"] = { daemon, request, token in try daemon.shutdown(request, token) }
        table["ping"] = { daemon, request, token in try daemon.ping(request, token) }
    }

    private func initialize(_ request: Request) throws(ResponseError) -> Reply {
        guard lifecycle == .uninitialized else {
            throw .invalidRequest("\"initialize\" was already received; send it once per session")
        }
        let params = try Params(request.params)
        if let client = params["clientInfo"] {
            logger.info("client", metadata: ["name": "\(client["name"]?.stringValue ?? "?")",
                                             "version": "\(client["version"]?.stringValue ?? "?")"])
        }
        lifecycle = .running
        return .result([
            "protocolVersion": JSON(DaemonInfo.protocolVersion),
            "serverInfo": ["name": JSON(DaemonInfo.name), "version": JSON(DaemonInfo.version)],
            "capabilities": capabilities,
        ])
    }

    var capabilities: JSON {
        .object([
            ("methods", .array(methods.keys.sorted().map { JSON($0) })),
            ("sourceKinds", .array(registry.kinds.map { JSON($0) })),
            ("notifications", .array(["dataSource/willLoadData", "dataSource/didPartiallyLoad", "dataSource/finishedLoading",
                                      "dataSource/failedWithError", "dataSource/didChange"].map { JSON($0) })),
            ("batches", true),
            ("cancelRequest", true),
            ("maxMessageSize", JSON(options.maximumMessageSize)),
        ])
    }

    private func shutdown(_ request: Request, _ token: RequestToken) throws(ResponseError) -> Reply {
        lifecycle = .shutDown
        // Loads in flight end now (as cancelled), then waiting requests, then `shutdown` itself.
        for source in registry.all where source.isFetching { source.cancelFetch() }
        for token in pending.all(except: token) {
            finish(token, .failure(ResponseError(code: ErrorCode.requestCancelled,
                                                 message: "Request cancelled by shutdown",
                                                 data: ["reason": "shutdown"])))
        }
        return .result(.null)
    }

    /// Answers at once, or after `delayMilliseconds`: a request clients can use to test
    /// their own timeouts and `$/cancelRequest` handling.
    private func ping(_ request: Request, _ token: RequestToken) throws(ResponseError) -> Reply {
        let params = try Params(request.params)
        let delay = try params.optionalInteger("delayMilliseconds", in: 0...60_000) ?? 0
        guard delay > 0 else { return .result(["delayMilliseconds": 0]) }
        let mailbox = self.mailbox
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(delay)) {
            mailbox.post(.delayElapsed(token, milliseconds: delay))
        }
        return .deferred
    }
}
