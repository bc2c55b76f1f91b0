import DataSources
import JSONKit
import JSONRPC
import WireSchema

/// `cancelMutation`: rolls back a mutation the server has not answered: one queued to be
/// sent again, or one waiting for those made before it.
enum CancelMutationRequest: AnsweredAtOnce {
    static let name = "cancelMutation"
    static let section = "actions"
    typealias Params = CancelMutationParams
    typealias Result = CancelMutationResult
    static let summary = "rolls back a queued or waiting mutation"

    static func handle(_ daemon: Daemon, _ params: CancelMutationParams) throws -> CancelMutationResult {
        let source = try daemon.source(params.source)
        guard let remote = source as? RemoteCollection else { throw Refusal.noActions(source: source.name, kind: source.kind) }
        try remote.cancelMutation(params.mutation)
        return CancelMutationResult()
    }

    static let resultSchema: Schema = .object(["rolledBack": .constant(true)], required: ["rolledBack"])
}

struct CancelMutationParams: DeclaredParams {
    var source: String
    var mutation: String

    static let declaration = ObjectDeclaration(
        .source(), .required("mutation", Shape.nonEmptyString, doc: "the ID performAction answered"), as: CancelMutationParams.init)
}

struct CancelMutationResult: WireEncodable {
    var json: JSON { ["rolledBack": true] }
}
