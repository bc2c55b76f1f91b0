import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `listSources`: every source, oldest first.
enum ListSourcesRequest: AnsweredAtOnce {
    static let name = "listSources"
    static let section = "reading"
    typealias Params = NoParams
    typealias Result = [SourceListing]

    static func handle(_ daemon: Daemon, _ params: NoParams) throws -> [SourceListing] {
        daemon.registry.all.map { SourceListing(name: $0.name, kind: $0.kind) }
    }

    static let summary = "every source, oldest first"
    static let resultSchema: Schema = .array(
        of: .object(
            [
                "name": .string,
                "kind": .string,
            ],
            required: ["name", "kind"]))
}

struct SourceListing: WireEncodable {
    let name: String
    let kind: String
    var json: JSON { ["name": JSON(name), "kind": JSON(kind)] }
}
