import JSONKit
@testable import Recording
import Testing

/// A recording scrubs a secret however the text it is in writes it: JSON-escaped (`\/`,
/// `\u00fc`, every character as `\uXXXX`, surrogate pairs) as well as raw (each case was
/// kept readable before the fix).
@Suite struct EscapedSecretTests {
    static let token = "ghp_ab/cd+ef/GH12"

    static func secrets(_ values: String...) -> Secrets {
        var secrets = Secrets(extraNames: [])
        for value in values { secrets.learn(value) }
        return secrets
    }

    @Test func anEscapedSlashIsScrubbed() {
        let secrets = Self.secrets(Self.token)
        #expect(secrets.scrubbed(#"{"token": "ghp_ab\/cd+ef\/GH12"}"#) == #"{"token": "<redacted>"}"#)
    }

    @Test func unicodeEscapesAndSurrogatePairsAreScrubbed() {
        let secrets = Self.secrets("s3cr\u{FC}t-k3y-0042", "tok\u{1F600}en-9f8e7d")
        #expect(secrets.scrubbed(#"key s3cr\u00fct-k3y-0042, s3cr\u00FCt-k3y-0042"#) == "key <redacted>, <redacted>")
        #expect(secrets.scrubbed(#"["tok\ud83d\ude00en-9f8e7d", "tok\uD83D\uDE00en-9f8e7d"]"#) == #"["<redacted>", "<redacted>"]"#)
    }

    @Test func aTokenWrittenEntirelyAsUnicodeEscapesIsScrubbed() {
        let secrets = Self.secrets(Self.token)
        let written = Self.token.utf16.map { unit in
            let digits = String(unit, radix: 16)
            return "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
        }.joined()
        #expect(secrets.scrubbed(#"{"t": ""# + written + #""}"#) == #"{"t": "<redacted>"}"#)
    }

    @Test func rawAndEscapedFormsInOneTextAreBothScrubbed() {
        let secrets = Self.secrets(Self.token)
        #expect(
            secrets.scrubbed(#"ghp_ab/cd+ef/GH12 and "ghp_ab\/cd+ef\/GH12" in <p>text</p>"#)
                == #"<redacted> and "<redacted>" in <p>text</p>"#)
    }

    /// A response body served by the fixture server, and a failed response's `body` quoted in
    /// an error, as the recording writes them.
    @Test func bodiesAndQuotedErrorBodiesAreScrubbed() {
        var rendering = Rendering(secrets: Self.secrets(Self.token))
        rendering.urls.origins = ["http://api.example.com:8080"]
        #expect(rendering.renderBodyText(#"{"seen": "ghp_ab\/cd+ef\/GH12"}"#) == #"{"seen": "<redacted>"}"#)
        let error: JSON = [
            "params": [
                "error": [
                    "kind": "http", "message": "HTTP status 401", "url": "http://api.example.com:8080/v1/x",
                    "body": #"{"token": "ghp_ab\u002fcd+ef\u002fGH12"}"#,
                ]
            ]
        ]
        let rendered = rendering.render(error, role: .expected)
        #expect(rendered["params"]?["error"]?["body"]?.stringValue == #"{"token": "<redacted>"}"#)
    }

    /// Recordings keep their threshold: a value under four characters is redacted where it
    /// stands (a named header) but not scrubbed from other text, where it would erase
    /// ordinary words; escapes do not change that.
    @Test func shortValuesStillAreNotScrubbedFromOtherText() {
        let secrets = Self.secrets("abc", Self.token)
        #expect(secrets.scrubbed(#"abc \u0061bc ghp_ab\/cd+ef\/GH12"#) == #"abc \u0061bc <redacted>"#)
    }
}
