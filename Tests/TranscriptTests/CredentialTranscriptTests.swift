#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Replay
import Testing

/// Issue 28: header values from the daemon's environment and from a file under `~`, through a
/// spawned daemon. A transcript cannot set the daemon's environment, so this one
/// (Tests/Transcripts/environment/github-token.json) is replayed here, with `env` setting
/// `GITHUB_TOKEN` and `HOME` for the daemon, and not among those every replay runs.
@Suite struct CredentialTranscriptTests {
    static let transcript = TranscriptTests.repository.appendingPathComponent("Tests/Transcripts/environment/github-token.json").path
    static let token = "ghp_transcriptToken0123456789"

    /// A home directory holding `.config/datasourced-test/workspace`, removed afterwards.
    private static func withHome(_ body: (String) -> Void) throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent(
            "datasourced-home-\(getpid())-\(UInt64.random(in: 0...UInt64.max))")
        let config = home.appendingPathComponent(".config/datasourced-test")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: home) }
        try Data("ws-42\n".utf8).write(to: config.appendingPathComponent("workspace"))
        body(home.path)
    }

    /// With `--allow-credentials-from-config`: the fixture server's port is chosen as the replay
    /// starts, so no allowance could name its origin beforehand.
    @Test func theTokenComesFromTheEnvironmentAndTheWorkspaceFromAFile() throws {
        try Self.withHome { home in
            let command = [
                "/usr/bin/env", "HOME=\(home)", "GITHUB_TOKEN=\(Self.token)", TranscriptTests.daemon, "serve",
                "--allow-credentials-from-config",
            ]
            switch Replayer(daemonCommand: command).replay(file: Self.transcript) {
            case .passed: break
            case .failed(let report): Issue.record("github-token.json failed:\n\(report)")
            }
        }
    }

    /// Without an allowance (and without the switch) nothing is sent: the first load fails with
    /// kind credentialNotAllowed, naming the variable and the fixture server's origin.
    @Test func withoutAnAllowanceTheTokenIsNotSent() throws {
        try Self.withHome { home in
            let command = [
                "/usr/bin/env", "-u", "XDG_CONFIG_HOME", "HOME=\(home)", "GITHUB_TOKEN=\(Self.token)", TranscriptTests.daemon, "serve",
            ]
            switch Replayer(daemonCommand: command).replay(file: Self.transcript) {
            case .passed:
                Issue.record("github-token.json passed without an allowance")
            case .failed(let report):
                #expect(report.contains("credentialNotAllowed"), "\(report)")
                #expect(report.contains("the environment variable GITHUB_TOKEN is not allowed to go to http://127.0.0.1:"), "\(report)")
                #expect(!report.contains(Self.token), "the token is never shown")
            }
        }
    }

    /// Without the variable the same session is refused at its `createSource`, naming it: the
    /// transcript passes above because the value came from the environment.
    @Test func withoutTheVariableCreateSourceIsRefused() throws {
        try Self.withHome { home in
            let command = ["/usr/bin/env", "-u", "GITHUB_TOKEN", "HOME=\(home)", TranscriptTests.daemon, "serve"]
            switch Replayer(daemonCommand: command).replay(file: Self.transcript) {
            case .passed:
                Issue.record("github-token.json passed without GITHUB_TOKEN")
            case .failed(let report):
                #expect(report.contains("the environment variable GITHUB_TOKEN is not set"), "\(report)")
            }
        }
    }
}
