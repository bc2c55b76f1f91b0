@testable import DataSources
import JSONKit
import Testing

/// An HTTP error's `body` and `serverMessage` never show a secret: not as written, not
/// JSON-escaped (`\/`, `\u00fc`, every character as `\uXXXX`, surrogate pairs), not cut by
/// the excerpt's limit, whatever its length (each case was readable before the fix).
@Suite struct SecretRedactionTests {
    static let token = "ghp_ab/cd+ef/GH12"

    static func failure(_ body: String, secrets: [String], contentType: String = "application/json") -> FetchError {
        ResponseDecoding.httpFailure(
            RemoteResponse(url: "http://api.invalid/x", status: 401, contentType: contentType, body: Array(body.utf8)),
            secrets: secrets)
    }

    /// `text` with JSON's escapes decoded wherever they stand (as a reader, or a client that
    /// parses the string, would read them).
    static func unescaped(_ text: String) -> [UInt16] {
        var units: [UInt16] = [], bytes = Array(text.utf8)[...]
        while let byte = bytes.first {
            if byte == UInt8(ascii: "\\"), bytes.count >= 2 {
                let next = bytes[bytes.startIndex + 1]
                let simple: [UInt8: UInt16] = [
                    UInt8(ascii: "\""): 0x22, UInt8(ascii: "\\"): 0x5C, UInt8(ascii: "/"): 0x2F, UInt8(ascii: "b"): 8,
                    UInt8(ascii: "f"): 12, UInt8(ascii: "n"): 10, UInt8(ascii: "r"): 13, UInt8(ascii: "t"): 9,
                ]
                if let unit = simple[next] {
                    units.append(unit)
                    bytes = bytes.dropFirst(2)
                    continue
                }
                if next == UInt8(ascii: "u"), bytes.count >= 6,
                    let unit = UInt16(String(decoding: bytes.dropFirst(2).prefix(4), as: UTF8.self), radix: 16)
                {
                    units.append(unit)
                    bytes = bytes.dropFirst(6)
                    continue
                }
            }
            let length = byte < 0x80 ? 1 : byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : 4
            units += String(decoding: bytes.prefix(length), as: UTF8.self).utf16
            bytes = bytes.dropFirst(length)
        }
        return units
    }

