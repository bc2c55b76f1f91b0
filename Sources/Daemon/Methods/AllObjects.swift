import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `allObjects`: every row, section after section.
enum AllObjectsRequest: AnsweredAtOnce {
    static let name = "allObjects"
    static let section = "reading"
    typealias Params = AllObjectsParams
    typealias Result = RevisionedRead

    static func handle(_ daemon: Daemon, _ params: AllObjectsParams) throws -> RevisionedRead {
        let source = try daemon.source(params.source)
        try source.checkAllObjectsReadable()
        return RevisionedRead(member: "objects", value: .array(source.allObjects), revision: params.withRevision ? source.revision : nil)
    }

    static let summary = "every row, section after section"
    static let resultSchema: Schema = .anyOf([
        .array(of: .ref("Row")),
        .object(
            [
                "objects": .array(of: .ref("Row")),
                "revision": .integer(in: 0...Int.max),
            ],
            required: ["objects", "revision"]),
    ])
}

struct AllObjectsParams: DeclaredParams {
    var source: String
    var withRevision: Bool
    static let declaration = ObjectDeclaration(
        .source(), .flag("withRevision", default: false, doc: "answer {objects, revision}: the revision the rows were read at"),
        as: AllObjectsParams.init)
}
