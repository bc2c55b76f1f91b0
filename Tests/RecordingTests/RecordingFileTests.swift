#if canImport(Glibc)
import Glibc
#endif
import JSONKit
@testable import Recording
import Replay
import TranscriptFormat
import Testing

/// How the recording's file is written: O(event), a transcript between any two writes, and
/// repairable when a write was cut short (issue 27, defect 15).
@Suite struct RecordingFileTests {
    /// Before issue 27 every event rewrote the whole file: the 3,000th ping wrote about 430 kB.
    @Test func eachEventCostsItsOwnSizeHoweverLongTheSessionGrows() throws {
        let session = try SyntheticSession()
        session.request("initialize")
        var costs: [Int] = []
        for _ in 1...3000 {
            let before = session.recorder.bytesWritten
            session.request("ping", result: ["delayMilliseconds": 0])
            costs.append(session.recorder.bytesWritten - before)
        }
        // Two steps of about 60 bytes, on one line, and the closing the line is written with.
        let largest = costs.max() ?? 0
        #expect(largest < 300, "an event wrote \(largest) bytes")
        // The last thousand cost what the one before did.
        let secondThousand: Int = costs[1000..<2000].reduce(0, +), lastThousand: Int = costs[2000...].reduce(0, +)
        #expect(lastThousand <= secondThousand + 100)
        #expect(try session.document()["steps"]?.count == 2 + 2 * 3000)
    }

    /// Routes change in place (an exchange starts, its response arrives, not always in the order
    /// they started); running out of room writes the file whole with room for a quarter of it,
    /// so the bytes written stay proportional to the bytes recorded.
    @Test func exchangesCostWhatTheyAddAndEveryRouteIsOnFileAsItStands() throws {
        let session = try SyntheticSession()
        session.request("initialize")
        session.request(
            "createSource",
            [
                "name": "r", "kind": "remote", "apiPath": "/items",
                "remoteConfiguration": ["baseURL": "http://api.example.test:8080"],
            ])
        let rounds = 150
        for round in 0..<rounds {
            var first = -1, second = -1
            session.request("fetchData", ["source": "r"], result: ["isFetching": true]) {
                first = session.startExchange("/items?page=\(round)")
            }
            session.request("fetchData", ["source": "s"], result: ["isFetching": true]) {
                second = session.startExchange("/other?page=\(round)")
            }
            // The second response arrives first.
            session.complete(second, body: RecordingFileTests.page(round, of: "other"))
            session.handleCompletion(notifying: "other \(round)")
            session.complete(first, body: RecordingFileTests.page(round, of: "items"))
            session.handleCompletion(notifying: "items \(round)")
            if round % 30 == 0 || round == rounds - 1 {
                try RecordingFileTests.checkRoutes(try session.document(), exchanges: 2 * (round + 1))
            }
        }
        let size = try session.bytes().count
        #expect(session.recorder.bytesWritten <= 6 * size, "\(session.recorder.bytesWritten) bytes written for a file of \(size)")
        #expect(session.warnings.all.isEmpty)
    }

