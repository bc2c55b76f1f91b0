import DataSources
import JSONKit
import WireSchema
import JSONRPC

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

    /// Registers a method of the protocol (`ProtocolMethods.all`).
    mutating func register<M: RequestMethod>(_ method: M.Type) {
        on(Method<M.Params, M.Result>(name: M.name), M.handle)
    }

    /// A handler that answers at once (tests add methods no client can call this way).
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
    private static func run<P: WireParams, R: WireEncodable>(
        _ name: String, _ request: Request, _ token: RequestToken,
        _ body: (P, PendingAnswer<R>) throws -> Reply<R>
    ) -> Result<Outcome, ResponseError> {
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
        } catch let refusal as Refusal {
            return .failure(FieldError(refusal).responseError)
        } catch let error as ResponseError {
            return .failure(error)
        } catch {
            return .failure(.internalError("\(name) failed: \(error)"))
        }
    }
}
