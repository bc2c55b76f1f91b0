import JSONKit
@testable import Recording
import Testing

/// What a recording writes in place of secrets and of the APIs' addresses.
@Suite struct RedactionTests {
    func rendering(origins: Set<String> = ["http://api.example.com:8080"], redacting names: [String] = []) -> Rendering {
        var rendering = Rendering(secrets: Secrets(extraNames: names))
        rendering.urls.origins = origins
        return rendering
    }

    @Test func credentialsInURLsAreDroppedAndTheOriginBecomesTheFixtureServer() {
        var rendering = rendering()
        let message: JSON = ["params": ["remoteConfiguration": ["baseURL": "http://alice:hunter2secret@api.example.com:8080/v2"]]]
        let learned = rendering.learn(from: message)
        #expect(learned)
        let sent = rendering.render(message, role: .sent)
        #expect(sent["params"]?["remoteConfiguration"]?["baseURL"]?.stringValue == "${fixtures}/v2")
        // Learned, the password is scrubbed wherever else it shows up, even in a row.
        let echoed = rendering.render(["objects": ["your password is hunter2secret"]], role: .expected)
        #expect(echoed.text() == #"{"objects":["your password is <redacted>"]}"#)
    }

    @Test func secretHeadersAndQueryParametersAreRedactedByNameAndTheirValuesEverywhere() {
        var rendering = rendering(redacting: ["X-Tenant", "shard"])
        let message: JSON = [
            "params": [
                "remoteConfiguration": [
                    "headers": [
                        "Authorization": "Bearer tok-8c1f2e77", "Cookie": "sid=abcdef123456", "X-Tenant": "acme-corp",
                        "Accept": "text/json",
                    ]
                ],
                "queryParameters": ["token": "qtok-5e6f7a", "shard": "eu-west-9", "page_size": 4],
                "apiPath": "/v1/books?api_key=k-0042xyz&sort=title",
            ]
        ]
        _ = rendering.learn(from: message)
        let text = rendering.render(message, role: .sent).text()
        for secret in ["tok-8c1f2e77", "abcdef123456", "acme-corp", "qtok-5e6f7a", "eu-west-9", "k-0042xyz"] {
            #expect(!text.contains(secret), "\(secret) in \(text)")
        }
        #expect(text.contains(#""Accept":"text/json""#))
        #expect(text.contains(#""page_size":4"#))
        #expect(text.contains(#""apiPath":"/v1/books?api_key=%3Credacted%3E&sort=title""#))
        // The daemon's error URL for that request, and a response body echoing the header.
        let error: JSON = [
            "params": [
                "error": [
                    "kind": "http", "message": "HTTP status 500", "status": 500,
                    "url": "http://api.example.com:8080/v1/books?api_key=k-0042xyz&token=qtok-5e6f7a&page=1",
                ]
            ]
        ]
        #expect(
            rendering.render(error, role: .expected)["params"]?["error"]?["url"]?.stringValue
                == "${fixtures}/v1/books?api_key=%3Credacted%3E&token=%3Credacted%3E&page=1")
        #expect(rendering.renderBodyText(#"{"seen":"Bearer tok-8c1f2e77"}"#) == #"{"seen":"<redacted>"}"#)
    }

    @Test func rowsKeepTheirOriginsBecauseReplayServesBodiesAsRecorded() {
        let rendering = rendering()
        let change: JSON = [
            "params": [
                "values": ["inserted": [["link": "http://api.example.com:8080/books/1"]]],
                "error": [
                    "kind": "http", "message": "HTTP status 404", "url": "http://api.example.com:8080/v1/x",
                    "body": "see http://api.example.com:8080/help",
                ],
            ]
        ]
        let pattern = rendering.render(change, role: .expected)
        #expect(pattern["params"]?["values"]?["inserted"]?[0]?["link"]?.stringValue == "http://api.example.com:8080/books/1")
        #expect(pattern["params"]?["error"]?["url"]?.stringValue == "${fixtures}/v1/x")
        #expect(pattern["params"]?["error"]?["body"]?.stringValue == "see http://api.example.com:8080/help")
    }

    @Test func expectationsEscapeDollarsAndLoosenWhatDiffersBetweenRuns() {
        let rendering = rendering()
        let message: JSON = [
            "params": [
                "objects": ["$9.99", "plain"],
                "error": [
                    "kind": "transport", "message": "connection refused (127.0.0.1:8080)", "url": "http://api.example.com:8080/v1/x",
                ],
            ]
        ]
        let pattern = rendering.render(message, role: .expected)
        #expect(pattern["params"]?["objects"]?.text() == #"["$$9.99","plain"]"#)
        #expect(pattern["params"]?["error"]?.text() == #"{"$partial":true,"kind":"transport","url":"${fixtures}/v1/x"}"#)
        // Sent messages are not patterns: a dollar stays a dollar.
        #expect(rendering.render(message, role: .sent)["params"]?["objects"]?.text() == #"["$9.99","plain"]"#)
    }

    @Test func shortValuesAreRedactedWhereTheyStandButNotScrubbedFromOtherText() {
        var secrets = Secrets(extraNames: [])
        let learnedShort = secrets.learn("abc")
        let learnedLong = secrets.learn("Bearer a-long-token-value")
        #expect(!learnedShort)
        #expect(learnedLong)
        #expect(secrets.scrubbed("abc a-long-token-value") == "abc <redacted>")
        #expect(Base64.encode(Array("alice:pw".utf8)) == "YWxpY2U6cHc=")
        #expect(Base64.encode(Array("ab".utf8)) == "YWI=")
    }
}
