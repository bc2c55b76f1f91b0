// datasourced-bench: figures, never pass/fail. See BENCHMARKS.md; run through Benchmarks/run.sh.
//
//   datasourced-bench codec     --messages FILE [--seconds S] [--runs N] [--c-rate MSG_PER_S] [--c-median MSG_PER_S]
//   datasourced-bench spawn     --daemon PATH [--runs N] [--floor-ms MS] [--arg A]...
//   datasourced-bench pipeline  --daemon PATH [--method M] [--params JSON] [--count N] [--runs N]
//                               [--cycle K] [--setup FILE] [--no-initialize] [--arg A]...
//   datasourced-bench objectpipeline | bigsource | sectioning | indexpath | changeset   (SourceBenchmarks.swift)
//   datasourced-bench startup | rtt | pipelined --daemon PATH --stub PATH   (FloorBenchmarks.swift)
//   datasourced-bench barefetch --base URL [--path /items] [--pages 10] [--checkpoints 1,10] [--interface httpget|async]   (BareFetchBenchmark.swift)

#if canImport(Glibc)
import Glibc
#endif
import Basics
import JSONKit
import JSONRPC

// MARK: - Small utilities

enum Clock {
    /// Monotonic seconds.
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
    }
}

func cpuSeconds(_ usage: rusage) -> Double {
    Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) * 1e-6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) * 1e-6
}

/// CPU seconds used so far by this process (all threads).
func ownCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return cpuSeconds(usage)
}

func say(_ text: String) {
    _ = try? FileDescriptor.standardOutput.writeAll((text + "\n").utf8)
}

func fail(_ text: String) -> Never {
    var line = "datasourced-bench: " + text + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(2)
}

