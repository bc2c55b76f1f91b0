import FuzzSupport
import JSONKit
import JSONRPC

// libFuzzer target: one frame's body decoded as the daemon decodes it (Payload(body:)),
// and the answers it would send for what it refuses. Checks: nothing traps; every
// answer encodes as JSON that parses back to the same value; a body that parses
// re-encodes to an equal value, packed or not.

@_cdecl("LLVMFuzzerTestOneInput")
public func payloadFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let body = Array(UnsafeBufferPointer(start: data, count: size))
    if let value = try? JSON.parse(body) {
        roundTrips(value)
        roundTrips(value.packed())
        check(value.packed() == value, "packing changed the value")
        check(value.packed().encoded() == value.encoded(), "the packed value encodes differently")
    }
    switch Payload(body: body) {
    case .unusable(let error):
        roundTrips(Outgoing.response(id: .null, result: .failure(error)).json)
    case .single(let message):
        answer(message)
    case .batch(let messages):
        check(!messages.isEmpty, "an empty batch was accepted")
        messages.forEach(answer)
    case .ignored:
        break
    }
    return 0
}

/// What the daemon sends for a message before any handler runs.
private func answer(_ message: Message) {
    switch message {
    case .invalid(let id, let error):
        check([.string, .integer, .real, .null].contains(id.kind), "an id of kind \(id.kind) is echoed")
        roundTrips(Outgoing.response(id: id, result: .failure(error)).json)
    case .request(let request):
        roundTrips(Outgoing.response(id: request.id, result: .failure(.methodNotFound(request.method))).json)
        if let params = request.params { check(params.isObject || params.isArray, "params of kind \(params.kind) accepted") }
    case .notification(let notification):
        roundTrips(notification.json)
    case .response:
        break
    }
}

private func roundTrips(_ value: JSON) {
    let encoded = value.encoded()
    guard let parsed = try? JSON.parse(encoded) else {
        fatalError("encoded JSON does not parse: \(String(decoding: encoded.prefix(300), as: UTF8.self))")
    }
    check(parsed == value, "a value changed through encode and parse: \(String(decoding: encoded.prefix(300), as: UTF8.self))")
}

// The entry point (FUZZING.md, "Entry point"): in this file, beside the test function.
@_cdecl("fuzz_payload_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runLibFuzzer(argc, argv, payloadFuzzerTestOneInput)
}
