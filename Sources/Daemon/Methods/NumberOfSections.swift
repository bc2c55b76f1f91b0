import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `numberOfSections`: the number of sections.
enum NumberOfSectionsRequest: AnsweredAtOnce {
    static let name = "numberOfSections"
    static let section = "reading"
    typealias Params = SourceParams
    typealias Result = Int

    static func handle(_ daemon: Daemon, _ params: SourceParams) throws -> Int {
        try daemon.source(params.source).numberOfSections
    }

    static let summary = "the number of sections"
    static let resultSchema: Schema = .integer(in: 0...Int.max)
}
