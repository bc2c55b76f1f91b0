import JSONKit

/// The JSON-RPC 2.0 error codes this package uses.
package enum ErrorCode {
    package static let parseError = -32700
    package static let invalidRequest = -32600
    package static let methodNotFound = -32601
    package static let invalidParams = -32602
    package static let internalError = -32603
    /// LSP: a request arrived before `initialize`.
    package static let serverNotInitialized = -32002
    /// LSP: the client cancelled the request with `$/cancelRequest`.
    package static let requestCancelled = -32800
}

/// The `error` member of a response.
package struct ResponseError: Error, Sendable, Equatable {
    package let code: Int
    package let message: String
    package let data: JSON?

    package init(code: Int, message: String, data: JSON? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    package static func invalidRequest(_ message: String, data: JSON? = nil) -> ResponseError {
        ResponseError(code: ErrorCode.invalidRequest, message: "Invalid request: \(message)", data: data)
    }

    package static func invalidParams(_ message: String, data: JSON? = nil) -> ResponseError {
        ResponseError(code: ErrorCode.invalidParams, message: "Invalid params: \(message)", data: data)
    }

    package static func methodNotFound(_ method: String) -> ResponseError {
        ResponseError(code: ErrorCode.methodNotFound, message: "Method not found: \(method)", data: ["method": JSON(method)])
    }

    package static func internalError(_ message: String) -> ResponseError {
        ResponseError(code: ErrorCode.internalError, message: "Internal error: \(message)")
    }

    package var json: JSON {
        var members: [(String, JSON)] = [("code", JSON(code)), ("message", JSON(message))]
        if let data { members.append(("data", data)) }
        return .object(members)
    }
}

/// The `"jsonrpc"` member every message carries, made once and shared by every thread:
/// one string less per message. Sound because values are immutable and jansson counts
/// references atomically, which the build requires (`JSON_HAVE_ATOMIC_BUILTINS`; see
/// `Reference`).
enum JSONRPCVersion {
    static let value: JSON = "2.0"
}

package struct Request: Sendable {
    /// Kept as the client sent it, so the response echoes it exactly.
    package let id: JSON
    package let method: String
    /// An object or an array when present.
    package let params: JSON?
}

package struct Notification: Sendable {
    package let method: String
    package let params: JSON?

    package init(method: String, params: JSON?) {
        self.method = method
        self.params = params
    }

    package var json: JSON {
        var members: [(String, JSON)] = [("jsonrpc", JSONRPCVersion.value), ("method", JSON(method))]
        if let params { members.append(("params", params)) }
        // Large params (a change set of a million rows) keep the message packed, so that it is
        // encoded in pieces on every core.
        return params?.isEncodedInPieces == true ? .packedObject(members) : .object(members)
    }
}

/// One element of what a client sent.
package enum Message: Sendable {
    case request(Request)
    case notification(Notification)
    /// Not a valid request object; answered with `error` under `id` (null when unknown).
    case invalid(id: JSON, error: ResponseError)
    /// A response from the client. The daemon sends no requests, so these are dropped.
    case response(id: JSON)

    /// Validates one decoded JSON value as a JSON-RPC 2.0 message.
    package init(_ value: JSON) {
        guard value.isObject else {
            self = .invalid(id: .null, error: .invalidRequest("expected a request object, got \(value.kindDescription)"))
            return
        }
        // Members only checked are read in place (a value made of each would cost an
        // allocation apiece, on every message); `id` and `params` are kept, so made values.
        let message = value.cursor
        let idMember = value["id"]
        let id = idMember ?? .null
        if let idMember {
            switch idMember.kind {
            case .string, .integer, .real, .null: break
            default:
                self = .invalid(
                    id: .null, error: .invalidRequest("\"id\" must be a string, a number or null, got \(idMember.kindDescription)"))
                return
            }
        }
        var isVersion2 = false
        message.member("jsonrpc")?.withScalar { if case .string(let bytes) = $0 { isVersion2 = bytes.elementsEqual("2.0".utf8) } }
        guard isVersion2 else {
            self = .invalid(id: id, error: .invalidRequest("\"jsonrpc\" must be the string \"2.0\""))
            return
        }
        guard let methodMember = message.member("method") else {
            if idMember != nil, message.member("result") != nil || message.member("error") != nil {
                self = .response(id: id)
            } else {
                self = .invalid(id: id, error: .invalidRequest("missing \"method\""))
            }
            return
        }
        guard let method = methodMember.stringValue else {
            self = .invalid(id: id, error: .invalidRequest("\"method\" must be a string, got \(methodMember.kindDescription)"))
            return
        }
        let params = value["params"]
        if let params, !params.isObject, !params.isArray {
            self = .invalid(id: id, error: .invalidRequest("\"params\" must be an object or an array, got \(params.kindDescription)"))
            return
        }
        if idMember != nil {
            self = .request(Request(id: id, method: method, params: params))
        } else {
            self = .notification(Notification(method: method, params: params))
        }
    }
}

/// One frame's body, decoded.
package enum Payload: Sendable {
    case single(Message)
    /// A non-empty array; its responses go back together as one array.
    case batch([Message])
    /// Not JSON, or an empty batch: answered with one error under a null id.
    case unusable(ResponseError)
    /// Nothing to answer (notifications that could not be read); the reason is logged.
    case ignored(String)

    /// Above this many bytes, a message is handed on as jansson parsed it (see `init(body:scratch:)`).
    package static let largestPackedMessage = 64 << 10

    /// The reader's whole job for one frame. A message of the usual size is parsed in the
    /// thread's scratch arena (JSONKit's `withScratchAllocation`) and what it keeps (id,
    /// params, an error's data) is packed before the tree is dropped: the tree's nodes are
    /// neither malloc'd here nor freed by the main loop (malloc and free were 13 % of the
    /// daemon's CPU when pipelining; BENCHMARKS-HISTORY.md, "Eighth round"). A larger message (a list
    /// created or inserted whole) is handed on as a tree, whose rows the main loop packs on
    /// all cores. `scratch`: the packing's working storage, kept from one message to the next.
    package init(body: [UInt8], scratch: inout PackingScratch) {
        guard body.count <= Self.largestPackedMessage else {
            self.init(parsing: body)
            return
        }
        self = JSON.withScratchAllocation { Payload(parsing: body).packed(using: &scratch) }
    }

    package init(body: [UInt8]) {
        var scratch = PackingScratch()
        self.init(body: body, scratch: &scratch)
    }

    private init(parsing body: [UInt8]) {
        let value: JSON
        do {
            value = try JSON.parse(body)
        } catch {
            if OversizedIntegers.isUnholdable(error), let payload = OversizedIntegers.messages(in: Array(body)) {
                self = payload
                return
            }
            self = .unusable(
                ResponseError(
                    code: ErrorCode.parseError,
                    message: "Parse error: \(error.description)",
                    data: ["line": JSON(error.line), "column": JSON(error.column), "position": JSON(error.position)]))
            return
        }
        if let elements = value.arrayValue {
            guard !elements.isEmpty else {
                self = .unusable(.invalidRequest("empty batch"))
                return
            }
            self = .batch(elements.map(Message.init))
        } else {
            self = .single(Message(value))
        }
    }
}

extension Payload {
    /// The same payload with every value packed (see `JSON.packed()`).
    func packed(using scratch: inout PackingScratch) -> Payload {
        switch self {
        case .single(let message): return .single(message.packed(using: &scratch))
        case .batch(let messages): return .batch(messages.map { $0.packed(using: &scratch) })
        case .unusable(let error): return .unusable(error.packed(using: &scratch))
        case .ignored: return self
        }
    }
}

extension Message {
    func packed(using scratch: inout PackingScratch) -> Message {
        switch self {
        case .request(let request):
            return .request(
                Request(
                    id: request.id.cursor.packed(using: &scratch), method: request.method,
                    params: request.params?.cursor.packed(using: &scratch)))
        case .notification(let notification):
            return .notification(Notification(method: notification.method, params: notification.params?.cursor.packed(using: &scratch)))
        case .invalid(let id, let error):
            return .invalid(id: id.cursor.packed(using: &scratch), error: error.packed(using: &scratch))
        case .response(let id):
            return .response(id: id.cursor.packed(using: &scratch))
        }
    }
}

extension ResponseError {
    func packed(using scratch: inout PackingScratch) -> ResponseError {
        ResponseError(code: code, message: message, data: data?.cursor.packed(using: &scratch))
    }
}

/// What the daemon writes: responses, notifications, or a batch's responses together.
package enum Outgoing: Sendable {
    case response(id: JSON, result: Result<JSON, ResponseError>)
    case notification(Notification)
    case batch([Outgoing])

    package var json: JSON {
        switch self {
        case .response(let id, .success(let result)):
            if result.isEncodedInPieces {
                // As a notification's large params: the answer stays packed (a million rows read).
                return .packedObject([("jsonrpc", JSONRPCVersion.value), ("id", id), ("result", result)])
            }
            return JSON.object(("jsonrpc", JSONRPCVersion.value), ("id", id), ("result", result))
        case .response(let id, .failure(let error)):
            return JSON.object(("jsonrpc", JSONRPCVersion.value), ("id", id), ("error", error.json))
        case .notification(let notification):
            return notification.json
        case .batch(let responses):
            return .array(responses.map(\.json))
        }
    }
}
