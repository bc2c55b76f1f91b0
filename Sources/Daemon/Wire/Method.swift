import DataSources
import JSONKit
import WireSchema

/// A request's params, decoded and checked: every method has one such type.
protocol WireParams {
    /// Reads the members it knows; the caller refuses the rest (`ObjectReader.finish`).
    init(_ reader: inout ObjectReader) throws(FieldError)
    /// The members as Protocol/openrpc.json lists them.
    static var members: [Member] { get }
}

/// Params declared once, as fields: the decoding and the members both come from `declaration`.
protocol DeclaredParams: WireParams {
    static var declaration: ObjectDeclaration<Self> { get }
}

extension DeclaredParams {
    init(_ reader: inout ObjectReader) throws(FieldError) {
        self = try Self.declaration.decode(&reader)
    }

    static var members: [Member] { declaration.members }
}

/// A value the protocol sends: a result or a notification's params.
protocol WireEncodable {
    var json: JSON { get }
}

/// One method of the protocol: its name and the types of its params and result, so that a
/// handler that answers the wrong shape does not compile.
struct Method<Params: WireParams, Result: WireEncodable>: Sendable {
    let name: String
}

/// The request to answer later with a `Result` (a deferred answer keeps its type).
struct PendingAnswer<Result: WireEncodable> {
    let token: RequestToken
}

/// What a handler gives back: the result now, or a promise to answer through
/// `Daemon.answer(_:with:)`.
enum Reply<Result: WireEncodable> {
    case now(Result)
    case later
}

/// Params for methods that take none.
struct NoParams: DeclaredParams {
    static let declaration = ObjectDeclaration(as: { NoParams() })
}

extension JSON: WireEncodable {
    var json: JSON { self }
}

extension Int: WireEncodable {
    var json: JSON { JSON(self) }
}

extension Array: WireEncodable where Element: WireEncodable {
    var json: JSON { .array(map(\.json)) }
}

extension Optional: WireEncodable where Wrapped: WireEncodable {
    var json: JSON { self?.json ?? .null }
}

/// `null`, the result of `shutdown`.
struct NullResult: WireEncodable {
    var json: JSON { .null }
}
