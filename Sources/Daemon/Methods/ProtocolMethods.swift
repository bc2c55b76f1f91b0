import JSONKit
import WireSchema

/// A request method of the protocol. Each has one file in this folder, named after it, that
/// holds everything about it but its prose in Protocol.md: its params, declared once (from
/// which come their decoding and their entry in Protocol/openrpc.json), its result and how it
/// is encoded, and its handler. CONTRIBUTING.md lists the steps to add one.
protocol RequestMethod {
    associatedtype Params: WireParams
    associatedtype Result: WireEncodable
    static var name: String { get }
    /// One line: what the method does.
    static var summary: String { get }
    static var resultSchema: Schema { get }
    /// The anchor of its section in Protocol.md, where its prose is.
    static var section: String { get }
    /// The errors it may answer besides the ones every request may (`InvalidParams`).
    static var errors: [ErrorComponent] { get }
    /// The method's object in Protocol/openrpc.json.
    static var openRPC: JSON { get }
    /// Answers now, or returns `.later` and answers through `Daemon.answer(_:with:)`.
    static func handle(_ daemon: Daemon, _ params: Params, _ answer: PendingAnswer<Result>) throws -> Reply<Result>
}

extension RequestMethod {
    static var errors: [ErrorComponent] { [.invalidParams] }
    static var section: String { name.lowercased() }

    static var openRPC: JSON { defaultOpenRPC }

    /// The method's object as its declarations give it.
    static var defaultOpenRPC: JSON {
        .object([
            ("name", JSON(name)),
            ("summary", JSON(summary)),
            ("paramStructure", "by-name"),
            ("params", .array(Params.members.map(\.contentDescriptor))),
            ("result", .object([("name", JSON(name + "Result")), ("schema", resultSchema.json)])),
            ("errors", .array(errors.map { .object([("$ref", JSON("#/components/errors/\($0.name)"))]) })),
            ("externalDocs", .object([("description", "its prose"), ("url", JSON("Protocol.md#\(section)"))])),
        ])
    }
}

/// A method whose answer never waits.
protocol AnsweredAtOnce: RequestMethod {
    static func handle(_ daemon: Daemon, _ params: Params) throws -> Result
}

extension AnsweredAtOnce {
    static func handle(_ daemon: Daemon, _ params: Params, _ answer: PendingAnswer<Result>) throws -> Reply<Result> {
        .now(try handle(daemon, params))
    }
}

/// Every request method, in the order Protocol/openrpc.json lists them: the one registry
/// that `initialize` lists and the daemon dispatches from.
enum ProtocolMethods {
    static let all: [any RequestMethod.Type] = [
        InitializeRequest.self,
        ShutdownRequest.self,
        PingRequest.self,

        CreateSourceRequest.self,
        DestroySourceRequest.self,
        ListSourcesRequest.self,
        DescribeSourceRequest.self,

        NumberOfSectionsRequest.self,
        NumberOfObjectsInSectionRequest.self,
        SectionTitlesRequest.self,
        ObjectAtIndexPathRequest.self,
        IndexPathForObjectRequest.self,
        ObjectsInSectionRequest.self,
        AllObjectsRequest.self,

        ReplaceObjectsRequest.self,
        InsertObjectsRequest.self,
        RemoveObjectsRequest.self,
        UpdateObjectsRequest.self,

        FetchDataRequest.self,
        CancelFetchRequest.self,
        FetchNextPageRequest.self,
        FetchPreviousPageRequest.self,
        RetryRequest.self,
        WillDisplayObjectAtIndexPathRequest.self,
        SetRefreshIntervalRequest.self,
        UpdateSourceRequest.self,
        SetFilterRequest.self,
        AllowCredentialRequest.self,
        PerformActionRequest.self,
        CancelMutationRequest.self,
    ]
}
