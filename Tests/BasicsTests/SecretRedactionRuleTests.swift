import Basics
import Testing

/// `SecretRedaction`'s rules one at a time (the HTTP error's and the recording's cases are in
/// DataSourcesTests and RecordingTests).
@Suite struct SecretRedactionRuleTests {
    func redacted(_ text: String, _ secrets: [String], endsCut: Bool = false) -> String {
        SecretRedaction.redacted(text, secrets: secrets, endsCut: endsCut)
    }

    @Test func overlappingAndTouchingSecretsBecomeOnePlaceholder() {
        #expect(redacted("[abcdef]", ["abcd", "cdef"]) == "[<redacted>]")
        #expect(redacted("[abcdef]", ["cdef", "abcd"]) == "[<redacted>]")
        #expect(redacted("[abcdefgh]", ["abcd", "efgh"]) == "[<redacted>]")
        #expect(redacted("aaaa", ["aa"]) == "<redacted>")
        #expect(redacted("x ab y ab", ["ab"]) == "x <redacted> y <redacted>")
        #expect(redacted("abc", [""]) == "abc", "an empty secret is no secret")
    }

    @Test func escapesAreDecodedInsideAndOutsideStrings() {
        #expect(redacted(#"{"t": "ab\/cd"}"#, ["ab/cd"]) == #"{"t": "<redacted>"}"#)
        #expect(redacted(#"plain ab\/cd text"#, ["ab/cd"]) == "plain <redacted> text")
        #expect(redacted(#""a\"b\\c\n""#, ["a\"b\\c\n"]) == #""<redacted>""#)
        #expect(redacted(#""\u0041\u00e9\uD83D\ude00""#, ["A\u{E9}\u{1F600}"]) == #""<redacted>""#)
        // Not an escape: the backslash as written.
        #expect(redacted(#"\q"#, ["q"]) == #"\<redacted>"#)
    }

    @Test func aMatchAsWrittenTakesTheWholeEscapeItTouches() {
        // `\n\` as written ends on the first backslash of `\\`: leaving the second one would
        // make `\u0061b` an escape spelling "ab", which the text did not spell.
        #expect(redacted(#"\n\\u0061b"#, [#"\n\"#, "ab"]) == "<redacted>u0061b")
    }

    @Test func aCombiningMarkAfterASecretDoesNotHideIt() {
        #expect(redacted("tok\u{301}en", ["tok"]) == "<redacted>\u{301}en")
    }

    @Test func invalidUTF8AroundASecretStaysAsItWas() {
        let bytes: [UInt8] = [0xFF, 0x61, 0x62, 0x63, 0xE2, 0x82]
        #expect(SecretRedaction.redacted(bytes, secrets: ["abc"]) == [0xFF] + Array("<redacted>".utf8) + [0xE2, 0x82])
    }

    @Test func aCutTextLosesTheStartOfASecretAtItsEnd() {
        #expect(redacted("x ghp_a", ["ghp_abc"], endsCut: true) == "x <redacted>")
        #expect(redacted("x ghp_a", ["ghp_abc"]) == "x ghp_a", "a text that is not cut ends where it ends")
        #expect(redacted(#"{"t": "ghp_ab\/c"#, ["ghp_ab/cd"], endsCut: true) == #"{"t": "<redacted>"#)
        // A surrogate pair cut after its first half.
        #expect(redacted(#""tok\ud83d"#, ["tok\u{1F600}en"], endsCut: true) == #""<redacted>"#)
        // The end is the start of a secret only by its last characters.
        #expect(redacted("gg", ["gh"], endsCut: true) == "g<redacted>")
    }

    @Test func anEscapeCutShortIsRedactedWhenItCouldGoOnWithASecret() {
        // `\u00` could become `\u002f`, the `/` of "ab/c", and follows its start.
        #expect(redacted(#"x ab\u00"#, ["ab/c"], endsCut: true) == "x <redacted>")
        // `\u00` could be the first character of "/x".
        #expect(redacted(#"x \u00"#, ["/x"], endsCut: true) == "x <redacted>")
        #expect(redacted(#"x \"#, ["/x"], endsCut: true) == "x <redacted>")
        // It cannot become the € (U+20AC) of "€uro": shown as it is.
        #expect(redacted(#"x \u00"#, ["\u{20AC}uro"], endsCut: true) == #"x \u00"#)
        #expect(redacted(#"x \u20"#, ["\u{20AC}uro"], endsCut: true) == "x <redacted>")
        // The longest start goes, even when the escape cannot continue it but could continue a
        // shorter one ("ab" then `\u0061`): none of "abab" stays.
        #expect(redacted(#""abab\u00"#, ["abab\u{20AC}"], endsCut: true) == #""<redacted>"#)
        // As written: five backslashes of a secret of eight, then `\u00` (which decoded pairs
        // with the fifth backslash).
        let backslashes = String(repeating: "\\", count: 5)
        #expect(redacted(backslashes + #"\u00"#, [String(repeating: "\\", count: 8)], endsCut: true) == "<redacted>")
        // A character cut short (the first two bytes of €) could go on with a secret too.
        let cutEuro = Array("x ab".utf8) + [0xE2, 0x82]
        #expect(SecretRedaction.redacted(cutEuro, secrets: ["ab\u{20AC}"], endsCut: true) == Array("x <redacted>".utf8))
        #expect(SecretRedaction.redacted(cutEuro, secrets: ["\u{20AC}"], endsCut: true) == Array("x ab<redacted>".utf8))
    }

    @Test func anExcerptRedactsBeforeItCutsAndKeepsAPlaceholderWhole() {
        let text = Array((String(repeating: "a", count: 10) + "SECRET" + "bbbb").utf8)
        #expect(
            String(decoding: SecretRedaction.excerpt(of: text, byteLimit: 12, secrets: ["SECRET"]), as: UTF8.self) == "aaaaaaaaaa<redacted>"
        )
        #expect(String(decoding: SecretRedaction.excerpt(of: text, byteLimit: 9, secrets: ["SECRET"]), as: UTF8.self) == "aaaaaaaaa")
        // Cut between two characters, then the start of a secret at the end goes.
        let accented = Array("aaaa\u{E9}\u{E9}S".utf8)
        #expect(
            String(decoding: SecretRedaction.excerpt(of: accented, byteLimit: 7, secrets: ["\u{E9}x"]), as: UTF8.self) == "aaaa<redacted>")
        #expect(SecretRedaction.excerpt(of: "mmmm SECRET", characterLimit: 7, secrets: ["SECRET"]) == "mmmm <redacted>")
        #expect(SecretRedaction.excerpt(of: "mmmm SECRET", characterLimit: 4, secrets: ["SECRET"]) == "mmmm")
        #expect(SecretRedaction.excerpt(of: "mmmm SECRET", characterLimit: 4, secrets: []) == "mmmm")
    }
}
