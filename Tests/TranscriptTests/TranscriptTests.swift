import Foundation
import Replay
import Testing

/// Replays every transcript under Tests/Transcripts against the built daemon.
@Suite struct TranscriptTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Paths relative to the repository: the test transcripts and the shipped examples.
    static let files: [String] = ["Tests/Transcripts", "Examples"].flatMap { folder in
        let names = (try? FileManager.default.contentsOfDirectory(atPath: repository.appendingPathComponent(folder).path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted().map { "\(folder)/\($0)" }
    }

    /// The daemon built beside this test bundle (SwiftPM builds it: the test target depends on it).
    static let daemon: String = {
        let runner = URL(fileURLWithPath: Replayer.currentExecutable())
        return runner.deletingLastPathComponent().appendingPathComponent("datasourced").path
    }()

    @Test func transcriptsArePresent() {
        #expect(TranscriptTests.files.count >= 10, "expected the transcripts under \(TranscriptTests.repository.path)")
        #expect(FileManager.default.isExecutableFile(atPath: TranscriptTests.daemon), "no daemon at \(TranscriptTests.daemon)")
    }

    @Test(arguments: TranscriptTests.files)
    func replay(_ name: String) {
        let path = TranscriptTests.repository.appendingPathComponent(name).path
        switch Replayer(daemonCommand: [TranscriptTests.daemon, "serve"]).replay(file: path) {
        case .passed:
            break
        case .failed(let report):
            Issue.record("\(name) failed:\n\(report)")
        }
    }
}
