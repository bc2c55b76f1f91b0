import Foundation
import JSONKit
import Replay
import Testing

/// Transcripts under Tests/TranscriptsThatFail must fail, each for the reason its
/// `expectedFailure` names: proof that a mismatch is caught and reported where it is.
@Suite struct FailingTranscriptTests {
    static let folder = "Tests/TranscriptsThatFail"

    static let files: [String] = {
        let names =
            (try? FileManager.default.contentsOfDirectory(
                atPath: TranscriptTests.repository.appendingPathComponent(folder).path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted().map { "\(folder)/\($0)" }
    }()

    @Test func failingTranscriptsArePresent() {
        #expect(FailingTranscriptTests.files.count >= 10)
    }

    @Test(arguments: FailingTranscriptTests.files)
    func failsForTheStatedReason(_ name: String) throws {
        let path = TranscriptTests.repository.appendingPathComponent(name).path
        let document = try JSON.parse(readFileBytes(path))
        guard let reason = document["expectedFailure"]?.stringValue, !reason.isEmpty else {
            Issue.record("\(name) has no \"expectedFailure\" text")
            return
        }
        switch Replayer(daemonCommand: [TranscriptTests.daemon, "serve"]).replay(file: path) {
        case .passed:
            Issue.record("\(name) passed, but it must fail with \"\(reason)\"")
        case .failed(let report):
            #expect(report.contains(reason), "\(name) failed for another reason than \"\(reason)\":\n\(report)")
        }
    }
}
