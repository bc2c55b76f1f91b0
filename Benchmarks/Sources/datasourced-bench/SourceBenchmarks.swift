import Daemon
// The data-source benchmarks: figures, never pass/fail. See BENCHMARKS-HISTORY.md, sections 4–8.
//
//   objectpipeline  pipelined objectAtIndexPath over stdio against a simple source (the daemon)
//   bigsource       an N-object simple source: creation time and resident memory / JSON size
//                   (in this process, or with --daemon over stdio; --breakdown: where the memory goes)
//   sectioning      sectioned sources over an N-object simple source: creation time
//   indexpath       indexPath(for:) ns per lookup at several sizes
//   changeset       ChangeSet.between and replaceObjects for N objects with deletions, insertions, moves

#if canImport(Glibc)
import Glibc
#endif
import DataSources
import JSONKit
import JSONRPC

// MARK: - Objects

/// SplitMix64: a fixed, seedable sequence, so every run edits the same rows.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return SplitMix.mix(state)
    }
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

/// Appends `{"id":N,"title":"Item N","group":"gK","score":S}`, compact. The group depends on
/// the id only (K in 0..<groups, scattered); the score on the id and `salt` (an update
/// changes the salt, so the score and nothing else).
func appendObject(_ id: Int, groups: Int, salt: UInt64 = 0, to bytes: inout [UInt8]) {
    let group = SplitMix.mix(UInt64(id)) % UInt64(groups)
    let score = Double(SplitMix.mix(UInt64(id) ^ (salt &* 0x5851_F42D_4C95_7F2D) ^ 0xA5A5) % 1_000_000) / 1000
    bytes.append(contentsOf: "{\"id\":\(id),\"title\":\"Item \(id)\",\"group\":\"g\(group)\",\"score\":\(score)}".utf8)
}

/// `[object,object,...]` for `ids`, as a client would send it.
func objectsText(_ ids: some Collection<Int>, groups: Int, salt: (Int) -> UInt64 = { _ in 0 }) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(ids.count * 72 + 2)
    bytes.append(UInt8(ascii: "["))
    var first = true
    for id in ids {
        if !first { bytes.append(UInt8(ascii: ",")) }
        first = false
        appendObject(id, groups: groups, salt: salt(id), to: &bytes)
    }
    bytes.append(UInt8(ascii: "]"))
    return bytes
}

/// The objects for `ids`, parsed from their text: separate trees, as if each came off the wire.
func makeObjects(_ ids: some Collection<Int>, groups: Int = 100, salt: (Int) -> UInt64 = { _ in 0 }) -> [JSON] {
    let text = objectsText(ids, groups: groups, salt: salt)
    guard let objects = (try? JSON.parse(text))?.arrayValue else { fail("generated objects do not parse") }
    return objects
}

/// `{"name":NAME,"kind":"simple"[,"identityKey":KEY],"objects":[...]}` and the size of the objects array in it.
func simpleSourceParamsText(name: String, count: Int, groups: Int, identityKey: String?) -> (text: [UInt8], objectsBytes: Int) {
    var text: [UInt8] = []
    let head = "{\"name\":\"\(name)\",\"kind\":\"simple\"" + (identityKey.map { ",\"identityKey\":\"\($0)\"" } ?? "") + ",\"objects\":"
    // One allocation of the final size, so the text is one mapping that goes away whole when freed.
    text.reserveCapacity(head.utf8.count + count * 72 + 16)
    text.append(contentsOf: head.utf8)
    let start = text.count
    text.append(UInt8(ascii: "["))
    for id in 0..<count {
        if id > 0 { text.append(UInt8(ascii: ",")) }
        appendObject(id, groups: groups, to: &text)
    }
    text.append(UInt8(ascii: "]"))
    let objectsBytes = text.count - start
    text.append(UInt8(ascii: "}"))
    return (text, objectsBytes)
}

// MARK: - Measuring

/// Seconds taken by `body`, and its result.
func timed<T>(_ body: () throws -> T) rethrows -> (T, Double) {
    let start = Clock.now()
    let result = try body()
    return (result, Clock.now() - start)
}

/// VmRSS and VmHWM (peak) of a process, in bytes, from /proc/PID/status.
func residentMemory(_ pid: String = "self") -> (rss: Int, peak: Int) {
    let text = String(decoding: readWholeFile("/proc/\(pid)/status"), as: UTF8.self)
    func field(_ name: String) -> Int {
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            let digits = line.dropFirst(name.count + 1).filter { $0.isNumber }
            return (Int(digits) ?? 0) * 1024  // "VmRSS:    123456 kB"
        }
        return 0
    }
    return (field("VmRSS"), field("VmHWM"))
}

func megabytes(_ bytes: Int) -> String { fixed(Double(bytes) / 1_048_576, 1) + " MiB" }

func parseSizes(_ text: String) -> [Int] {
    text.split(separator: ",").map { part in
        guard let size = Int(part.replacingOccurrences("_", "")), size > 0 else { fail("bad size \(part) in --sizes") }
        return size
    }
}

