import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `retry`: asks a paginated source again for the direction that failed, and only that one
/// (Paging 3's `retry()`).
enum RetryRequest: AnsweredAtOnce {
    static let name = "retry"
    static let section = "load-states-and-retry"
    typealias Params = SourceParams
    typealias Result = RetryResult

    static func handle(_ daemon: Daemon, _ params: SourceParams) throws -> RetryResult {
        let paginated = try daemon.paginatedSource(params.source)
        if let refusal = paginated.retryRefusal { return RetryResult(outcome: .refused(refusal)) }
        guard let direction = paginated.retry() else {
            return RetryResult(outcome: .refused(paginated.retryRefusal ?? "nothing to retry"))
        }
        return RetryResult(outcome: .started(direction))
    }

    static let summary = "asks a paginated source again for the direction whose load failed, and only that one"
    static let resultSchema: Schema = .anyOf([
        .object(
            [
                "started": .constant(true),
                "direction": .oneOfValues(["refresh", "prepend", "append"]),
            ],
            required: ["started", "direction"]),
        .ref("Refusal"),
    ])
}

struct RetryResult: WireEncodable {
    enum Outcome {
        case started(LoadDirection)
        case refused(String)
    }
    let outcome: Outcome
    var json: JSON {
        switch outcome {
        case .started(let direction): ["started": true, "direction": JSON(direction.rawValue)]
        case .refused(let reason): ["started": false, "reason": JSON(reason)]
        }
    }
}
