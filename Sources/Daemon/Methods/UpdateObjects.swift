import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `updateObjects`: replaces objects of a simple source by identity.
enum UpdateObjectsRequest: AnsweredAtOnce {
    static let name = "updateObjects"
    static let section = "editing-a-simple-source"
    typealias Params = ObjectsParams
    typealias Result = Int

    static func handle(_ daemon: Daemon, _ params: ObjectsParams) throws -> Int {
        let source = try daemon.simpleSource(params.source)
        try source.update(params.objects)
        return source.objects.count
    }

    static let summary = "replaces objects of a simple source by identity"
    static let resultSchema: Schema = .integer(in: 0...Int.max)
}
