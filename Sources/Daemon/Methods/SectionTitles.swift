import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `sectionTitles`: the sections' titles.
enum SectionTitlesRequest: AnsweredAtOnce {
    static let name = "sectionTitles"
    static let section = "reading"
    typealias Params = SourceParams
    typealias Result = [JSON]

    static func handle(_ daemon: Daemon, _ params: SourceParams) throws -> [JSON] {
        try daemon.source(params.source).sectionTitles
    }

    static let summary = "the sections' titles"
    static let resultSchema: Schema = .type("array")
}
