import Foundation
import Replay
import Testing

/// Replays every transcript under Tests/Transcripts against the built daemon.
@Suite struct TranscriptTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Transcripts")

    static let files: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted()
    }()

    /// The daemon built beside this test bundle (SwiftPM builds it: the test target depends on it).
    static let daemon: String = {
        let runner = URL(fileURLWithPath: Replayer.currentExecutable())
        return runner.deletingLastPathComponent().appendingPathComponent("datasourced").path
    }()

    @Test func transcriptsArePresent() {
        #expect(TranscriptTests.files.count >= 10, "expected the transcripts in \(TranscriptTests.directory.path)")
        #expect(FileManager.default.isExecutableFile(atPath: TranscriptTests.daemon), "no daemon at \(TranscriptTests.daemon)")
    }

    @Test(arguments: TranscriptTests.files)
    func replay(_ name: String) {
        let path = TranscriptTests.directory.appendingPathComponent(name).path
        switch Replayer(daemonCommand: [TranscriptTests.daemon, "serve"]).replay(file: path) {
        case .passed:
            break
        case .failed(let report):
            Issue.record("\(name) failed:\n\(report)")
        }
    }
}
