import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `setRefreshInterval`: makes a remote or paginated source live (or stops it).
enum SetRefreshIntervalRequest: AnsweredAtOnce {
    static let name = "setRefreshInterval"
    static let section = "live-lists"
    typealias Params = SetRefreshIntervalParams
    typealias Result = SourceDescription

    static func handle(_ daemon: Daemon, _ params: SetRefreshIntervalParams) throws -> SourceDescription {
        let remote = try daemon.source(params.source, as: RemoteCollection.self, "a remote or paginated source", for: " to refresh")
        daemon.setRefreshInterval(params.seconds, of: remote)
        return remote.describe()
    }

    static let summary = "makes a remote or paginated source live (or stops it)"
    static let resultSchema: Schema = .ref("SourceDescription")
}

/// `setRefreshInterval`: `{source, seconds}`, seconds a number or null (no refreshes).
struct SetRefreshIntervalParams: DeclaredParams {
    var source: String
    var seconds: Double?
    // null is a value here (no refreshes), not an absent member.
    static let declaration = ObjectDeclaration(
        .source(),
        .requiredAllowingNull(
            "seconds", RemoteConfigurationDecoding.refreshIntervalShape, doc: "seconds between refreshes of a live list; null: none"),
        as: SetRefreshIntervalParams.init)
}