extension StringProtocol {
    func replacingOccurrences(_ character: Character, _ replacement: String) -> String {
        var result = ""
        for each in self { if each == character { result += replacement } else { result.append(each) } }
        return result
    }
}

/// A percentage of a floor, e.g. "34 % of the floor".
func ofFloor(_ value: Double, _ floor: Double) -> String { fixed(100 * value / floor) + " % of it" }

// MARK: - 4. Pipelined objectAtIndexPath over stdio

func objectPipelineBenchmark(_ options: Options) {
    let command = daemonCommand(options)
    let objects = options.int("--objects", default: 10_000)
    let count = options.int("--count", default: 100_000)
    let runs = options.int("--runs", default: 3)
    let floor = options.double("--floor", default: 100_000)
    // The setup: one createSource of `objects` small objects, answered before the clock starts.
    var setup = Array(
        #"{"jsonrpc":"2.0","id":2,"method":"createSource","params":{"name":"items","kind":"simple","identityKey":"id","objects":"#.utf8)
    let objectsJSON = objectsText(0..<objects, groups: 100)
    setup += objectsJSON
    setup += Array("}}".utf8)
    say(
        "objectpipeline: setup createSource \"items\" (simple, identityKey id) with \(objects) objects (\(objectsJSON.count) B of JSON, mean \(objectsJSON.count / objects) B);"
    )
    say("  requests objectAtIndexPath {\"source\":\"items\",\"indexPath\":[0, n % \(objects)]}")
    let template = RequestTemplate(method: "objectAtIndexPath", params: #"{"source":"items","indexPath":[0,%n]}"#, cycle: objects)
    let (rates, cpu) = pipelineRuns(command: command, template: template, count: count, runs: runs, initialize: true, setup: [setup])
    say(
        "  floor: >= \(fixed(floor)) req/s (best \(fixed(rates.max)) = \(ofFloor(rates.max, floor)); median \(fixed(rates.median)) = \(ofFloor(rates.median, floor)))"
    )
    say(
        "RESULT objectpipeline objects=\(objects) best=\(fixed(rates.max)) median=\(fixed(rates.median)) daemon_cpu_us=\(fixed(cpu.median, 2)) floor=\(fixed(floor))"
    )
}

// MARK: - 5. A big simple source: creation time and memory

func bigSourceBenchmark(_ options: Options) {
    let count = options.int("--objects", default: 1_000_000)
    let groups = options.int("--groups", default: 100)
    let identityKey = options.string("--identity-key")
    let floorRatio = options.double("--floor-ratio", default: 2)
    if options.string("--daemon") != nil {
        bigSourceOverStdio(options, count: count, groups: groups, identityKey: identityKey, floorRatio: floorRatio)
    } else if options.flag("--breakdown") {
        bigSourceBreakdown(count: count, groups: groups, identityKey: identityKey)
    } else {
        bigSourceInProcess(count: count, groups: groups, identityKey: identityKey, floorRatio: floorRatio)
    }
}

/// The daemon's createSource path without the transport: parse the params text, then
/// `SourceRegistry.create`. RSS is read before and after each step; nothing allocated
/// along the way is freed until the end except the params text (one mapping of its own).
func bigSourceInProcess(count: Int, groups: Int, identityKey: String?, floorRatio: Double) {
    let identityText = identityKey.map { "identityKey \($0)" } ?? "whole-value identity"
    let base = residentMemory()
    var text: [UInt8]
    let objectsBytes: Int
    (text, objectsBytes) = simpleSourceParamsText(name: "big", count: count, groups: groups, identityKey: identityKey)
    let withText = residentMemory()
    say(
        "bigsource (in process): simple source of \(count) objects, \(identityText); objects array \(objectsBytes) B of JSON (mean \(fixed(Double(objectsBytes) / Double(count), 1)) B/object); params text \(text.count) B"
    )
    var params: JSON? = nil
    let parseSeconds: Double
    (params, parseSeconds) = timed { try? JSON.parse(text) }
    guard params != nil else { fail("params do not parse") }
    let parsed = residentMemory()
    text = []  // the params text: gone, as the daemon drops a frame once parsed
    let parsedNoText = residentMemory()
    let registry = SourceRegistry()
    let (source, createSeconds) = timed { () -> DataSource in
        do { return try registry.create(SourceSpec.decoding(createSourceParams: params!)) } catch { fail("create: \(error)") }
    }
    let created = residentMemory()
    let jansonBytes = (params!["objects"]?.encoded().count) ?? 0
    params = nil  // the params object and its array go; the objects stay, held by the source
    let dropped = residentMemory()
    MemoryRelease.trimMalloc()
    let trimmed = residentMemory()
    guard source.numberOfObjects(inSection: 0) == count else { fail("the source has \(source.numberOfObjects(inSection: 0)) objects") }
    // The first indexPath(for:) builds the identity index where the model builds it lazily
    // (it costs nothing extra where the model built it at creation). The probe is a separate tree.
    let probe = makeObjects([count / 2], groups: groups)[0]
    let (found, lookupSeconds) = timed { source.indexPath(for: probe) }
    guard found == IndexPath(section: 0, item: count / 2) else { fail("indexPath(for:) answered \(found.map { $0.description } ?? "nil")") }
    MemoryRelease.trimMalloc()
    let indexed = residentMemory()

    let perObject = { (bytes: Int) in fixed(Double(bytes) / Double(count)) + " B/object" }
    say("  text built:   RSS +\(megabytes(withText.rss - base.rss))")
    say(
        "  JSON.parse:   \(fixed(parseSeconds * 1000)) ms; RSS +\(megabytes(parsed.rss - withText.rss)) (\(perObject(parsed.rss - withText.rss)): jansson trees + the params array); text freed: RSS \(megabytes(parsedNoText.rss - base.rss)) over the start"
    )
    say(
        "  create:       \(fixed(createSeconds * 1000)) ms (SourceRegistry.create); RSS +\(megabytes(created.rss - parsedNoText.rss)) (\(perObject(created.rss - parsedNoText.rss)))"
    )
    say(
        "  params dropped: RSS \(megabytes(dropped.rss - base.rss)) over the start; after malloc_trim(0): \(megabytes(trimmed.rss - base.rss)) (\(perObject(trimmed.rss - base.rss)))"
    )
    say(
        "  first indexPath(for:): \(fixed(lookupSeconds * 1000, 1)) ms (builds the identity index if the model builds it lazily); RSS then \(megabytes(indexed.rss - base.rss)) over the start (\(perObject(indexed.rss - base.rss)))"
    )
    let createdRatio = Double(trimmed.rss - base.rss) / Double(objectsBytes)
    let ratio = Double(indexed.rss - base.rss) / Double(objectsBytes)
    say("  parse + create: \(fixed((parseSeconds + createSeconds) * 1000)) ms")
    say(
        "  resident memory / JSON size of the objects: \(fixed(ratio, 2)) with the identity index built (\(fixed(createdRatio, 2)) right after creation);"
            + " against jansson's own re-encoding, \(jansonBytes) B: \(fixed(Double(indexed.rss - base.rss) / Double(max(1, jansonBytes)), 2))"
    )
    say("  peak RSS over the start: \(megabytes(indexed.peak - base.rss)) (includes the \(megabytes(objectsBytes)) params text)")
    say("  floor: ratio <= \(fixed(floorRatio, 1)) (measured \(fixed(ratio, 2)) = \(ofFloor(ratio, floorRatio)))")
    say(
        "RESULT bigsource_inprocess objects=\(count) identity=\(identityKey ?? "whole") json_bytes=\(objectsBytes) parse_ms=\(fixed(parseSeconds * 1000)) create_ms=\(fixed(createSeconds * 1000)) first_lookup_ms=\(fixed(lookupSeconds * 1000, 1)) rss_bytes=\(indexed.rss - base.rss) ratio=\(fixed(ratio, 2)) ratio_at_creation=\(fixed(createdRatio, 2))"
    )
}

/// Where the memory goes: a simple source built step by step, RSS read after each step
/// (after malloc_trim, so memory freed along the way is not counted): the jansson trees,
/// the Swift boxes `SourceRegistry.create` makes for them, the source's own state, and the
/// identity index built by the first `indexPath(for:)` (where the model builds it lazily).
func bigSourceBreakdown(count: Int, groups: Int, identityKey: String?) {
    let identity = Identity(key: identityKey.map(JSONKeyPath.init))
    say(
        "bigsource --breakdown: \(count) objects, \(identityKey.map { "identityKey \($0)" } ?? "whole-value identity"); RSS after each step (after malloc_trim)"
    )
    var text: [UInt8]
    let objectsBytes: Int
    (text, objectsBytes) = simpleSourceParamsText(name: "big", count: count, groups: groups, identityKey: identityKey)
    var steps: [(String, Int)] = []
    var last = residentMemory().rss
    func step(_ name: String) {
        MemoryRelease.trimMalloc()
        let now = residentMemory().rss
        steps.append((name, now - last))
        last = now
    }
    // Parsed as in the in-process run (the whole params text, freed after), so malloc is in the same state.
    guard let array = (try? JSON.parse(text))?["objects"] else { fail("objects do not parse") }
    let withText = residentMemory().rss
    text = []
    last -= withText - residentMemory().rss  // the text's own pages are not the trees'
    step("jansson: the objects' trees + the array (json_loadb)")
    let objects = array.arrayValue!
    step("[JSON]: a Swift box (Reference) per object + the array (SourceRegistry.create's arrayValue)")
    let source = SimpleDataSource(name: "big", identity: identity, objects: objects)
    step("SimpleDataSource.init: the source's own state (the layout shares that array)")
    let probe = makeObjects([count / 2], groups: groups)[0]
    guard source.indexPath(for: probe) == IndexPath(section: 0, item: count / 2) else { fail("indexPath(for:) is wrong") }
    step("first indexPath(for:): the identity index, where it is built lazily")
    say("  objects array: \(objectsBytes) B of JSON (\(fixed(Double(objectsBytes) / Double(count), 1)) B/object)")
    var total = 0
    for (name, bytes) in steps {
        total += bytes
        say(
            "  " + padded(megabytes(bytes), 11) + padded(fixed(Double(bytes) / Double(count)) + " B/object", 16)
                + padded(fixed(Double(bytes) / Double(objectsBytes), 2) + "x JSON", 12) + "  " + name)
    }
    say("  total: \(megabytes(total)) = \(fixed(Double(total) / Double(objectsBytes), 2))x the JSON size")
    say(
        "RESULT bigsource_breakdown objects=\(count) identity=\(identityKey ?? "whole") "
            + steps.enumerated().map { "step\($0.offset + 1)_bytes_per_object=\(fixed(Double($0.element.1) / Double(count)))" }.joined(
                separator: " "))
    if source.numberOfObjects(inSection: 0) == 1 { say("\(objects.count)") }  // keep everything alive to here
}

/// One createSource request of N objects to a fresh daemon: time from the first byte
/// written to the response, and the daemon's RSS (from /proc/PID/status) before and after.
func bigSourceOverStdio(_ options: Options, count: Int, groups: Int, identityKey: String?, floorRatio: Double) {
    let runs = options.int("--runs", default: 1)
    let (params, objectsBytes) = simpleSourceParamsText(name: "big", count: count, groups: groups, identityKey: identityKey)
    var body = Array(#"{"jsonrpc":"2.0","id":2,"method":"createSource","params":"#.utf8)
    body += params
    body += Array("}".utf8)
    let frame = Framing.frame(body)
    let command = daemonCommand(options) + ["--max-message-size", String(body.count * 2)]
    say(
        "bigsource (over stdio): one createSource of \(count) objects, \(identityKey.map { "identityKey \($0)" } ?? "whole-value identity"); message \(body.count) B, objects \(objectsBytes) B; \(runs) run(s), fresh daemon each"
    )
    say("  \(command.joined(separator: " "))")
    var seconds: [Double] = [], ratios: [Double] = []
    for run in 1...runs {
        var child = Child.spawn(command)
        var reader = FrameReader(descriptor: child.output)
        child.send(request(id: 1, method: "initialize", params: [:]))
        _ = reader.response(to: JSON(1), what: "initialize")
        let before = residentMemory(String(child.pid))
        let start = Clock.now()
        child.send(frame)
        let written = Clock.now()
        let response = reader.response(to: JSON(2), what: "createSource")
        let answered = Clock.now()
        guard let result = response["result"], result["counts"]?[0]?.integerValue == count else {
            fail("createSource answered \(String(decoding: response.encoded().prefix(300), as: UTF8.self))")
        }
        let after = residentMemory(String(child.pid))
        usleep(300_000)  // anything freed after the answer (the request's params) is gone by now
        let settled = residentMemory(String(child.pid))
        // One read back, to see the source serves.
        child.send(request(id: 3, method: "objectAtIndexPath", params: ["source": "big", "indexPath": [0, JSON(count - 1)]]))
        let last = reader.response(to: JSON(3), what: "objectAtIndexPath")
        // The first indexPathForObject builds the identity index where the model builds it lazily.
        let probe = makeObjects([count / 2], groups: groups)[0]
        let lookupStart = Clock.now()
        child.send(request(id: 4, method: "indexPathForObject", params: ["source": "big", "object": probe]))
        let lookup = reader.response(to: JSON(4), what: "indexPathForObject")
        let lookupSeconds = Clock.now() - lookupStart
        guard lookup["result"] == [0, JSON(count / 2)] else { fail("indexPathForObject answered \(lookup)") }
        usleep(100_000)
        let indexed = residentMemory(String(child.pid))
        let cpu = child.finish().cpuSeconds  // (exit status 1: stdin closed without shutdown)
        let ratio = Double(indexed.rss - before.rss) / Double(objectsBytes)
        seconds.append(answered - start)
        ratios.append(ratio)
        say(
            "  run \(run): response in \(fixed((answered - start) * 1000)) ms (all written after \(fixed((written - start) * 1000)) ms);"
                + " daemon RSS \(megabytes(before.rss)) before, \(megabytes(after.rss)) at the answer, \(megabytes(settled.rss)) 0.3 s later, peak \(megabytes(settled.peak));"
                + " daemon CPU \(fixed(cpu * 1000)) ms over its life")
        say(
            "    first indexPathForObject: answered in \(fixed(lookupSeconds * 1000, 1)) ms; daemon RSS then \(megabytes(indexed.rss)), peak \(megabytes(indexed.peak))"
        )
        say(
            "    growth / JSON size of the objects: \(fixed(ratio, 2)) with the identity index built (\(fixed(Double(settled.rss - before.rss) / Double(objectsBytes), 2)) right after creation;"
                + " peak \(fixed(Double(indexed.peak - before.rss) / Double(objectsBytes), 2))); last object: \(last["result"].map { $0.description } ?? "?")"
        )
    }
    let time = Sample(seconds), ratio = Sample(ratios)
    say("  floor: ratio <= \(fixed(floorRatio, 1)) (measured \(fixed(ratio.median, 2)) = \(ofFloor(ratio.median, floorRatio)))")
    say(
        "RESULT bigsource_stdio objects=\(count) identity=\(identityKey ?? "whole") json_bytes=\(objectsBytes) response_ms=\(fixed(time.median * 1000)) ratio=\(fixed(ratio.median, 2))"
    )
}

// MARK: - 6. Sectioning a big source

func sectioningBenchmark(_ options: Options) {
    let count = options.int("--objects", default: 1_000_000)
    let groups = options.int("--groups", default: 100)
    let runs = options.int("--runs", default: 3)
    let identityKey = options.string("--identity-key")
    let floorMS = options.double("--floor-ms", default: 1000)
    let registry = SourceRegistry()
    let (text, objectsBytes) = simpleSourceParamsText(name: "big", count: count, groups: groups, identityKey: identityKey)
    guard let params = try? JSON.parse(text) else { fail("params do not parse") }
    let (child, childSeconds) = timed { () -> DataSource in
        do { return try registry.create(SourceSpec.decoding(createSourceParams: params)) } catch { fail("create: \(error)") }
    }
    say(
        "sectioning: over a simple source of \(count) objects (\(objectsBytes) B of JSON; created in \(fixed(childSeconds * 1000)) ms), \(identityKey.map { "identityKey \($0)" } ?? "whole-value identity") (inherited), \(groups) groups; \(runs) runs each (create, then destroy)"
    )

    let variants: [(label: String, key: String, sort: JSON?)] = [
        ("sectioningKey group", "group", nil),
        ("group, sorted by score (number)", "group", [["keyPath": "score", "ascending": true]]),
        ("group, sorted by title (string) descending", "group", [["keyPath": "title", "ascending": false]]),
    ]
    // --variant N runs one of them (4: the edit), e.g. under perf.
    let only = options.string("--variant").map { _ in options.int("--variant", default: 1) }
    let editing = only == nil || only == variants.count + 1
    // The last source of variant 2 (sorted by score) stays for the edit below, saving a creation.
    var sortedSource: DataSource? = nil
    for (number, variant) in variants.enumerated() where only == nil || only == number + 1 {
        let name = "sectioned\(number + 1)"
        var members: [(String, JSON)] = [
            ("name", JSON(name)), ("kind", "sectioned"), ("source", "big"), ("sectioningKey", JSON(variant.key)),
        ]
        if let sort = variant.sort { members.append(("sortDescriptors", sort)) }
        let sectionedParams = JSON.object(members)
        var times: [Double] = []
        var sections = 0
        for run in 0..<runs {
            let (source, seconds) = timed { () -> DataSource in
                do { return try registry.create(SourceSpec.decoding(createSourceParams: sectionedParams)) } catch {
                    fail("create: \(error)")
                }
            }
            times.append(seconds * 1000)
            sections = source.numberOfSections
            guard source.allObjects.count == count else { fail("sectioned source lost objects") }
            if number == 1, run == runs - 1, editing {
                sortedSource = source
                continue
            }
            _ = try? registry.destroy(name, cascade: false)
        }
        let sample = Sample(times)
        say(
            "  \(variant.label): median \(fixed(sample.median)) ms, best \(fixed(sample.min)) ms (runs "
                + times.map { fixed($0) }.joined(separator: ", ")
                + " ms); \(sections) sections; floor < \(fixed(floorMS)) ms: \(ofFloor(sample.median, floorMS))")
        say(
            "RESULT sectioning variant=\(number + 1) objects=\(count) median_ms=\(fixed(sample.median)) best_ms=\(fixed(sample.min)) sections=\(sections)"
        )
    }

    // What a sectioned source costs afterwards: one insert into its 1M child recomputes it.
    guard editing else { return }
    do {
        let sectioned =
            try sortedSource
            ?? registry.create(
                SourceSpec.decoding(createSourceParams: [
                    "name": "live", "kind": "sectioned", "source": "big", "sectioningKey": "group",
                    "sortDescriptors": [["keyPath": "score"]],
                ]))
        guard let simple = child as? SimpleDataSource else { fail("big is not simple") }
        var times: [Double] = []
        for run in 0..<runs {
            let object = makeObjects([count + run])[0]
            let (_, seconds) = timed { try? simple.insert([object], at: 0) }
            times.append(seconds * 1000)
        }
        let sample = Sample(times)
        say(
            "  one insert into the child with a sorted sectioned parent (child diff + parent re-sort, re-section, diff): median \(fixed(sample.median)) ms (\(sectioned.allObjects.count) objects)"
        )
        say("RESULT sectioning_edit objects=\(count) median_ms=\(fixed(sample.median))")
    } catch {
        fail("live sectioned source: \(error)")
    }
}

// MARK: - 7. indexPath(for:) at several sizes

func indexPathBenchmark(_ options: Options) {
    let sizes = parseSizes(options.string("--sizes", default: "1000,10000,100000,1000000"))
    let probes = options.int("--probes", default: 10_000)
    let batches = options.int("--batches", default: 21)
    say(
        "indexpath: indexPath(for:) on a simple source; \(probes) probe objects per kind, parsed separately (equal values, other trees, as from the wire);"
    )
    say(
        "  present probes at random positions, absent probes with ids past the end; \(batches) batches over all probes, ns/lookup median (best)"
    )
    say(
        "  " + "objects".padding(10) + padded("whole, present", 18) + padded("whole, absent", 18) + padded("id key, present", 18)
            + padded("id key, absent", 18))
    var sink = 0
    var firstMedians: [Double]? = nil
    var lastMedians: [Double] = []
    for size in sizes {
        let objects = makeObjects(0..<size)
        let whole = SimpleDataSource(name: "whole", identity: Identity(key: nil), objects: objects)
        let keyed = SimpleDataSource(name: "keyed", identity: Identity(key: JSONKeyPath("id")), objects: objects)
        var random = SplitMix(seed: UInt64(size))
        let presentIDs = (0..<probes).map { _ in random.below(size) }
        let present = makeObjects(presentIDs)
        let absent = makeObjects(size..<(size + probes))
        for source in [whole, keyed] {
            for (index, probe) in present.enumerated() where source.indexPath(for: probe) != IndexPath(section: 0, item: presentIDs[index])
            {
                fail("\(source.name): wrong index path for id \(presentIDs[index])")
            }
            for probe in absent where source.indexPath(for: probe) != nil { fail("\(source.name): found an absent object") }
        }
        var medians: [Double] = []
        var cells: [String] = []
        for (source, set) in [(whole, present), (whole, absent), (keyed, present), (keyed, absent)] {
            var times: [Double] = []
            for _ in 0..<batches {
                let start = Clock.now()
                for probe in set {
                    if let path = source.indexPath(for: probe) { sink &+= path.item } else { sink &+= 1 }
                }
                times.append((Clock.now() - start) * 1e9 / Double(set.count))
            }
            let sample = Sample(times)
            medians.append(sample.median)
            cells.append(fixed(sample.median) + " (" + fixed(sample.min) + ")")
        }
        say("  " + String(size).padding(10) + cells.map { padded($0, 18) }.joined())
        say(
            "RESULT indexpath objects=\(size) whole_present_ns=\(fixed(medians[0])) whole_absent_ns=\(fixed(medians[1])) key_present_ns=\(fixed(medians[2])) key_absent_ns=\(fixed(medians[3]))"
        )
        if firstMedians == nil { firstMedians = medians }
        lastMedians = medians
    }
    if let first = firstMedians, sizes.count > 1 {
        say(
            "  \(sizes.last!) vs \(sizes.first!) objects: "
                + zip(["whole present", "whole absent", "id present", "id absent"], zip(lastMedians, first))
                .map { "\($0.0) x\(fixed($0.1.0 / $0.1.1, 2))" }.joined(separator: ", "))
    }
    if sink == 42 { say("") }
}

// MARK: - 8. Change sets

/// `base` with `extra` merged in at random positions (each slot equally likely).
func insertingAtRandom(_ extra: [Int], into base: [Int], random: inout SplitMix) -> [Int] {
    let slots = extra.map { _ in random.below(base.count + 1) }.sorted()
    var result: [Int] = []
    result.reserveCapacity(base.count + extra.count)
    var next = 0
    for (position, id) in base.enumerated() {
        while next < slots.count, slots[next] == position {
            result.append(extra[next])
            next += 1
        }
        result.append(id)
    }
    while next < slots.count {
        result.append(extra[next])
        next += 1
    }
    return result
}

func changeSetBenchmark(_ options: Options) {
    let count = options.int("--objects", default: 100_000)
    let edits = options.int("--edits", default: 10_000)
    let moves = options.int("--moves", default: 1_000)
    let runs = options.int("--runs", default: 5)
    let floorMS = options.double("--floor-ms", default: 100)
    var random = SplitMix(seed: 42)

    let oldIDs = Array(0..<count)
    var order = oldIDs
    order.shuffle(using: &random)
    let deleted = Set(order.prefix(edits))
    let kept = oldIDs.filter { !deleted.contains($0) }
    let edited = insertingAtRandom(Array(count..<(count + edits)), into: kept, random: &random)
    // Moves: `moves` kept objects taken out and put back at random places.
    var movedOrder = kept
    movedOrder.shuffle(using: &random)
    let moving = Set(movedOrder.prefix(moves))
    let withMoves = insertingAtRandom(Array(movedOrder.prefix(moves)), into: edited.filter { !moving.contains($0) }, random: &random)
    // Updates: `moves` kept objects with a changed score (same id, other value).
    let updating = Set(movedOrder.suffix(moves))

    let old = makeObjects(oldIDs)
    let new = makeObjects(edited)
    let newWithMoves = makeObjects(withMoves)
    let newWithUpdates = makeObjects(edited) { updating.contains($0) ? 1 : 0 }
    say(
        "changeset: \(count) objects -> \(edits) deleted (random places), \(edits) inserted (random places); the new rows are separate trees"
    )
    say("  (parsed, as replaceObjects gets them), so kept objects compare by value; \(runs) runs each, median (best–worst)")

    let byID = Identity(key: JSONKeyPath("id")), whole = Identity(key: nil)
    let variants: [(String, Identity, [JSON])] = [
        ("identityKey id", byID, new),
        ("whole-value identity", whole, new),
        ("identityKey id, + \(moves) moves", byID, newWithMoves),
        ("whole-value, + \(moves) moves", whole, newWithMoves),
        ("identityKey id, + \(moves) updated", byID, newWithUpdates),
    ]
    let oldLayout = Layout(sections: [RowArray(old)], titles: [""])
    let only = options.string("--variant").map { _ in options.int("--variant", default: 1) }
    for (number, (label, identity, rows)) in variants.enumerated() where only == nil || only == number + 1 {
        let newLayout = Layout(sections: [RowArray(rows)], titles: [""])
        var times: [Double] = []
        var changes = ChangeSet()
        for _ in 0..<runs {
            let seconds: Double
            (changes, seconds) = timed { ChangeSet.between(old: oldLayout, new: newLayout, identity: identity) }
            times.append(seconds * 1000)
        }
        // The same edit through the model: replaceObjects (head/tail trim, diff, re-index), alternating old -> new -> old.
        let source = SimpleDataSource(name: "s", identity: identity, objects: old)
        var replaceTimes: [Double] = []
        for run in 0..<runs {
            let target = run % 2 == 0 ? rows : old
            let (_, seconds) = timed { source.replaceObjects(target) }
            replaceTimes.append(seconds * 1000)
        }
        let diff = Sample(times), replace = Sample(replaceTimes)
        say(
            "  \(label): ChangeSet.between \(fixed(diff.median, 1)) ms (\(fixed(diff.min, 1))–\(fixed(diff.max, 1))); replaceObjects \(fixed(replace.median, 1)) ms (\(fixed(replace.min, 1))–\(fixed(replace.max, 1)));"
                + " deleted \(changes.deleted.count), inserted \(changes.inserted.count), moved \(changes.moved.count), updated \(changes.updated.count); floor < \(fixed(floorMS)) ms: \(ofFloor(diff.median, floorMS))"
        )
        say(
            "RESULT changeset variant=\(number + 1) objects=\(count) between_ms=\(fixed(diff.median, 1)) between_best_ms=\(fixed(diff.min, 1)) between_worst_ms=\(fixed(diff.max, 1)) replace_ms=\(fixed(replace.median, 1)) replace_worst_ms=\(fixed(replace.max, 1)) deleted=\(changes.deleted.count) inserted=\(changes.inserted.count) moved=\(changes.moved.count) updated=\(changes.updated.count)"
        )
    }
}

// MARK: - 9. One edit in a big source, against one read, over stdio

/// One round trip (send, read to the response) of `body`; the notifications before the
/// response are handed to `notified`.
func roundTrip(
    _ child: Child, _ reader: inout FrameReader, id: Int, method: String, params: JSON,
    notified: (JSON) -> Void = { _ in }
) -> (response: JSON, seconds: Double) {
    let frame = request(id: id, method: method, params: params)
    let start = Clock.now()
    child.send(frame)
    while let body = reader.next() {
        guard let value = try? JSON.parse(body) else { fail("daemon wrote a body that is not JSON") }
        if value["method"] == nil, value["id"] == JSON(id) {
            let seconds = Clock.now() - start
            if value["error"] != nil { fail("\(method) answered \(value)") }
            return (value, seconds)
        }
        notified(value)
    }
    fail("daemon closed its stdout before answering \(method)")
}

/// insertObjects, removeObjects and updateObjects of one object in an N-object simple source,
/// each over stdio, against objectAtIndexPath round trips in the same daemon and run; then the
/// same edits with a live sorted, sectioned view over the source, whose change sets are
/// checked to be one row each.
func editsBenchmark(_ options: Options) {
    let count = options.int("--objects", default: 300_000)
    let edits = options.int("--edits", default: 200)
    let groups = options.int("--groups", default: 100)
    let floorRatio = options.double("--floor-ratio", default: 10)
    let viewFloor = options.double("--view-floor-ratio", default: 3)
    let (params, objectsBytes) = simpleSourceParamsText(name: "big", count: count, groups: groups, identityKey: "id")
    var body = Array(#"{"jsonrpc":"2.0","id":2,"method":"createSource","params":"#.utf8)
    body += params
    body += Array("}".utf8)
    let command = daemonCommand(options) + ["--max-message-size", String(body.count * 2)]
    say(
        "edits (over stdio): one-object edits of an \(count)-object simple source (identityKey id, \(objectsBytes) B of JSON), \(edits) of each kind, each a round trip;"
    )
    say(
        "  against objectAtIndexPath round trips at random rows, in the same daemon; then the same with a sorted, sectioned view (group, by score) over it"
    )
    say("  \(command.joined(separator: " "))")
    var child = Child.spawn(command)
    var reader = FrameReader(descriptor: child.output)
    child.send(request(id: 1, method: "initialize", params: [:]))
    _ = reader.response(to: JSON(1), what: "initialize")
    child.send(Framing.frame(body))
    _ = reader.response(to: JSON(2), what: "createSource")
    var id = 10
    var ids = Array(0..<count)
    var nextID = count
    var random = SplitMix(seed: 13)
    // The identity index is built by the first lookup (as after any replaceObjects): not an edit's cost.
    _ = roundTrip(
        child, &reader, id: id, method: "indexPathForObject", params: ["source": "big", "object": makeObjects([0], groups: groups)[0]])

    func reads() -> Sample {
        var times: [Double] = []
        for _ in 0..<edits {
            id += 1
            let row = random.below(ids.count)
            times.append(
                roundTrip(child, &reader, id: id, method: "objectAtIndexPath", params: ["source": "big", "indexPath": [0, JSON(row)]])
                    .seconds)
        }
        return Sample(times)
    }

    /// Medians of insert, remove, update; with `view`, checks each of its change sets is one row.
    func editRound(view: String?) -> [Sample] {
        var samples: [[Double]] = [[], [], []]
        var viewRows: [Int] = []
        func notified(_ value: JSON) {
            guard let view, value["method"] == "dataSource/didChange", value["params"]?["source"] == JSON(view),
                let changes = value["params"]?["changes"]
            else { return }
            let rows = ["inserted", "deleted", "moved"].reduce(0) { $0 + (changes[$1]?.count ?? 0) }
            let sections = (changes["insertedSections"]?.count ?? 0) + (changes["deletedSections"]?.count ?? 0)
            viewRows.append(sections > 0 ? -1 : max(rows, changes["updated"]?.count ?? 0))
        }
        for _ in 0..<edits {
            id += 1
            let at = random.below(ids.count + 1)
            let object = makeObjects([nextID], groups: groups)[0]
            samples[0].append(
                roundTrip(
                    child, &reader, id: id, method: "insertObjects", params: ["source": "big", "objects": [object], "index": JSON(at)],
                    notified: notified
                ).seconds)
            ids.insert(nextID, at: at)
            nextID += 1

            id += 1
            let victim = random.below(ids.count)
            samples[1].append(
                roundTrip(
                    child, &reader, id: id, method: "removeObjects", params: ["source": "big", "index": JSON(victim), "count": 1],
                    notified: notified
                ).seconds)
            ids.remove(at: victim)

            id += 1
            let target = ids[random.below(ids.count)]
            let updated = makeObjects([target], groups: groups, salt: { _ in UInt64(id) })[0]
            samples[2].append(
                roundTrip(
                    child, &reader, id: id, method: "updateObjects", params: ["source": "big", "objects": [updated]], notified: notified
                ).seconds)
        }
        if view != nil {
            let one = viewRows.filter { $0 == 1 }.count
            say(
                "    the view's change sets: \(viewRows.count) for \(3 * edits) edits, \(one) of exactly one row"
                    + (one == viewRows.count ? "" : " (others: \(viewRows.filter { $0 != 1 }.prefix(10)))"))
        }
        return samples.map(Sample.init)
    }

    let kinds = ["insertObjects", "removeObjects", "updateObjects"]
    let readsBefore = reads()
    let plain = editRound(view: nil)
    let readsMiddle = reads()
    let read = Sample([readsBefore.median, readsMiddle.median])
    say(
        "  objectAtIndexPath round trip: median \(fixed(readsBefore.median * 1e6, 1)) µs before the edits, \(fixed(readsMiddle.median * 1e6, 1)) µs after; using \(fixed(read.median * 1e6, 1)) µs"
    )
    for (kind, sample) in zip(kinds, plain) {
        say(
            "  \(kind) of one object: median \(fixed(sample.median * 1e6, 1)) µs (best \(fixed(sample.min * 1e6, 1)), p90 \(fixed(sample.percentile(90) * 1e6, 1))) = \(fixed(sample.median / read.median, 1))× a read; floor <= \(fixed(floorRatio))×"
        )
        say(
            "RESULT edits objects=\(count) kind=\(kind) median_us=\(fixed(sample.median * 1e6, 1)) read_us=\(fixed(read.median * 1e6, 1)) ratio=\(fixed(sample.median / read.median, 2))"
        )
    }

    id += 1
    let (_, viewSeconds) = roundTrip(
        child, &reader, id: id, method: "createSource",
        params: [
            "name": "view", "kind": "sectioned", "source": "big", "sectioningKey": "group",
            "sortDescriptors": [["keyPath": "score", "ascending": true]],
        ])
    say("  created the sorted, sectioned view in \(fixed(viewSeconds * 1000)) ms")
    let viewed = editRound(view: "view")
    for (index, kind) in kinds.enumerated() {
        let with = viewed[index], without = plain[index]
        say(
            "  \(kind) with the view: median \(fixed(with.median * 1e6, 1)) µs (best \(fixed(with.min * 1e6, 1))) = \(fixed(with.median / without.median, 2))× without it; floor <= \(fixed(viewFloor))×"
        )
        say(
            "RESULT edits_view objects=\(count) kind=\(kind) median_us=\(fixed(with.median * 1e6, 1)) without_us=\(fixed(without.median * 1e6, 1)) ratio=\(fixed(with.median / without.median, 2))"
        )
    }
    child.finish()
}
