import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `fetchData`: starts a load cycle; with wait, answers when it ends.
enum FetchDataRequest: RequestMethod {
    static let name = "fetchData"
    static let section = "loading"
    typealias Params = FetchDataParams
    typealias Result = FetchDataResult

    static func handle(
        _ daemon: Daemon, _ params: FetchDataParams, _ answer: PendingAnswer<FetchDataResult>
    ) throws -> Reply<FetchDataResult> {
        let source = try daemon.source(params.source)
        guard params.wait else {
            source.fetchData()
            return .now(.started(isFetching: source.isFetching))
        }
        // Registered before the cycle starts (a local source's cycle ends within fetchData), but
        // armed only by this cycle's willLoadData: the final event of a load this fetchData
        // supersedes must not answer it.
        daemon.fetchWaiters[ObjectIdentifier(source), default: []].append(FetchWaiter(answer: answer))
        source.fetchData()
        return .later
    }

    static let summary = "starts a load cycle; with wait, answers when it ends"
    static let resultSchema: Schema = .anyOf([
        .object(
            [
                "isFetching": .boolean
            ],
            required: ["isFetching"]),
        .object(
            [
                "isFetching": .constant(false),
                "outcome": .constant("finished"),
            ],
            required: ["isFetching", "outcome"]),
        .object(
            [
                "isFetching": .constant(false),
                "outcome": .constant("failed"),
                "error": .ref("LoadFailure"),
            ],
            required: ["isFetching", "outcome", "error"]),
    ])
}

struct FetchDataParams: DeclaredParams {
    var source: String
    var wait: Bool
    static let declaration = ObjectDeclaration(
        .source(), .flag("wait", default: false, doc: "answer when the cycle ends, with its outcome"), as: FetchDataParams.init)
}

/// `fetchData`: whether a cycle is in flight, or with `wait: true` how it ended.
enum FetchDataResult: WireEncodable {
    case started(isFetching: Bool)
    case finished
    case failed(LoadFailure)

    var json: JSON {
        switch self {
        case .started(let isFetching): ["isFetching": JSON(isFetching)]
        case .finished: ["isFetching": false, "outcome": "finished"]
        case .failed(let failure): ["isFetching": false, "outcome": "failed", "error": failure.json]
        }
    }
}
