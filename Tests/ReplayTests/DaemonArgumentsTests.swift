import Testing
import TranscriptFormat

/// A transcript's daemonArguments run with the rights of whoever replays it (issue 27,
/// defect 10): only options that name no file pass without --allow-daemon-arguments.
@Suite struct DaemonArgumentsTests {
    @Test func harmlessOptionsPass() {
        #expect(DaemonArguments.refusal([]) == nil)
        #expect(DaemonArguments.refusal(["--max-message-size", "1024", "--no-cache"]) == nil)
        #expect(DaemonArguments.refusal(["--log-level=trace", "--cache-max-bytes", "4096", "--redact", "X-Key"]) == nil)
    }

    @Test func optionsNamingAFileAreRefusedByName() {
        #expect(
            DaemonArguments.refusal(["--no-cache", "--record", "notes.txt"])?
                .hasPrefix("daemonArguments[1]: --record names a file, which the daemon would write with your rights;") == true)
        #expect(DaemonArguments.refusal(["--cache-path", "notes.txt"])?.hasPrefix("daemonArguments[0]: --cache-path names a file") == true)
        #expect(DaemonArguments.refusal(["--cache-path=notes.txt"])?.hasPrefix("daemonArguments[0]: --cache-path names a file") == true)
        #expect(DaemonArguments.refusal(["--record", "x"])?.contains("unless given --allow-daemon-arguments") == true)
    }

    @Test func anythingElseIsRefused() {
        #expect(
            DaemonArguments.refusal(["--frobnicate"])?.hasPrefix(#"daemonArguments[0]: "--frobnicate" is not a harmless option;"#) == true)
        // Not options of `serve`: a subcommand, a stray value, an option's short or bare form.
        #expect(DaemonArguments.refusal(["replay"]) != nil)
        #expect(DaemonArguments.refusal(["--no-cache", "notes.txt"]) != nil)
        #expect(DaemonArguments.refusal(["-h"]) != nil)
        #expect(DaemonArguments.refusal(["--"]) != nil)
        #expect(DaemonArguments.refusal(["--no-cache=yes"])?.hasPrefix("daemonArguments[0]: --no-cache takes no value") == true)
        // A harmless option must not swallow a harmful one as its value.
        #expect(
            DaemonArguments.refusal(["--log-level", "--record", "notes.txt"])?
                .hasPrefix("daemonArguments[0]: --log-level needs a value after it that is not an option") == true)
        #expect(DaemonArguments.refusal(["--redact"]) != nil)
    }

    @Test func theCacheIsChosenByPathOrByNone() {
        #expect(DaemonArguments.chooseCache(["--no-cache"]))
        #expect(DaemonArguments.chooseCache(["--cache-path", "c.sqlite"]))
        #expect(DaemonArguments.chooseCache(["--cache-path=c.sqlite"]))
        #expect(!DaemonArguments.chooseCache(["--log-level", "debug"]))
    }
}