    /// At the end the file is written whole as a person would lay it out: no room, no padding.
    @Test func theEndLaysTheFileOutOneRouteAndOneStepPerLine() throws {
        let session = try SyntheticSession()
        session.request("initialize")
        var exchange = -1
        session.request("fetchData", ["source": "r"], result: ["isFetching": true]) { exchange = session.startExchange("/items") }
        session.complete(exchange, body: RecordingFileTests.page(0, of: "items"))
        session.handleCompletion(notifying: "loaded")
        session.request("ping", ["delayMilliseconds": 250])
        session.recorder.finish(exitStatus: 0)
        let text = String(decoding: try session.bytes(), as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let document = try JSON.parse(text)
        let routes = document["fixtures"]?.count ?? 0, steps = document["steps"]?.count ?? 0
        // initialize 2, fetchData 3 (send, requested, expect), the response 2, ping 2, expectExit.
        #expect(routes == 1 && steps == 10)
        // {, three members, "fixtures": [, routes, ], "steps": [, steps, ], }, and the last newline.
        #expect(lines.count == 9 + routes + steps + 1)
        #expect(!lines.contains { $0.hasSuffix(" ") })
        #expect(document["timeoutMilliseconds"]?.integerValue == 5250)
        #expect(document["steps"]?[steps - 1] == ["expectExit": 0])
        #expect(lines[3] == "  \"timeoutMilliseconds\": 5250,")
    }

    /// A secret learned after the file holds it is scrubbed from the file (written whole again);
    /// one the file does not hold costs no more than its event.
    @Test func aSecretLearnedLateLeavesTheFileAndOneNeverWrittenCostsNothingMore() throws {
        let session = try SyntheticSession()
        session.request("initialize")
        session.request("createSource", ["name": "notes", "kind": "simple", "objects": ["the token is tok-LATE-8c1f2e77"]])
        #expect(String(decoding: try session.bytes(), as: UTF8.self).contains("tok-LATE-8c1f2e77"))
        session.request(
            "createSource",
            [
                "name": "r", "kind": "remote", "apiPath": "/x",
                "remoteConfiguration": [
                    "baseURL": "http://api.example.test:8080", "headers": ["Authorization": "Bearer tok-LATE-8c1f2e77"],
                ],
            ])
        var text = String(decoding: try session.bytes(), as: UTF8.self)
        #expect(!text.contains("tok-LATE-8c1f2e77"))
        #expect(text.contains("the token is <redacted>"))

        let size = try session.bytes().count
        let before = session.recorder.bytesWritten
        session.request(
            "createSource",
            [
                "name": "q", "kind": "remote", "apiPath": "/y",
                "remoteConfiguration": [
                    "baseURL": "http://api.example.test:8080", "headers": ["Authorization": "Bearer tok-NEW-99887766aa"],
                ],
            ])
        #expect(session.recorder.bytesWritten - before < size / 2)
        text = String(decoding: try session.bytes(), as: UTF8.self)
        #expect(!text.contains("tok-NEW-99887766aa") && text.contains("<redacted>"))
    }

    /// The recorder renames over the path only while it names the file it wrote: a file put
    /// there by someone else is left as it is, and the recording stops.
    @Test func aFileAnotherProgramPutAtThePathIsNeverReplaced() throws {
        let session = try SyntheticSession()
        session.request("initialize")
        #expect(rename(session.path, session.path + ".moved") == 0)
        try writeFileBytes(session.path, Array("someone else's notes\n".utf8))
        // The first route needs room: the file would be written whole.
        session.request("fetchData", ["source": "r"], result: ["isFetching": true]) { _ = session.startExchange("/items") }
        session.request("ping")
        #expect(String(decoding: try session.bytes(), as: UTF8.self) == "someone else's notes\n")
        #expect(session.warnings.all.count == 1)
        #expect(session.warnings.all.first?.contains("no longer the file this recording wrote") == true)
        let leftovers = try RecordingFileTests.names(in: session.directory.path).filter { $0.contains(".partial-") }
        #expect(leftovers.isEmpty, "left behind: \(leftovers)")
    }

    /// Every way the writes of an event can be cut short (a kill during a write larger than a
    /// page) leaves a file that `transcript repair` makes into the transcript of the events
    /// before, or of all of them.
    @Test func aWriteCutShortAnywhereIsRepairedToWholeEvents() throws {
        let session = try SyntheticSession()
        var snapshots: [(bytes: [UInt8], inode: UInt, steps: Int)] = []
        func snapshot() throws {
            var status = stat()
            stat(session.path, &status)
            snapshots.append((try session.bytes(), UInt(status.st_ino), try session.document()["steps"]?.count ?? -1))
        }
        try snapshot()
        session.request("initialize")
        try snapshot()
        session.request(
            "createSource",
            [
                "name": "r", "kind": "remote", "apiPath": "/items",
                "remoteConfiguration": ["baseURL": "http://api.example.test:8080"],
            ])
        try snapshot()
        for round in 0..<3 {
            var first = -1, second = -1
            session.request("fetchData", ["source": "r"], result: ["isFetching": true]) {
                first = session.startExchange("/items?page=\(round)")
            }
            try snapshot()
            session.request("fetchData", ["source": "s"], result: ["isFetching": true]) {
                second = session.startExchange("/other?page=\(round)")
            }
            try snapshot()
            session.complete(second, body: RecordingFileTests.page(round, of: "other"))
            session.handleCompletion(notifying: "other \(round)")
            try snapshot()
            session.complete(first, body: RecordingFileTests.page(round, of: "items"))
            session.handleCompletion(notifying: "items \(round)")
            try snapshot()
            session.request("ping")
            try snapshot()
        }
        let whole = try session.document()
        let allSteps = whole["steps"]?.arrayValue ?? []
        let boundaries = Set(snapshots.map(\.steps))
        var cutsTried = 0
        for (before, after) in zip(snapshots, snapshots.dropFirst()) where before.inode == after.inode {
            // The event's writes, in the order of the file (routes, then steps): cut before any
            // byte they change: near where a write begins or ends, around the bytes that end a JSON
            // value or a line (where what is left of the old bytes can make a line that parses),
            // and a sample between.
            let changed = (0..<after.bytes.count).filter { $0 >= before.bytes.count || before.bytes[$0] != after.bytes[$0] }
            guard !changed.isEmpty else { continue }
            let writeEdges = changed.indices.filter {
                $0 == 0 || $0 == changed.count - 1 || changed[$0] - changed[$0 - 1] > 32 || changed[$0 + 1] - changed[$0] > 32
            }
            let nearEdges = writeEdges.flatMap { edge in (edge - 8...edge + 8).filter(changed.indices.contains) }
            let structural = changed.filter { "}],\n".utf8.contains(after.bytes[$0]) }.flatMap { [$0, $0 + 1] }
            let cuts = Set(
                nearEdges.map { changed[$0] } + structural + stride(from: 0, to: changed.count, by: 17).map { changed[$0] } + [
                    after.bytes.count
                ]
            )
            .filter { $0 <= after.bytes.count }
            for cut in cuts.sorted() {
                var torn = before.bytes
                for index in changed where index < cut {
                    if index < torn.count { torn[index] = after.bytes[index] } else { torn.append(after.bytes[index]) }
                }
                cutsTried += 1
                let repaired = try TranscriptRepair.repair(torn).document
                let steps = repaired["steps"]?.arrayValue ?? []
                #expect(boundaries.contains(steps.count), "a cut before byte \(cut) left \(steps.count) steps, not whole events")
                #expect(Array(allSteps.prefix(steps.count)) == steps)
                let routes = repaired["fixtures"]?.arrayValue ?? []
                for step in steps {
                    if let name = step["requested"]?.stringValue { #expect(routes.contains { $0["hold"]?.stringValue == name }) }
                    if let name = step["release"]?.stringValue {
                        #expect(routes.contains { $0["hold"]?.stringValue == name && $0["status"]?.integerValue == 200 })
                    }
                }
                _ = try Transcript(parsing: repaired)
            }
        }
        #expect(cutsTried > 500)
    }

    @Test func repairSaysWhatItCannotRead() {
        #expect(throws: TranscriptRepair.RepairError.self) { try TranscriptRepair.repair(Array("not a transcript".utf8)) }
        #expect(throws: TranscriptRepair.RepairError.self) { try TranscriptRepair.repair(Array("{\n  \"description\": \"cut".utf8)) }
    }

    // MARK: Helpers

    static func page(_ number: Int, of name: String) -> JSON {
        [
            "items": .array((0..<12).map { ["id": JSON(number * 100 + $0), "title": JSON("\(name) \(number).\($0)")] }),
            "page": JSON(number),
        ]
    }

    /// The file holds one route per exchange, in the order they started, each with its response.
    static func checkRoutes(_ document: JSON, exchanges: Int) throws {
        let routes = try #require(document["fixtures"]?.arrayValue)
        #expect(routes.count == exchanges)
        for (index, route) in routes.enumerated() {
            #expect(route["hold"]?.stringValue == "exchange-\(index + 1)")
            #expect(route["path"]?.stringValue == (index % 2 == 0 ? "/items" : "/other"))
            #expect(route["status"]?.integerValue == 200)
            #expect(route["body"]?["page"]?.integerValue == index / 2)
        }
        let steps = try #require(document["steps"]?.arrayValue)
        #expect(steps.filter { $0["release"] != nil }.count == exchanges)
    }

    static func names(in directory: String) throws -> [String] {
        guard let handle = opendir(directory) else { return [] }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            names.append(withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) })
        }
        return names
    }
}
