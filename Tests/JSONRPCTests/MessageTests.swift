@testable import JSONKit
import JSONRPC
import Testing

private func message(_ text: String) throws -> Message { Message(try JSON.parse(text)) }

@Suite struct MessageTests {
    @Test func requestsAndNotifications() throws {
        guard case .request(let request) = try message(#"{"jsonrpc":"2.0","id":"7","method":"m","params":[1]}"#) else {
            Issue.record("expected a request")
            return
        }
        #expect(request.id == "7")
        #expect(request.params == [1])
        guard case .request(let nullID) = try message(#"{"jsonrpc":"2.0","id":null,"method":"m"}"#) else {
            Issue.record("a null id is still a request")
            return
        }
        #expect(nullID.id.isNull)
        guard case .notification(let notification) = try message(#"{"jsonrpc":"2.0","method":"n"}"#) else {
            Issue.record("expected a notification")
            return
        }
        #expect(notification.method == "n")
        guard case .response = try message(#"{"jsonrpc":"2.0","id":1,"result":null}"#) else {
            Issue.record("expected a response")
            return
        }
    }

    @Test(arguments: [
        (#"{"id":1,"method":"m"}"#, "\"jsonrpc\" must be the string \"2.0\"", JSON(1)),
        (#"{"jsonrpc":"2.0","id":1,"method":[]}"#, "\"method\" must be a string, got an array", JSON(1)),
        (#"{"jsonrpc":"2.0","id":1}"#, "missing \"method\"", JSON(1)),
        (#"{"jsonrpc":"2.0","id":true,"method":"m"}"#, "\"id\" must be a string, a number or null, got a boolean", JSON.null),
        (#"{"jsonrpc":"2.0","id":2,"method":"m","params":3}"#, "\"params\" must be an object or an array, got an integer", JSON(2)),
        ("[]", "expected a request object, got an array", JSON.null),
    ])
    func invalidRequests(text: String, problem: String, id: JSON) throws {
        guard case .invalid(let echoed, let error) = try message(text) else {
            Issue.record("expected invalid")
            return
        }
        #expect(error.code == ErrorCode.invalidRequest)
        #expect(error.message == "Invalid request: \(problem)")
        #expect(echoed == id)
    }

    @Test func payloads() {
        guard case .unusable(let parse) = Payload(body: Array("{".utf8)) else {
            Issue.record("expected a parse error")
            return
        }
        #expect(parse.code == ErrorCode.parseError)
        #expect(parse.data?["line"] == 1)
        guard case .unusable(let empty) = Payload(body: Array("[]".utf8)) else {
            Issue.record("expected an empty batch")
            return
        }
        #expect(empty.code == ErrorCode.invalidRequest)
        guard case .batch(let elements) = Payload(body: Array("[1,2,3]".utf8)) else {
            Issue.record("expected a batch")
            return
        }
        #expect(elements.count == 3)
    }

    @Test func encodesResponsesAndNotifications() {
        #expect(Outgoing.response(id: "a", result: .success(nil)).json.text() == #"{"jsonrpc":"2.0","id":"a","result":null}"#)
        #expect(
            Outgoing.response(id: 1, result: .failure(.methodNotFound("x"))).json.text()
                == #"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found: x","data":{"method":"x"}}}"#)
        #expect(
            Outgoing.notification(Notification(method: "n", params: ["s": "x"])).json.text()
                == #"{"jsonrpc":"2.0","method":"n","params":{"s":"x"}}"#)
    }

    /// Large packed params or a large packed result keep the message packed, so that it is
    /// encoded in pieces (JSONKit's piecewise encoding); the bytes are those of the message
    /// built as a tree. Small ones make a tree, as before.
    @Test func aMessageAroundLargePackedParamsStaysPackedAndEncodesAlike() {
        let runs = (0..<60_000).map { (0, $0 * 3, 2 as Int?) }
        let params = JSON.packedObject([("source", "s"), ("changes", JSON.packedObject([("deleted", .integerTuples(runs))]))])
        #expect(params.isEncodedInPieces)
        let notification = Outgoing.notification(Notification(method: "dataSource/didChange", params: params)).json
        let response = Outgoing.response(id: 4, result: .success(params)).json
        #expect(notification.isPacked && response.isPacked)
        // Written out here, independently of jansson and of the pieces.
        let encodedParams = #"{"source":"s","changes":{"deleted":["# + runs.map { "[0,\($0.1),2]" }.joined(separator: ",") + "]}}"
        #expect(
            notification.encoded() == Array((#"{"jsonrpc":"2.0","method":"dataSource/didChange","params":"# + encodedParams + "}").utf8))
        #expect(response.encoded() == Array((#"{"jsonrpc":"2.0","id":4,"result":"# + encodedParams + "}").utf8))
        let small = JSON.packedObject([("source", "s")])
        #expect(!Outgoing.notification(Notification(method: "n", params: small)).json.isPacked)
        #expect(!Outgoing.response(id: 4, result: .success(small)).json.isPacked)
    }

    /// A message of the usual size is handed on packed: id, params and an error's data.
    @Test func aMessageIsHandedOnPacked() throws {
        let body = #"{"jsonrpc":"2.0","id":7,"method":"insertObjects","params":{"source":"s","objects":[{"id":1,"t":"é"},2.5,null]}}"#
        guard case .single(.request(let request)) = Payload(body: Array(body.utf8)) else {
            Issue.record("expected a request")
            return
        }
        let params = try #require(request.params)
        #expect(request.id.isPacked && params.isPacked)
        #expect(params.text() == #"{"source":"s","objects":[{"id":1,"t":"é"},2.5,null]}"#)
        #expect(request.id == 7 && request.method == "insertObjects")

        let batch = #"[{"jsonrpc":"2.0","method":"n","params":[1]},{"jsonrpc":"2.0","id":"x","method":7},5]"#
        guard case .batch(let messages) = Payload(body: Array(batch.utf8)), messages.count == 3,
            case .notification(let notification) = messages[0], case .invalid(let id, _) = messages[1]
        else {
            Issue.record("expected a notification and two invalid messages")
            return
        }
        #expect(notification.params?.isPacked == true && id.isPacked && id == "x")
        guard case .unusable(let parseError) = Payload(body: Array(#"{"a":"#.utf8)) else {
            Issue.record("expected a parse error")
            return
        }
        #expect(parseError.data?.isPacked == true && parseError.data?["position"] != nil)
    }

    /// ... parsed in the reader's scratch arena, and nothing of its tree outlives the parse: the
    /// thread keeps its arena from one message to the next (a message that kept a node would
    /// take the arena with it).
    @Test(.enabled(if: JSON.arenasAreOn, "arenas are off (DATASOURCED_JSON_ARENAS=0, as under AddressSanitizer)"))
    func aMessageLeavesNothingInTheReadersArena() throws {
        _ = Payload(body: Array(#"{"jsonrpc":"2.0","method":"warm"}"#.utf8))
        let arena = try #require(JSON.scratchArenaSerialOnThisThread)
        for body in [
            #"{"jsonrpc":"2.0","id":7,"method":"m","params":{"source":"s","objects":[{"id":1},2.5,null]}}"#,
            #"[{"jsonrpc":"2.0","method":"n","params":[1]},{"jsonrpc":"2.0","id":"x","method":7},5]"#,
            #"{"jsonrpc":"2.0","id":[1],"method":"m"}"#, #"{"a":"#, #"[]"#, "12345678901234567890123",
        ] {
            _ = Payload(body: Array(body.utf8))
            #expect(JSON.scratchArenaSerialOnThisThread == arena, "\(body)")
        }
    }

    /// A larger one (a list created whole) is handed on as jansson parsed it, from malloc.
    @Test func aLargeMessageIsHandedOnAsATree() throws {
        let objects = Array(repeating: #"{"id":1}"#, count: Payload.largestPackedMessage / 8).joined(separator: ",")
        let body = Array(#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"objects":[\#(objects)]}}"#.utf8)
        #expect(body.count > Payload.largestPackedMessage)
        guard case .single(.request(let request)) = Payload(body: body) else {
            Issue.record("expected a request")
            return
        }
        let params = try #require(request.params)
        #expect(!params.isPacked && params.arenaSerial == nil)
        #expect(params["objects"]?.count == Payload.largestPackedMessage / 8)
    }
}
