import DataSources
import JSONKit

// The results of the methods that do not answer a model value directly.

struct InitializeResult: WireEncodable {
    let methods: [String]
    let sourceKinds: [String]
    let maxMessageSize: Int
    let changeValues: Bool

    var json: JSON {
        [
            "protocolVersion": JSON(DaemonInfo.protocolVersion),
            "serverInfo": ["name": JSON(DaemonInfo.name), "version": JSON(DaemonInfo.version)],
            "capabilities": .object([
                ("methods", .array(methods.map { JSON($0) })),
                ("sourceKinds", .array(sourceKinds.map { JSON($0) })),
                ("notifications", .array(NotificationName.allCases.map { JSON($0.rawValue) })),
                ("batches", true),
                ("cancelRequest", true),
                ("maxMessageSize", JSON(maxMessageSize)),
                ("changeValues", JSON(changeValues)),
            ]),
        ]
    }
}

struct PingResult: WireEncodable {
    let delayMilliseconds: Int
    var json: JSON { ["delayMilliseconds": JSON(delayMilliseconds)] }
}

struct DestroyedSources: WireEncodable {
    let names: [String]
    var json: JSON { ["destroyed": .array(names.map { JSON($0) })] }
}

struct SourceListing: WireEncodable {
    let name: String
    let kind: String
    var json: JSON { ["name": JSON(name), "kind": JSON(kind)] }
}

/// `objectsInSection`: a slice of one section, and the revision it was read at.
struct SectionSlice: WireEncodable {
    let section: Int
    let start: Int
    let objects: [JSON]
    let numberOfObjects: Int
    let revision: Int

    var json: JSON {
        ["section": JSON(section), "start": JSON(start), "objects": .array(objects),
         "numberOfObjects": JSON(numberOfObjects), "revision": JSON(revision)]
    }
}

/// A read that answers its value as it is, or with `withRevision: true` as
/// `{member: value, "revision": N}`.
struct RevisionedRead: WireEncodable {
    let member: String
    let value: JSON
    /// nil: the plain value (the 1.0 shape).
    let revision: Int?

    var json: JSON {
        guard let revision else { return value }
        return [member: value, "revision": JSON(revision)]
    }
}

struct CancelResult: WireEncodable {
    let cancelled: Bool
    var json: JSON { ["cancelled": JSON(cancelled)] }
}

struct DisplayResult: WireEncodable {
    let fetchStarted: Bool
    var json: JSON { ["fetchStarted": JSON(fetchStarted)] }
}

struct NextPageResult: WireEncodable {
    /// nil: the page was started.
    let refusal: String?
    var json: JSON {
        guard let refusal else { return ["started": true] }
        return ["started": false, "reason": JSON(refusal)]
    }
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