/// `value` with `decimals` digits after the point (no Foundation here).
func fixed(_ value: Double, _ decimals: Int = 0) -> String {
    guard value.isFinite else { return "\(value)" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    let whole = Int(scaled / scale)
    let fraction = Int(scaled - Double(whole) * scale)
    var text = (value < 0 && scaled > 0 ? "-" : "") + "\(whole)"
    if decimals > 0 {
        let digits = String(fraction)
        text += "." + String(repeating: "0", count: decimals - digits.count) + digits
    }
    return text
}

func padded(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
}

/// Sorted sample with the order statistics the reports use.
struct Sample {
    let sorted: [Double]
    init(_ values: [Double]) {
        precondition(!values.isEmpty)
        sorted = values.sorted()
    }
    var min: Double { sorted.first! }
    var max: Double { sorted.last! }
    var median: Double {
        let n = sorted.count
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2
    }
    var mean: Double { sorted.reduce(0, +) / Double(sorted.count) }
    /// Nearest-rank percentile (p in 0...100): for 20 values, p90 is the 18th smallest.
    func percentile(_ p: Double) -> Double {
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[Swift.max(0, Swift.min(sorted.count - 1, rank - 1))]
    }
}

/// `--name value` options and repeatable `--arg value`s; flags are `--name` alone.
struct Options {
    private var values: [String: String] = [:]
    private(set) var daemonArguments: [String] = []
    private var flags: Set<String> = []
    static let flagNames: Set<String> = ["--no-initialize", "--verbose", "--breakdown"]

    init(_ arguments: ArraySlice<String>) {
        var iterator = arguments.makeIterator()
        while let name = iterator.next() {
            guard name.hasPrefix("--") else { fail("unexpected argument \(name)") }
            if Options.flagNames.contains(name) {
                flags.insert(name)
                continue
            }
            guard let value = iterator.next() else { fail("\(name) needs a value") }
            if name == "--arg" { daemonArguments.append(value) } else { values[name] = value }
        }
    }

    func string(_ name: String) -> String? { values[name] }
    func string(_ name: String, default value: String) -> String { values[name] ?? value }
    func flag(_ name: String) -> Bool { flags.contains(name) }
    func int(_ name: String, default value: Int) -> Int {
        guard let text = values[name] else { return value }
        guard let parsed = Int(text), parsed > 0 else { fail("\(name) must be a positive integer") }
        return parsed
    }
    func double(_ name: String, default value: Double) -> Double {
        guard let text = values[name] else { return value }
        guard let parsed = Double(text), parsed > 0 else { fail("\(name) must be a positive number") }
        return parsed
    }
}

func readWholeFile(_ path: String) -> [UInt8] {
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else { fail("cannot open \(path): errno \(errno)") }
    defer { close(descriptor) }
    do {
        return try FileDescriptor(rawValue: descriptor).readToEnd()!
    } catch {
        fail("cannot read \(path): errno \(error.rawValue)")
    }
}

/// Non-empty lines of a JSONL file, without their line breaks.
func readLines(_ path: String) -> [[UInt8]] {
    readWholeFile(path).split(separator: 10).map { line in
        Array(line.last == 13 ? line.dropLast() : line[...])
    }.filter { !$0.isEmpty }
}

// MARK: - 1. Codec throughput

/// One benchmark loop over the message set; returns a checksum so nothing is optimised away.
typealias CodecPass = () -> Int

/// Passes over the set for `seconds`; messages per second.
func timedRun(messages: Int, seconds: Double, pass: CodecPass, sink: inout Int) -> Double {
    var passes = 0
    let start = Clock.now()
    var elapsed = 0.0
    repeat {
        sink &+= pass()
        passes += 1
        elapsed = Clock.now() - start
    } while elapsed < seconds
    return Double(passes * messages) / elapsed
}

func codec(_ options: Options) {
    let path = options.string("--messages", default: "Benchmarks/messages.jsonl")
    let seconds = options.double("--seconds", default: 1.0)
    let runs = options.int("--runs", default: 5)
    let cRate = options.string("--c-rate").flatMap(Double.init)
    let cMedian = options.string("--c-median").flatMap(Double.init)
    let messages = readLines(path)
    guard !messages.isEmpty else { fail("no messages in \(path)") }
    let totalBytes = messages.reduce(0) { $0 + $1.count }
    let meanSize = Double(totalBytes) / Double(messages.count)

    // (b) needs, for each message, what the daemon would write for it: a request is
    // answered with a response (its params echoed as the result, so the output is about
    // the input's size); a notification is re-sent as one; a response line stands for
    // one the daemon writes, with the result tree the model would have built (parsed
    // once here, outside the timed loop; the envelope is still built in the loop).
    let responseResults: [JSON?] = messages.map { bytes in
        guard let value = try? JSON.parse(bytes) else { fail("a message in \(path) does not parse") }
        return value["method"] == nil ? value["result"] : nil
    }
    let responseErrors: [ResponseError?] = messages.map { bytes in
        let value = try! JSON.parse(bytes)
        guard value["method"] == nil, let error = value["error"] else { return nil }
        return ResponseError(
            code: error["code"]?.integerValue ?? 0, message: error["message"]?.stringValue ?? "",
            data: error["data"])
    }

    var buffer: [UInt8] = []
    buffer.reserveCapacity(4096)

    // (a) The JSON wrapper alone: JSON.parse + encode(into:).
    let wrapperPass: CodecPass = {
        var bytes = 0
        for message in messages {
            let value: JSON
            do { value = try JSON.parse(message) } catch { fail("parse: \(error)") }
            buffer.removeAll(keepingCapacity: true)
            value.encode(into: &buffer)
            bytes &+= buffer.count
        }
        return bytes
    }

    // (b) The daemon's path: Payload(body:) (parse + JSON-RPC validation) for what it
    // reads, Outgoing(...).json.encoded() (envelope + dump) for what it writes.
    let fullPass: CodecPass = {
        var bytes = 0
        for index in messages.indices {
            let outgoing: Outgoing
            switch Payload(body: messages[index]) {
            case .single(.request(let request)):
                outgoing = .response(id: request.id, result: .success(request.params ?? .null))
            case .single(.notification(let notification)):
                outgoing = .notification(notification)
            case .single(.response(let id)):
                if let error = responseErrors[index] {
                    outgoing = .response(id: id, result: .failure(error))
                } else {
                    outgoing = .response(id: id, result: .success(responseResults[index] ?? .null))
                }
            case .single(.invalid(let id, let error)):
                outgoing = .response(id: id, result: .failure(error))
            case .batch, .unusable, .ignored:
                fail("message \(index + 1) is not a single JSON-RPC message")
            }
            bytes &+= outgoing.json.encoded().count
        }
        return bytes
    }

    say(
        "codec: \(messages.count) messages from \(path) (\(totalBytes) bytes, mean \(fixed(meanSize)) B), \(runs) runs x \(fixed(seconds, 2)) s"
    )
    var sink = 0
    var results: [(name: String, sample: Sample)] = []
    for (name, pass) in [("swift JSON.parse+encode", wrapperPass), ("swift Payload+Outgoing", fullPass)] {
        _ = timedRun(messages: messages.count, seconds: seconds / 4, pass: pass, sink: &sink)  // warm-up
        var rates: [Double] = []
        for _ in 0..<runs { rates.append(timedRun(messages: messages.count, seconds: seconds, pass: pass, sink: &sink)) }
        say("  \(name): runs " + rates.map { fixed($0) }.joined(separator: ", ") + " msg/s")
        results.append((name, Sample(rates)))
    }
    say("")
    say(
        "  " + padded("", 24) + padded("best msg/s", 12) + padded("MB/s", 8) + padded("us/msg", 8)
            + padded("median msg/s", 14) + (cRate != nil ? padded("best vs C", 11) : "")
            + (cMedian != nil ? padded("median vs C", 13) : ""))
    for (name, sample) in results {
        var line =
            "  " + name.padding(24) + padded(fixed(sample.max), 12) + padded(fixed(sample.max * meanSize / 1e6, 1), 8)
            + padded(fixed(1e6 / sample.max, 2), 8) + padded(fixed(sample.median), 14)
        if let cRate { line += padded(fixed(100 * sample.max / cRate, 1) + " %", 11) }
        if let cMedian { line += padded(fixed(100 * sample.median / cMedian, 1) + " %", 13) }
        say(line)
    }
    if let cRate {
        say(
            "  " + "c json_loadb+json_dumps".padding(24) + padded(fixed(cRate), 12) + padded(fixed(cRate * meanSize / 1e6, 1), 8)
                + padded(fixed(1e6 / cRate, 2), 8) + padded(cMedian.map { fixed($0) } ?? "-", 14) + padded("100.0 %", 11)
                + (cMedian != nil ? padded("100.0 %", 13) : ""))
        say("  floor: Swift codec >= 50 % of the C loop's msg/s")
    }
    for (name, sample) in results {
        say("RESULT \(name.replacingSpaces()) best=\(fixed(sample.max)) median=\(fixed(sample.median))")
    }
    if sink == 42 { say("") }  // keeps the loops' output observable
}

extension String {
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
    func replacingSpaces() -> String { String(map { $0 == " " ? "_" : $0 }) }
}

// MARK: - A spawned daemon

/// A child with pipes on stdin and stdout; stderr goes to /dev/null unless `keepStderr`.
struct Child {
    let process: SpawnedProcess
    /// Our end of its stdin (-1 once closed).
    var input: Int32
    var pid: pid_t { process.pid }
    /// Our end of its stdout.
    var output: Int32 { process.standardOutput }

    static func spawn(_ command: [String], keepStderr: Bool = false) -> Child {
        do {
            let process = try SpawnedProcess(command: command, standardError: keepStderr ? .inherited : .discarded)
            return Child(process: process, input: process.standardInput)
        } catch {
            fail("\(error)")
        }
    }

    func send(_ bytes: [UInt8]) {
        do {
            _ = try FileDescriptor(rawValue: input).writeAll(bytes)
        } catch {
            fail("write to daemon: errno \((error as? Errno)?.rawValue ?? 0)")
        }
    }

    mutating func closeInput() {
        if input >= 0 {
            close(input)
            input = -1
        }
    }

    /// Closes its stdin and our stdout end, and reaps it; returns its exit status
    /// (negative: killed by that signal) and the CPU seconds (user + system) it used.
    @discardableResult
    mutating func finish() -> (status: Int32, cpuSeconds: Double) {
        closeInput()
        var usage = rusage()
        let ended = process.wait(usage: &usage)
        close(output)
        switch ended {
        case .exited(let code): return (code, cpuSeconds(usage))
        case .signalled(let signal): return (-signal, cpuSeconds(usage))
        }
    }
}

/// Reads frames from a descriptor.
struct FrameReader {
    let descriptor: Int32
    var decoder = FrameDecoder(maximumMessageSize: 1 << 30)
    var chunk = [UInt8](repeating: 0, count: 65536)

    init(descriptor: Int32) { self.descriptor = descriptor }

    /// The next body, or nil at end of file.
    mutating func next() -> [UInt8]? {
        while true {
            switch decoder.next() {
            case .body(let body): return body
            case .malformedHeader(let reason): fail("daemon wrote a malformed header: \(reason)")
            case .oversized: fail("daemon wrote an oversized frame")
            case nil: break
            }
            let descriptor = self.descriptor
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return nil }
            chunk.withUnsafeBytes { decoder.append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        }
    }

    /// Reads until the response with `id`; fails on end of file.
    mutating func response(to id: JSON, what: String) -> JSON {
        while let body = next() {
            guard let value = try? JSON.parse(body) else { fail("daemon wrote a body that is not JSON") }
            if value["method"] == nil, value["id"] == id { return value }
        }
        fail("daemon closed its stdout before answering \(what)")
    }
}

func daemonCommand(_ options: Options) -> [String] {
    guard let path = options.string("--daemon") else { fail("--daemon PATH is required") }
    guard access(path, X_OK) == 0 else { fail("\(path) is not an executable file (build it first)") }
    return [path] + options.daemonArguments
}

func request(id: Int, method: String, params: JSON?) -> [UInt8] {
    var members: [(String, JSON)] = [("jsonrpc", "2.0"), ("id", JSON(id)), ("method", JSON(method))]
    if let params { members.append(("params", params)) }
    return Framing.frame(JSON.object(members).encoded())
}

// MARK: - 2. Spawn to initialize response

func spawnBenchmark(_ options: Options) {
    let command = daemonCommand(options)
    let runs = options.int("--runs", default: 20)
    let initialize = request(id: 1, method: "initialize", params: [:])

    /// (spawn → full response with id 1, stdin closed → exit reaped), in seconds.
    func once() -> (answer: Double, exit: Double, status: Int32) {
        let start = Clock.now()
        var child = Child.spawn(command)
        child.send(initialize)
        var reader = FrameReader(descriptor: child.output)
        let response = reader.response(to: JSON(1), what: "initialize")
        let answered = Clock.now()
        guard response["result"] != nil else { fail("initialize answered with an error: \(response)") }
        child.closeInput()
        let status = child.finish().status
        return (answered - start, Clock.now() - answered, status)
    }

    say("spawn: \(command.joined(separator: " ")), \(runs) runs (+1 warm-up, not counted)")
    _ = once()
    var answers: [Double] = []
    var exits: [Double] = []
    var statuses: Set<Int32> = []
    for _ in 0..<runs {
        let (answer, exit, status) = once()
        answers.append(answer * 1000)
        exits.append(exit * 1000)
        statuses.insert(status)
    }
    let answer = Sample(answers)
    let exit = Sample(exits)
    say("  runs (ms): " + answers.map { fixed($0, 2) }.joined(separator: " "))
    say(
        "  spawn -> initialize response: median \(fixed(answer.median, 2)) ms, min \(fixed(answer.min, 2)) ms, p90 \(fixed(answer.percentile(90), 2)) ms, max \(fixed(answer.max, 2)) ms"
    )
    say(
        "  stdin closed -> exit reaped:  median \(fixed(exit.median, 2)) ms, min \(fixed(exit.min, 2)) ms, p90 \(fixed(exit.percentile(90), 2)) ms (exit status \(statuses.sorted().map(String.init).joined(separator: ",")))"
    )
    if let floor = options.string("--floor-ms").flatMap(Double.init) {
        say(
            "  floor: median < \(fixed(floor)) ms (measured median \(fixed(answer.median, 2)) ms = \(fixed(100 * answer.median / floor, 0)) % of it)"
        )
    }
    say("RESULT spawn median_ms=\(fixed(answer.median, 3)) min_ms=\(fixed(answer.min, 3)) p90_ms=\(fixed(answer.percentile(90), 3))")
}

// MARK: - 3. Pipelined requests over stdio

/// A request template: `--params` JSON text where `%n` becomes the request's sequence
/// number (0-based, modulo `--cycle` when given), e.g. `{"indexPath":{"section":0,"row":%n}}`.
struct RequestTemplate {
    let method: String
    let params: String?
    let cycle: Int?

    func body(id: Int, sequence: Int) -> [UInt8] {
        var paramsJSON: JSON?
        if let params {
            let n = cycle.map { sequence % $0 } ?? sequence
            let text = params.contains("%n") ? params.replacingPercentN(with: String(n)) : params
            do { paramsJSON = try JSON.parse(text) } catch { fail("--params is not JSON (\(error)): \(text)") }
        }
        return request(id: id, method: method, params: paramsJSON)
    }
}

extension String {
    func replacingPercentN(with replacement: String) -> String {
        var result = ""
        var rest = self[...]
        while let range = rest.firstRange(of: "%n") {
            result += rest[..<range.lowerBound] + replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}

/// Counts responses in a byte stream without copying bodies: the pipeline's reader, kept
/// cheap because on 2 cores every cycle it spends is taken from the daemon.
struct ResponseCounter {
    let descriptor: Int32
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    private(set) var results = 0
    private(set) var errors = 0
    /// Frames that are the daemon's notifications, not responses (not counted in `total`).
    private(set) var notifications = 0
    private(set) var first: [UInt8] = []
    private static let notificationPrefix = Array(#"{"jsonrpc":"2.0","method""#.utf8)

    init(descriptor: Int32) {
        self.descriptor = descriptor
        buffer = [UInt8](repeating: 0, count: 1 << 20)
    }

    var total: Int { results + errors }

    /// Reads once and counts every complete frame; false at end of file.
    mutating func readAndCount() -> Bool {
        if start == end {
            start = 0
            end = 0
        }
        if buffer.count - end < 65536 {
            // Move the partial frame to the front, growing only for a huge frame.
            let pending = end - start
            if start > 0 {
                buffer.withUnsafeMutableBufferPointer { all in
                    _ = memmove(all.baseAddress!, all.baseAddress! + start, pending)
                }
                start = 0
                end = pending
            }
            if buffer.count - end < 65536 { buffer.append(contentsOf: repeatElement(0, count: buffer.count)) }
        }
        let descriptor = self.descriptor
        let offset = end
        var count: Int
        repeat {
            count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + offset, $0.count - offset) }
        } while count < 0 && errno == EINTR
        if count <= 0 { return false }
        end += count
        buffer.withUnsafeBufferPointer { all in
            while start < end {
                let pending = UnsafeBufferPointer(rebasing: all[start..<end])
                guard case .header(let length, let headerLength) = Framing.scanHeader(pending) else {
                    if case .malformed(let reason, _) = Framing.scanHeader(pending) { fail("daemon wrote a malformed header: \(reason)") }
                    break
                }
                guard pending.count >= headerLength + length else { break }
                let body = UnsafeBufferPointer(rebasing: pending[headerLength..<headerLength + length])
                if body.starts(with: ResponseCounter.notificationPrefix) {
                    notifications += 1
                } else {
                    if first.isEmpty { first = Array(body.prefix(160)) }
                    if ResponseCounter.isError(body) { errors += 1 } else { results += 1 }
                }
                start += headerLength + length
            }
        }
        return true
    }

    /// Whether a response body has `"error":` before any `"result":`. The daemon writes
    /// `{"jsonrpc":"2.0","id":ID,"result"|"error":...}`, so this stops early.
    static func isError(_ body: UnsafeBufferPointer<UInt8>) -> Bool {
        guard body.count > 9 else { return false }
        var index = 0
        while index < body.count - 9 {
            // ,"error": or ,"result":
            if body[index] == 44, body[index + 1] == 34 {
                if body[index + 2] == 101, body[index + 3] == 114, body[index + 4] == 114, body[index + 5] == 111,
                    body[index + 6] == 114, body[index + 7] == 34, body[index + 8] == 58
                {
                    return true
                }
                if body[index + 2] == 114, body[index + 3] == 101, body[index + 4] == 115, body[index + 5] == 117,
                    body[index + 6] == 108, body[index + 7] == 116, body[index + 8] == 34, body[index + 9] == 58
                {
                    return false
                }
            }
            index += 1
        }
        return false
    }
}

struct PipelineRun {
    let seconds: Double
    let results: Int
    let errors: Int
    let notifications: Int
    /// CPU seconds (user + system): the daemon's over its whole life, ours over the timed part.
    let daemonCPU: Double
    let clientCPU: Double
    let firstResponse: String
}

/// Initializes a fresh daemon, runs the setup requests one at a time, then writes `count`
/// framed requests from one thread while this one reads the responses. The clock runs
/// from the first byte written to the last response read; the requests are framed and
/// encoded before it starts, so the figure is the daemon's (plus the pipes').
func pipelineOnce(command: [String], template: RequestTemplate, count: Int, initialize: Bool, setup: [[UInt8]]) -> PipelineRun {
    var child = Child.spawn(command)
    var reader = FrameReader(descriptor: child.output)
    if initialize {
        child.send(request(id: 1, method: "initialize", params: [:]))
        _ = reader.response(to: JSON(1), what: "initialize")
    }
    for body in setup {
        guard let value = try? JSON.parse(body) else { fail("a --setup line is not JSON") }
        child.send(Framing.frame(body))
        if let id = value["id"] {
            let response = reader.response(to: id, what: "setup request \(id)")
            if response["error"] != nil { say("  note: setup request \(id) answered \(response)") }
        }
    }

    // Ids 1_000_000 + i, clear of initialize and any setup ids.
    var stream: [UInt8] = []
    for sequence in 0..<count {
        stream.append(contentsOf: template.body(id: 1_000_000 + sequence, sequence: sequence))
    }
    let input = child.input
    let sendable = stream
    let start = Clock.now()
    let clientCPUStart = ownCPUSeconds()
    startThread {
        sendable.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(input, raw.baseAddress! + offset, min(65536, raw.count - offset))
                if written < 0, errno == EINTR { continue }
                if written <= 0 { return }  // the daemon is gone; the reader will notice
                offset += written
            }
        }
    }
    // Anything the reader had buffered past initialize/setup is a protocol surprise.
    if case .body = reader.decoder.next() { fail("daemon wrote more than one response to a setup request") }
    var counter = ResponseCounter(descriptor: child.output)
    while counter.total < count {
        guard counter.readAndCount() else {
            fail("daemon closed its stdout after \(counter.total) of \(count) responses")
        }
    }
    let elapsed = Clock.now() - start
    let clientCPU = ownCPUSeconds() - clientCPUStart
    let daemonCPU = child.finish().cpuSeconds
    return PipelineRun(
        seconds: elapsed, results: counter.results, errors: counter.errors, notifications: counter.notifications,
        daemonCPU: daemonCPU, clientCPU: clientCPU,
        firstResponse: String(decoding: counter.first, as: UTF8.self))
}

