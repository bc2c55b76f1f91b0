import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `removeObjects`: removes from a simple source.
enum RemoveObjectsRequest: AnsweredAtOnce {
    static let name = "removeObjects"
    static let section = "editing-a-simple-source"
    typealias Params = RemoveObjectsParams
    typealias Result = Int

    static func handle(_ daemon: Daemon, _ params: RemoveObjectsParams) throws -> Int {
        let source = try daemon.simpleSource(params.source)
        try source.remove(at: params.index, count: params.count)
        return source.objects.count
    }

    static let summary = "removes from a simple source"
    static let resultSchema: Schema = .integer(in: 0...Int.max)
}

struct RemoveObjectsParams: DeclaredParams {
    var source: String
    var index: Int
    var count: Int
    static let declaration = ObjectDeclaration(
        .source(), .required("index", .integer(in: 0...Int.max), doc: "the first row removed"),
        .optional("count", .integer(in: 0...Int.max), default: 1, doc: "how many rows"), as: RemoveObjectsParams.init)
}
