import DataSources
import JSONKit
import JSONRPC
import WireSchema

/// `performAction`: calls one of a remote or paginated source's actions on a row. The
/// optimistic change goes out as a `didChange` before this answer; `didSettleMutation` says
/// how the server took it.
enum PerformActionRequest: AnsweredAtOnce {
    static let name = "performAction"
    static let section = "actions"
    typealias Params = PerformActionParams
    typealias Result = MutationAnswer
    static let summary = "calls one of a source's actions on a row, showing its change at once"

    static func handle(_ daemon: Daemon, _ params: PerformActionParams) throws -> MutationAnswer {
        let source = try daemon.source(params.source)
        guard let remote = source as? RemoteCollection else { throw Refusal.noActions(source: source.name, kind: source.kind) }
        let id = try remote.performAction(params.action, identity: params.identity, values: params.values)
        return MutationAnswer(mutation: id)
    }

    static let resultSchema: Schema = .object(
        [
            "mutation": .string.described("the mutation's ID, as didSettleMutation and cancelMutation name it"),
            "status": .constant("pending"),
        ],
        required: ["mutation", "status"])
}

struct PerformActionParams: DeclaredParams {
    var source: String
    var action: String
    var identity: JSON?
    var values: JSON

    static let declaration = ObjectDeclaration(
        .source(),
        .required("action", Shape.nonEmptyString, doc: "the name of one of the source's actions"),
        .optional("identity", Shape.anything, doc: "the identity of the row (required for update and remove)"),
        .optional(
            "values", RequestBodyDecoding.objectShape, default: JSON.object([]), defaultText: "{}",
            doc: "the values the action declares ($values)"),
        as: PerformActionParams.init)
}

struct MutationAnswer: WireEncodable {
    let mutation: String
    var json: JSON { ["mutation": JSON(mutation), "status": "pending"] }
}