    static func holds(_ haystack: [UInt16], _ needle: [UInt16]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    /// Whether `secret` can be read in `text`: as written, once its escapes are decoded, or
    /// as a start cut by the end of `text` (one character or more).
    static func shows(_ secret: String, in text: String?) -> Bool {
        guard let text else { return false }
        let secretUnits = Array(secret.utf16)
        for view in [Array(text.utf16), unescaped(text)] {
            if holds(view, secretUnits) { return true }
            if (1..<secretUnits.count).contains(where: { view.suffix($0).elementsEqual(secretUnits.prefix($0)) }) { return true }
        }
        return false
    }

    @Test func anEscapedSlashDoesNotHideTheToken() {
        let error = Self.failure(#"{"message": "Bad credentials", "token": "ghp_ab\/cd+ef\/GH12"}"#, secrets: [Self.token])
        #expect(!Self.shows(Self.token, in: error.body), "\(error.body ?? "")")
        #expect(error.body == #"{"message": "Bad credentials", "token": "<redacted>"}"#)
        #expect(error.serverMessage == "Bad credentials")
    }

    @Test func aUnicodeEscapeDoesNotHideTheToken() {
        let secret = "s3cr\u{FC}t-k3y-0042"
        let error = Self.failure(#"{"detail": "key s3cr\u00fct-k3y-0042 is not valid"}"#, secrets: [secret])
        #expect(!Self.shows(secret, in: error.body), "\(error.body ?? "")")
        #expect(error.body == #"{"detail": "key <redacted> is not valid"}"#)
        #expect(error.serverMessage == "key <redacted> is not valid")
    }

    @Test func aTokenWrittenEntirelyAsUnicodeEscapesIsRedacted() {
        let written = Self.token.utf16.map { unit in
            let digits = String(unit, radix: 16)
            return "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
        }.joined()
        for hex in [written, written.uppercased().replacing("\\U", with: "\\u")] {
            let error = Self.failure(#"{"error": {"message": "denied", "token": ""# + hex + #""}}"#, secrets: [Self.token])
            #expect(!Self.shows(Self.token, in: error.body), "\(error.body ?? "")")
            #expect(error.body == #"{"error": {"message": "denied", "token": "<redacted>"}}"#)
        }
    }

    @Test func aSurrogatePairDoesNotHideTheToken() {
        let secret = "tok\u{1F600}en-9f8e7d"
        for written in [#"tok\ud83d\ude00en-9f8e7d"#, #"tok\uD83D\uDE00en-9f8e7d"#, "tok\u{1F600}en-9f8e7d"] {
            let error = Self.failure(#"{"message": "echo: "# + written + #""}"#, secrets: [secret])
            #expect(!Self.shows(secret, in: error.body), "\(error.body ?? "")")
            #expect(error.body == #"{"message": "echo: <redacted>"}"#)
            #expect(error.serverMessage == "echo: <redacted>")
        }
    }

    @Test func aTokenAcrossTheBodyLimitShowsNoneOfItsCharacters() {
        let limit = ResponseDecoding.bodyExcerptLimit
        for start in [limit - 12, limit - 1, limit - 16, limit - 2] {
            let prefix = #"{"pad": ""# + String(repeating: "x", count: start - 9)
            for written in [Self.token, #"ghp_ab\/cd+ef\/GH12"#] {
                let body = prefix + written + #"", "more": ""# + String(repeating: "y", count: 100) + #""}"#
                let error = Self.failure(body, secrets: [Self.token])
                #expect(!Self.shows(Self.token, in: error.body), "start \(start): \(error.body?.suffix(40) ?? "")")
                #expect(error.body?.hasPrefix(prefix) == true)
            }
        }
    }

    @Test func aTokenAcrossTheServerMessageLimitShowsNoneOfItsCharacters() {
        for start in [488, 490, 499] {
            let message = String(repeating: "m", count: start) + Self.token + " was refused"
            let error = Self.failure(#"{"message": ""# + message.replacing("/", with: "\\/") + #""}"#, secrets: [Self.token])
            #expect(!Self.shows(Self.token, in: error.serverMessage), "start \(start): \(error.serverMessage?.suffix(30) ?? "")")
            #expect(error.serverMessage?.hasPrefix(String(repeating: "m", count: start)) == true)
        }
    }

    @Test(arguments: ["Q", "Q7", "Q7z"])
    func aSecretOfOneToThreeCharactersIsRedactedToo(_ secret: String) {
        let error = Self.failure(#"{"message": "key "# + secret + #" rejected", "key": ""# + secret + #""}"#, secrets: [secret])
        #expect(!Self.shows(secret, in: error.body), "\(error.body ?? "")")
        #expect(!Self.shows(secret, in: error.serverMessage), "\(error.serverMessage ?? "")")
        #expect(error.serverMessage == "key <redacted> rejected")
    }

    @Test func aSecretWrittenBothRawAndEscapedIsRedactedInBothPlaces() {
        let body = #"{"a": "ghp_ab/cd+ef/GH12", "b": "ghp_ab\/cd+ef\/GH12", "c": "ghp_ab\u002fcd+ef/GH12"}"#
        let error = Self.failure(body, secrets: [Self.token])
        #expect(!Self.shows(Self.token, in: error.body), "\(error.body ?? "")")
        #expect(error.body == #"{"a": "<redacted>", "b": "<redacted>", "c": "<redacted>"}"#)
    }

    @Test func textThatIsNotJSONIsRedactedAsWrittenEscapedAndCut() {
        let html =
            #"<html><script>var token = "ghp_ab\/cd+ef\/GH12";</script> raw ghp_ab/cd+ef/GH12 "#
            + String(repeating: "z", count: 1950) + " end ghp_ab/cd+ef/GH12"
        let error = Self.failure(html, secrets: [Self.token], contentType: "text/html")
        #expect(!Self.shows(Self.token, in: error.body), "\(error.body ?? "")")
        #expect(error.body?.hasPrefix(#"<html><script>var token = "<redacted>";</script> raw <redacted> zzz"#) == true)
        #expect(error.serverMessage == nil)
        // Text with no secret in it is the body as it came.
        #expect(Self.failure("plain \\/ text", secrets: [Self.token], contentType: "text/plain").body == "plain \\/ text")
    }

    /// `describeSource`'s `lastError` is the error `failedWithError` carried: redacted the same.
    @Test func describeSourceShowsTheSameRedactedError() throws {
        let loader = OneResponseLoader(
            status: 401, body: #"{"message": "bad token ghp_ab\/cd+ef\/GH12", "seen": "ghp_ab\u002Fcd+ef\u002FGH12"}"#)
        let source = RemoteDataSource(
            name: "r", identity: Identity(key: nil),
            configuration: RemoteConfiguration(baseURL: "http://api.invalid", headers: [("X-Api-Token", Self.token)], apiPath: "items"),
            loader: loader)
        source.fetchData()
        loader.answer()
        guard case .remote(let state) = source.describe().state else {
            Issue.record("not a remote source's state")
            return
        }
        let error = try #require(state.lastError)
        #expect(error.kind == .http)
        #expect(!Self.shows(Self.token, in: error.body), "\(error.body ?? "")")
        #expect(!Self.shows(Self.token, in: error.serverMessage), "\(error.serverMessage ?? "")")
        #expect(error.body == #"{"message": "bad token <redacted>", "seen": "<redacted>"}"#)
        #expect(error.serverMessage == "bad token <redacted>")
    }
}

/// Answers the one request it is given when told to, with a canned response.
final class OneResponseLoader: RemoteLoading {
    let status: Int
    let body: String
    private var pending: (() -> Void)?

    init(status: Int, body: String) {
        self.status = status
        self.body = body
    }

    func load(
        _ request: RemoteRequest, decode: @escaping @Sendable (RemoteResponse) -> Result<DecodedResponse, FetchError>,
        completion: @escaping (Result<DecodedResponse, FetchError>) -> Void
    ) -> FetchHandle {
        let response = RemoteResponse(url: request.url, status: status, contentType: "application/json", body: Array(body.utf8))
        pending = { completion(decode(response)) }
        return FetchHandle()
    }

    func answer() {
        pending?()
        pending = nil
    }
}
