import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `describeSource`: a source's state.
enum DescribeSourceRequest: AnsweredAtOnce {
    static let name = "describeSource"
    static let section = "reading"
    typealias Params = SourceParams
    typealias Result = SourceDescription

    static func handle(_ daemon: Daemon, _ params: SourceParams) throws -> SourceDescription {
        try daemon.source(params.source).describe()
    }

    static let summary = "a source's state"
    static let resultSchema: Schema = .ref("SourceDescription")
}