func pipelineBenchmark(_ options: Options) {
    let command = daemonCommand(options)
    let template = RequestTemplate(
        method: options.string("--method", default: "ping"),
        params: options.string("--params"),
        cycle: options.string("--cycle").map { _ in options.int("--cycle", default: 1) })
    let count = options.int("--count", default: 100_000)
    let runs = options.int("--runs", default: 3)
    let setup = options.string("--setup").map(readLines) ?? []
    let initialize = !options.flag("--no-initialize")
    let (sample, cpu) = pipelineRuns(command: command, template: template, count: count, runs: runs, initialize: initialize, setup: setup)
    say(
        "RESULT pipeline_\(template.method.replacingSpaces()) best=\(fixed(sample.max)) median=\(fixed(sample.median)) daemon_cpu_us=\(fixed(cpu.median, 2))"
    )
}

/// `runs` pipeline runs, each against a fresh daemon, with a line per run and a summary;
/// returns the req/s and the daemon CPU µs/request samples.
func pipelineRuns(
    command: [String], template: RequestTemplate, count: Int, runs: Int, initialize: Bool,
    setup: [[UInt8]]
) -> (rates: Sample, daemonCPU: Sample) {
    say(
        "pipeline: \(command.joined(separator: " ")); \(count) x \(template.method) \(template.params ?? "(no params)")"
            + (initialize ? ", after initialize" : ", no initialize") + (setup.isEmpty ? "" : ", \(setup.count) setup messages")
            + "; \(runs) runs, fresh daemon each")
    var rates: [Double] = []
    var daemonCPUs: [Double] = []
    for run in 1...runs {
        let result = pipelineOnce(command: command, template: template, count: count, initialize: initialize, setup: setup)
        let rate = Double(count) / result.seconds
        rates.append(rate)
        daemonCPUs.append(result.daemonCPU * 1e6 / Double(count))
        say(
            "  run \(run): \(fixed(rate)) req/s (\(fixed(result.seconds * 1000, 1)) ms; \(result.results) results, \(result.errors) errors"
                + (result.notifications > 0 ? ", \(result.notifications) notifications" : "") + ")"
                + "; CPU/request: daemon \(fixed(result.daemonCPU * 1e6 / Double(count), 2)) us (whole life), bench \(fixed(result.clientCPU * 1e6 / Double(count), 2)) us"
        )
        if run == 1 { say("    first response: \(result.firstResponse)") }
    }
    let sample = Sample(rates)
    let cpu = Sample(daemonCPUs)
    say(
        "  best \(fixed(sample.max)) req/s, median \(fixed(sample.median)) req/s (\(fixed(1e6 / sample.median, 2)) us/request wall); daemon CPU median \(fixed(cpu.median, 2)) us/request"
    )
    return (sample, cpu)
}

