import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `replaceObjects`: replaces a simple source's objects.
enum ReplaceObjectsRequest: AnsweredAtOnce {
    static let name = "replaceObjects"
    static let section = "editing-a-simple-source"
    typealias Params = ObjectsParams
    typealias Result = Int

    static func handle(_ daemon: Daemon, _ params: ObjectsParams) throws -> Int {
        let source = try daemon.simpleSource(params.source)
        source.replaceObjects(params.objects)
        return source.objects.count
    }

    static let summary = "replaces a simple source's objects"
    static let resultSchema: Schema = .integer(in: 0...Int.max)
}
