import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `insertObjects`: inserts into a simple source.
enum InsertObjectsRequest: AnsweredAtOnce {
    static let name = "insertObjects"
    static let section = "editing-a-simple-source"
    typealias Params = InsertObjectsParams
    typealias Result = Int

    static func handle(_ daemon: Daemon, _ params: InsertObjectsParams) throws -> Int {
        let source = try daemon.simpleSource(params.source)
        try source.insert(params.objects, at: params.index ?? source.objects.count)
        return source.objects.count
    }

    static let summary = "inserts into a simple source"
    static let resultSchema: Schema = .integer(in: 0...Int.max)
}

struct InsertObjectsParams: DeclaredParams {
    var source: String
    var objects: [JSON]
    var index: Int?
    static let declaration = ObjectDeclaration(
        .source(), .required("objects", .array, doc: "the objects to insert"),
        .optional("index", .integer(in: 0...Int.max), doc: "where the first goes; absent: at the end"), as: InsertObjectsParams.init)
}