// MARK: - Data-source benchmarks: objectpipeline, bigsource, sectioning, indexpath, changeset (SourceBenchmarks.swift)

// MARK: - Entry

let usage = """
    usage: datasourced-bench COMMAND [options]
      codec     --messages FILE [--seconds 1] [--runs 5] [--c-rate BEST_MSG_PER_S] [--c-median MSG_PER_S]
                parse + serialise throughput of the message set: JSON wrapper, and Payload + Outgoing
      spawn     --daemon PATH [--runs 20] [--floor-ms MS] [--arg A]...
                spawn -> framed initialize response, per fresh process
      pipeline  --daemon PATH [--method ping] [--params JSON] [--cycle K] [--count 100000] [--runs 3]
                [--setup FILE.jsonl] [--no-initialize] [--arg A]...
                requests/s with N framed requests written from one thread, responses read in another;
                %n in --params is replaced by the sequence number (modulo --cycle)
      objectpipeline --daemon PATH [--objects 10000] [--count 100000] [--runs 3] [--floor 100000]
                pipelined objectAtIndexPath [0, n % objects] against a simple source created by a setup message
      bigsource [--objects 1000000] [--groups 100] [--identity-key id] [--floor-ratio 2]
                [--breakdown | --daemon PATH [--runs 1]]
                a simple source of N objects: creation time and resident memory / JSON size;
                in this process (SourceRegistry.create), --breakdown: RSS of each piece built by hand,
                or with --daemon one createSource over stdio (daemon RSS from /proc)
      sectioning [--objects 1000000] [--groups 100] [--runs 3] [--identity-key id] [--floor-ms 1000] [--variant N]
                sectioned sources over an N-object simple source: creation time, with and without sorting;
                and one insert into the child of a sorted one (variant 4)
      indexpath [--sizes 1000,10000,100000,1000000] [--probes 10000] [--batches 21]
                indexPath(for:) ns per lookup, present and absent objects, whole-value and identityKey
      changeset [--objects 100000] [--edits 10000] [--moves 1000] [--runs 5] [--floor-ms 100] [--variant N]
                ChangeSet.between for N objects with deletions, insertions, moves, updates; and replaceObjects
      edits --daemon PATH [--objects 300000] [--edits 200] [--groups 100] [--floor-ratio 10] [--view-floor-ratio 3]
                one-object insertObjects, removeObjects, updateObjects over stdio against objectAtIndexPath
                round trips in the same daemon; then the same with a sorted, sectioned view over the source
      viewrefresh [--objects 300000] [--refreshes 20] [--groups 100]
                a refresh-style replacement of an N-object simple source (one row deleted, one inserted,
                one updated) under two sorted, sectioned views, one recomputing and one following, in one run
      startup   --daemon PATH --stub PATH [--runs 30]
                whole process (spawn, initialize answered, stdin closed, exit reaped) and spawn -> answered,
                in turn with the C stub; the ratio of the whole process's medians (FloorBenchmarks.swift)
      actions   [--rows 300000] [--pending 100] [--runs 5]
                in this process: one optimistic insert, a rollback under N other pending mutations,
                a page of 100 arriving under N pending mutations and under none (ActionBenchmarks.swift)
      rtt       --daemon PATH --stub PATH [--objects 10000] [--count 20000] [--runs 3]
                objectAtIndexPath one request at a time: p50 round trip, daemon / stub
      pipelined --daemon PATH --stub PATH [--objects 10000] [--count 100000] [--runs 5]
                pipelined objectAtIndexPath req/s, runs in turn with the stub: daemon / stub
      barefetch --base URL [--path /items] [--pages 10] [--checkpoints 1,10] [--interface httpget|async]
                CPU a page of a fresh process that only GETs each page (?page=N) with the daemon's HTTP
                client and parses it with jansson: the platform's share of a page (Benchmarks/pagefetch.py --bare);
                the daemon's own page figures are Benchmarks/pagefetch.py
    """

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    say(usage)
    exit(2)
}
let options = Options(arguments.dropFirst(2))
switch arguments[1] {
case "codec": codec(options)
case "spawn": spawnBenchmark(options)
case "pipeline": pipelineBenchmark(options)
case "objectpipeline": objectPipelineBenchmark(options)
case "bigsource": bigSourceBenchmark(options)
case "sectioning": sectioningBenchmark(options)
case "indexpath": indexPathBenchmark(options)
case "changeset": changeSetBenchmark(options)
case "edits": editsBenchmark(options)
case "viewrefresh": viewRefreshBenchmark(options)
case "barefetch": bareFetchBenchmark(options)
case "startup": startupBenchmark(options)
case "rtt": rttBenchmark(options)
case "actions": actionsBenchmark(options)
case "pipelined": pipelinedBenchmark(options)
case "help", "--help", "-h": say(usage)
default:
    say(usage)
    exit(2)
}
