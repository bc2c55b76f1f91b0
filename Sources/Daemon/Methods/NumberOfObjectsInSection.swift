import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `numberOfObjectsInSection`: the number of rows in a section.
enum NumberOfObjectsInSectionRequest: AnsweredAtOnce {
    static let name = "numberOfObjectsInSection"
    static let section = "reading"
    typealias Params = SectionParams
    typealias Result = Int

    static func handle(_ daemon: Daemon, _ params: SectionParams) throws -> Int {
        let source = try daemon.source(params.source)
        try source.validate(section: params.section)
        return source.numberOfObjects(inSection: params.section)
    }

    static let summary = "the number of rows in a section"
    static let resultSchema: Schema = .integer(in: 0...Int.max)
}

struct SectionParams: DeclaredParams {
    var source: String
    var section: Int
    static let declaration = ObjectDeclaration(.source(), .required("section", .integer(in: 0...Int.max)), as: SectionParams.init)
}
