import FuzzSupport
import JSONKit
import TranscriptFormat

// libFuzzer target: the bytes of a transcript file, decoded as `datasourced replay` decodes
// one (Transcript(parsing:), its fixture routes included), and as `datasourced fixtures`
// decodes a fixture file (FixtureRoute.routes(parsing:) on its "fixtures" member, or on the
// whole value when it is an array). Checks: nothing traps; what is decoded keeps every bound
// of TranscriptLimits; what it holds is a few times the input at most (repeats and padding
// are kept as counts, never multiplied out; scripts/fuzz.sh also caps any one allocation
// with -malloc_limit_mb); a refusal names what it refuses; the decoded routes answer the
// conditional requests their own validators make.

@_cdecl("LLVMFuzzerTestOneInput")
public func transcriptFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard let json = try? JSON.parse(UnsafeBufferPointer(start: data, count: size)) else { return 0 }
    do {
        let transcript = try Transcript(parsing: json)
        check(transcript, inputSize: size)
    } catch {
        check(!error.description.isEmpty, "a transcript was refused with no reason")
    }
    let routes = json.isArray ? json : json["fixtures"]
    if let routes {
        do {
            let decoded = try FixtureRoute.routes(parsing: routes)
            check(decoded, inputSize: size)
        } catch {
            check(
                error.field.hasPrefix("fixtures"), "a fixture file's refusal names \"\(error.field)\", not a member of fixtures: \(error)")
        }
    }
    return 0
}

private func check(_ transcript: Transcript, inputSize: Int) {
    check(
        TranscriptLimits.timeoutMilliseconds.contains(transcript.timeoutMilliseconds),
        "timeoutMilliseconds \(transcript.timeoutMilliseconds) accepted")
    var rawBytes = 0, heldBytes = 0
    for step in transcript.steps {
        switch step {
        case .expectExit(let status):
            check((0...255).contains(status), "expectExit \(status) accepted")
        case .sendRaw(let bytes, let times):
            check(times >= 1, "repeat \(times) accepted")
            // Checked without multiplying: the product may not overflow either.
            check(
                times <= TranscriptLimits.maximumRawBytesPerStep / max(1, bytes.count),
                "sendRaw of \(bytes.count) bytes × \(times) accepted")
            rawBytes += bytes.count * times
            heldBytes += bytes.count
        case .sendBody(let text), .comment(let text), .release(let text), .requested(let text):
            heldBytes += text.utf8.count
        default:
            break
        }
    }
    check(rawBytes <= TranscriptLimits.maximumRawBytes, "sendRaw steps writing \(rawBytes) bytes in all accepted")
    _ = DaemonArguments.refusal(transcript.daemonArguments)
    if let routes = transcript.fixtures { check(routes, inputSize: inputSize) }
    check(heldBytes <= 4 * inputSize + 1024, "a transcript of \(inputSize) bytes holds \(heldBytes) bytes of steps")
}

private func check(_ routes: [FixtureRoute], inputSize: Int) {
    var heldBytes = 0
    for route in routes {
        let response = route.response
        check(TranscriptLimits.status.contains(response.status), "status \(response.status) accepted")
        check(
            TranscriptLimits.delayMilliseconds.contains(response.delayMilliseconds),
            "delayMilliseconds \(response.delayMilliseconds) accepted")
        check(TranscriptLimits.dripChunks.contains(response.dripChunks), "dripChunks \(response.dripChunks) accepted")
        check(
            TranscriptLimits.dripMilliseconds.contains(response.dripMilliseconds), "dripMilliseconds \(response.dripMilliseconds) accepted")
        check(
            response.paddingBytes >= 0 && response.length <= max(response.body.count, TranscriptLimits.padToBytes.upperBound),
            "a body of \(response.length) bytes accepted")
        check(route.times.map { $0 >= 1 } ?? true, "times \(route.times!) accepted")
        if let body = route.requestBody {
            let size = body.encoded().count
            check(size <= TranscriptLimits.maximumRequestBodyBytes, "a request body of \(size) bytes accepted")
        }
        for (name, value) in response.headers {
            check(
                !name.isEmpty && !name.utf8.contains(where: { $0 <= 32 || $0 == UInt8(ascii: ":") }),
                "header name \(name.debugDescription) accepted")
            check(!value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }), "header value \(value.debugDescription) accepted")
        }
        heldBytes += response.body.count + response.headers.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count }
        // A route's own validators make it answer 304, with no body.
        if let etag = route.etag {
            let notModified = route.response(toRequestHeaders: [(name: "if-none-match", value: etag)])
            check(notModified.status == 304 && notModified.length == 0, "If-None-Match: \(etag) answered \(notModified.status)")
        }
        if let lastModified = route.lastModified, route.etag == nil {
            let notModified = route.response(toRequestHeaders: [(name: "if-modified-since", value: lastModified.text)])
            check(notModified.status == 304, "If-Modified-Since: \(lastModified.text) answered \(notModified.status)")
        }
        _ = route.matches(path: route.path, query: route.query)
    }
    // A body is re-encoded compact: a real such as `1e-5` (5 bytes with its comma) is written
    // with 17 digits, so a body may be a few times its text, never more than this.
    check(heldBytes <= 16 * inputSize + 1024, "fixtures of \(inputSize) bytes hold \(heldBytes) bytes")
}

// The entry point (FUZZING.md, "Entry point"): in this file, beside the test function.
@_cdecl("fuzz_transcript_main")
public func fuzzerMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runLibFuzzer(argc, argv, transcriptFuzzerTestOneInput)
}
