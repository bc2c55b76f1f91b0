import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `indexPathForObject`: where the first row with the same identity is.
enum IndexPathForObjectRequest: AnsweredAtOnce {
    static let name = "indexPathForObject"
    static let section = "reading"
    typealias Params = IndexPathForObjectParams
    typealias Result = IndexPath?

    static func handle(_ daemon: Daemon, _ params: IndexPathForObjectParams) throws -> IndexPath? {
        try daemon.source(params.source).indexPath(for: params.object)
    }

    static let summary = "where the first row with the same identity is"
    static let resultSchema: Schema = .anyOf([
        .ref("IndexPath"),
        .null,
    ])
}

struct IndexPathForObjectParams: DeclaredParams {
    var source: String
    var object: JSON
    // Any JSON value, null included, is an object a source may hold.
    static let declaration = ObjectDeclaration(
        .source(), .anyValue("object", doc: "a row, or any value with the same identity"), as: IndexPathForObjectParams.init)
}
