/// A request method of the protocol. Each has one file in this folder, named after it, that
/// holds everything about it but its prose in Protocol.md: its params and how they are
/// decoded and checked, its result and how it is encoded, its handler, and its entry in
/// Protocol/openrpc.json (`openRPC`), from which `datasourced schema` prints that document.
/// CONTRIBUTING.md lists the steps to add one.
protocol RequestMethod {
    associatedtype Params: WireParams
    associatedtype Result: WireEncodable
    static var name: String { get }
    /// The method's object in Protocol/openrpc.json, as JSON text.
    static var openRPC: String { get }
    /// Answers now, or returns `.later` and answers through `Daemon.answer(_:with:)`.
    static func handle(_ daemon: Daemon, _ params: Params, _ answer: PendingAnswer<Result>) throws -> Reply<Result>
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
    ]
}
