import JSONKit
import Replay
import Testing

@Suite struct TrimmingTests {
    let transcript: JSON = [
        "fixtures": [
            ["path": "/items", "query": ["page": "1"], "times": 1, "hold": "exchange-1", "body": [1]],
            ["path": "/items", "query": ["page": "2"], "times": 1, "hold": "exchange-2", "body": [2]],
            ["path": "/other", "times": 1, "hold": "exchange-3", "body": [3]],
            ["path": "/written", "query": ["page": "1"], "body": [4]],
            ["path": "/written", "query": ["page": "1"], "body": [5]],
        ],
        "steps": [
            ["send": ["id": 1]],
            ["requested": "exchange-1"],
            ["expect": ["id": 1]],
            ["release": "exchange-1"],
            ["expect": ["n": 1]],
            ["send": ["id": 2]],
            ["expect": ["id": 2]],
            ["comment": "after 2"],
            ["requested": "exchange-2"],
            ["release": "exchange-2"],
            ["expect": ["n": 2]],
            ["send": ["id": 3]],
        ],
    ]

    @Test func aCutKeepsWhatTheDaemonSaidBeforeTheClientsNextMove() throws {
        let cut = try Trimming.cut(transcript, throughStep: 5)
        #expect(cut["steps"]?.count == 9)
        #expect(cut["steps"]?[7]?["comment"]?.stringValue == "after 2")
        #expect(throws: Trimming.TrimError.self) { try Trimming.cut(transcript, throughStep: 12) }
    }

    @Test func heldRoutesGoWithTheirStepsAndOtherRoutesWithTheRequestsTheyAnswered() throws {
        let cut = try Trimming.cut(transcript, throughStep: 0)
        let trimmed = Trimming.droppingUnusedFixtures(cut, requested: ["/items?page=1&page_size=4", "/written?page=1", "/_echo/headers"])
        let kept = (trimmed["fixtures"]?.arrayValue ?? []).map { $0["hold"]?.stringValue ?? $0["body"]!.text() }
        #expect(kept == ["exchange-1", "[4]"])
        // Without `times`, the first matching route answers every request.
        let twice = Trimming.droppingUnusedFixtures(cut, requested: ["/written?page=1", "/written?page=1"])
        #expect(twice["fixtures"]?.count == 2)
    }

    @Test func theLayoutIsOneStepPerLineAndParsesBack() throws {
        let text = Trimming.text(transcript)
        #expect(text.split(separator: "\n").count == 2 + 2 * 2 + 5 + 12)
        #expect(try JSON.parse(text) == transcript)
    }
}
