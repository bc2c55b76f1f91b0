// The figures a person feels, each against the C stub server in the same run (issue 33):
// a whole process (spawn, initialize, exit), one objectAtIndexPath round trip at a time,
// and pipelined objectAtIndexPath. Daemon and stub take turns, run by run, so a machine
// whose speed drifts moves both; the ratio printed is of their medians.
//
//   datasourced-bench startup    --daemon PATH --stub PATH [--runs 30]
//   datasourced-bench rtt        --daemon PATH --stub PATH [--objects 10000] [--count 20000] [--runs 3]
//   datasourced-bench pipelined  --daemon PATH --stub PATH [--objects 10000] [--count 100000] [--runs 5]

#if canImport(Glibc)
import Glibc
#endif
import JSONKit
import JSONRPC

func stubCommand(_ options: Options) -> [String] {
    guard let path = options.string("--stub") else { fail("--stub PATH is required (Benchmarks/.bin/stub_server)") }
    guard access(path, X_OK) == 0 else { fail("\(path) is not an executable file (build it first)") }
    return [path]
}

/// The body of `createSource "items"` of `objects` small objects: the daemon builds the source; the stub
/// answers -32601, as it does every request but `initialize`.
func itemsSetup(objects: Int) -> [UInt8] {
    var body = Array(
        #"{"jsonrpc":"2.0","id":2,"method":"createSource","params":{"name":"items","kind":"simple","identityKey":"id","objects":"#.utf8)
    body += objectsText(0..<objects, groups: 100)
    body += Array("}}".utf8)
    return body
}

func ratioText(_ a: Double, _ b: Double) -> String { fixed(a / b, 2) }

// MARK: - The whole process

/// Spawn → `initialize` answered, and spawn → stdin closed → exit reaped, in seconds.
func wholeProcessOnce(_ command: [String]) -> (answered: Double, whole: Double) {
    let start = Clock.now()
    var child = Child.spawn(command)
    child.send(request(id: 1, method: "initialize", params: [:]))
    var reader = FrameReader(descriptor: child.output)
    let response = reader.response(to: JSON(1), what: "initialize")
    let answered = Clock.now()
    guard response["result"] != nil else { fail("initialize answered with an error: \(response)") }
    child.finish()
    return (answered - start, Clock.now() - start)
}

func startupBenchmark(_ options: Options) {
    let daemon = daemonCommand(options)
    let stub = stubCommand(options)
    let runs = options.int("--runs", default: 30)
    say(
        "startup: spawn -> initialize answered -> stdin closed -> exit reaped, \(runs) runs each, in turn with the C stub (+1 warm-up each)"
    )
    _ = wholeProcessOnce(daemon)
    _ = wholeProcessOnce(stub)
    var daemonRuns: [(answered: Double, whole: Double)] = []
    var stubRuns: [(answered: Double, whole: Double)] = []
    for _ in 0..<runs {
        daemonRuns.append(wholeProcessOnce(daemon))
        stubRuns.append(wholeProcessOnce(stub))
    }
    let daemonAnswered = Sample(daemonRuns.map { $0.answered * 1000 })
    let daemonWhole = Sample(daemonRuns.map { $0.whole * 1000 })
    let stubAnswered = Sample(stubRuns.map { $0.answered * 1000 })
    let stubWhole = Sample(stubRuns.map { $0.whole * 1000 })
    func row(_ name: String, _ sample: Sample) -> String {
        "  \(name.padding(34)) median \(fixed(sample.median, 2)) ms, min \(fixed(sample.min, 2)), p90 \(fixed(sample.percentile(90), 2)), max \(fixed(sample.max, 2))"
    }
    say(row("daemon: spawn -> initialize answered", daemonAnswered))
    say(row("daemon: whole process", daemonWhole))
    say(row("stub:   spawn -> initialize answered", stubAnswered))
    say(row("stub:   whole process", stubWhole))
    say(
        "  whole process, daemon / stub: \(ratioText(daemonWhole.median, stubWhole.median)) (floor: the daemon's whole process <= 10 ms: median \(fixed(daemonWhole.median, 2)) ms)"
    )
    say(
        "RESULT startup whole_ms=\(fixed(daemonWhole.median, 3)) answered_ms=\(fixed(daemonAnswered.median, 3)) stub_whole_ms=\(fixed(stubWhole.median, 3)) stub_answered_ms=\(fixed(stubAnswered.median, 3)) ratio=\(ratioText(daemonWhole.median, stubWhole.median))"
    )
}

// MARK: - One request at a time

/// `count` objectAtIndexPath requests, each sent once the last is answered; each round
/// trip's seconds (write of the request → its response read whole).
func roundTripsOnce(_ command: [String], objects: Int, count: Int) -> [Double] {
    var child = Child.spawn(command)
    var reader = FrameReader(descriptor: child.output)
    child.send(request(id: 1, method: "initialize", params: [:]))
    _ = reader.response(to: JSON(1), what: "initialize")
    child.send(Framing.frame(itemsSetup(objects: objects)))
    _ = reader.response(to: JSON(2), what: "createSource")
    // Framed before the clock runs: the harness's own work is not in the figure.
    let frames = (0..<count).map { n in
        Framing.frame(
            Array(
                #"{"jsonrpc":"2.0","id":\#(1000 + n),"method":"objectAtIndexPath","params":{"source":"items","indexPath":[0,\#(n % objects)]}}"#
                    .utf8))
    }
    var seconds: [Double] = []
    seconds.reserveCapacity(count)
    for frame in frames {
        let start = Clock.now()
        child.send(frame)
        guard reader.next() != nil else { fail("\(command[0]) closed its stdout mid-run") }
        seconds.append(Clock.now() - start)
    }
    child.finish()
    return seconds
}

func rttBenchmark(_ options: Options) {
    let daemon = daemonCommand(options)
    let stub = stubCommand(options)
    let objects = options.int("--objects", default: 10_000)
    let count = options.int("--count", default: 20_000)
    let runs = options.int("--runs", default: 3)
    say(
        "rtt: objectAtIndexPath [0, n % \(objects)] one at a time (each sent when the last is answered), \(count) a run, \(runs) runs each, in turn with the C stub (which answers -32601)"
    )
    var daemonMedians: [Double] = []
    var stubMedians: [Double] = []
    for run in 1...runs {
        let d = Sample(roundTripsOnce(daemon, objects: objects, count: count).map { $0 * 1e6 })
        let s = Sample(roundTripsOnce(stub, objects: objects, count: count).map { $0 * 1e6 })
        daemonMedians.append(d.median)
        stubMedians.append(s.median)
        say(
            "  run \(run): daemon p50 \(fixed(d.median, 1)) us, p90 \(fixed(d.percentile(90), 1)), p99 \(fixed(d.percentile(99), 1)); stub p50 \(fixed(s.median, 1)) us, p90 \(fixed(s.percentile(90), 1)), p99 \(fixed(s.percentile(99), 1)); ratio \(ratioText(d.median, s.median))"
        )
    }
    let d = Sample(daemonMedians)
    let s = Sample(stubMedians)
    say(
        "  median of the runs' p50: daemon \(fixed(d.median, 1)) us, stub \(fixed(s.median, 1)) us; daemon / stub \(ratioText(d.median, s.median)) (floor <= 1.5)"
    )
    say("RESULT rtt daemon_p50_us=\(fixed(d.median, 2)) stub_p50_us=\(fixed(s.median, 2)) ratio=\(ratioText(d.median, s.median))")
}

// MARK: - Pipelined

func pipelinedBenchmark(_ options: Options) {
    let daemon = daemonCommand(options)
    let stub = stubCommand(options)
    let objects = options.int("--objects", default: 10_000)
    let count = options.int("--count", default: 100_000)
    let runs = options.int("--runs", default: 5)
    let template = RequestTemplate(method: "objectAtIndexPath", params: #"{"source":"items","indexPath":[0,%n]}"#, cycle: objects)
    let setup = itemsSetup(objects: objects)
    say(
        "pipelined: \(count) objectAtIndexPath written from one thread, answers read in another; \(runs) runs each, in turn with the C stub"
    )
    var daemonRates: [Double] = []
    var stubRates: [Double] = []
    for _ in 1...runs {
        daemonRates.append(
            pipelineRuns(command: daemon, template: template, count: count, runs: 1, initialize: true, setup: [setup]).rates.median)
        stubRates.append(
            pipelineRuns(command: stub, template: template, count: count, runs: 1, initialize: true, setup: [setup]).rates.median)
    }
    let d = Sample(daemonRates)
    let s = Sample(stubRates)
    let pairs = Sample(zip(daemonRates, stubRates).map { $0 / $1 })
    say(
        "  daemon median \(fixed(d.median)) req/s (best \(fixed(d.max))); stub median \(fixed(s.median)) req/s (best \(fixed(s.max))); daemon / stub: median \(ratioText(d.median, s.median)), pair by pair \(fixed(pairs.min, 2))-\(fixed(pairs.max, 2)) (floor >= 0.9)"
    )
    say(
        "RESULT pipelined daemon_median=\(fixed(d.median)) stub_median=\(fixed(s.median)) ratio=\(ratioText(d.median, s.median)) pair_min=\(fixed(pairs.min, 2)) pair_max=\(fixed(pairs.max, 2))"
    )
}
