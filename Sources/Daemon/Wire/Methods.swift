import DataSources
import JSONKit
import JSONRPC

/// Every method of the protocol, with its params and result types: the one registry that
/// `initialize` lists, the handlers implement and Protocol/openrpc.json describes.
enum Methods {
    static let initialize = Method<InitializeParams, InitializeResult>(name: "initialize")
    static let shutdown = Method<NoParams, NullResult>(name: "shutdown")
    static let ping = Method<PingParams, PingResult>(name: "ping")

    static let createSource = Method<CreateSourceParams, SourceDescription>(name: "createSource")
    static let destroySource = Method<DestroySourceParams, DestroyedSources>(name: "destroySource")
    static let listSources = Method<NoParams, [SourceListing]>(name: "listSources")
    static let describeSource = Method<SourceParams, SourceDescription>(name: "describeSource")

    static let numberOfSections = Method<SourceParams, Int>(name: "numberOfSections")
    static let numberOfObjectsInSection = Method<SectionParams, Int>(name: "numberOfObjectsInSection")
    static let sectionTitles = Method<SourceParams, [JSON]>(name: "sectionTitles")
    static let objectAtIndexPath = Method<IndexPathParams, RevisionedRead>(name: "objectAtIndexPath")
    static let indexPathForObject = Method<IndexPathForObjectParams, IndexPath?>(name: "indexPathForObject")
    static let objectsInSection = Method<ObjectsInSectionParams, SectionSlice>(name: "objectsInSection")
    static let allObjects = Method<AllObjectsParams, RevisionedRead>(name: "allObjects")

    static let replaceObjects = Method<ObjectsParams, Int>(name: "replaceObjects")
    static let insertObjects = Method<InsertObjectsParams, Int>(name: "insertObjects")
    static let removeObjects = Method<RemoveObjectsParams, Int>(name: "removeObjects")
    static let updateObjects = Method<ObjectsParams, Int>(name: "updateObjects")

    static let fetchData = Method<FetchDataParams, FetchDataResult>(name: "fetchData")
    static let cancelFetch = Method<SourceParams, CancelResult>(name: "cancelFetch")
    static let fetchNextPage = Method<SourceParams, NextPageResult>(name: "fetchNextPage")
    static let willDisplayObjectAtIndexPath = Method<DisplayParams, DisplayResult>(name: "willDisplayObjectAtIndexPath")
    static let setRefreshInterval = Method<SetRefreshIntervalParams, SourceDescription>(name: "setRefreshInterval")
}

/// The method table: names to handlers that decode params, run, and encode the result.
struct MethodTable {
    /// What a handler leaves to do: answer now, or nothing yet (answered later).
    enum Outcome {
        case answer(JSON)
        case deferred
    }

    typealias Erased = (Daemon, Request, RequestToken) -> Result<Outcome, ResponseError>

    private(set) var handlers: [String: Erased] = [:]

    var names: [String] { handlers.keys.sorted() }

    subscript(name: String) -> Erased? { handlers[name] }

    /// A handler that answers at once.
    mutating func on<P, R>(_ method: Method<P, R>, _ body: @escaping (Daemon, P) throws -> R) {
        on(method) { daemon, params, _ in .now(try body(daemon, params)) }
    }

    /// A handler that may answer later, through `Daemon.answer(_:with:)`.
    mutating func on<P, R>(_ method: Method<P, R>, _ body: @escaping (Daemon, P, PendingAnswer<R>) throws -> Reply<R>) {
        precondition(handlers[method.name] == nil, "\(method.name) registered twice")
        let name = method.name
        handlers[name] = { daemon, request, token in
            Self.run(name, request, token) { params, answer in try body(daemon, params, answer) }
        }
    }

    /// Decode → handle → encode, with every failure as the error its client gets.
    private static func run<P: WireParams, R: WireEncodable>(_ name: String, _ request: Request, _ token: RequestToken,
                                                            _ body: (P, PendingAnswer<R>) throws -> Reply<R>) -> Result<Outcome, ResponseError> {
        do {
            var reader = try ObjectReader(request.params, field: "", expected: "an object with named members")
            let params = try P(&reader)
            try reader.finish()
            switch try body(params, PendingAnswer(token: token)) {
            case .now(let result): return .success(.answer(result.json))
            case .later: return .success(.deferred)
            }
        } catch let error as FieldError {
            return .failure(error.responseError)
        } catch let error as ResponseError {
            return .failure(error)
        } catch {
            return .failure(.internalError("\(name) failed: \(error)"))
        }
    }

}
