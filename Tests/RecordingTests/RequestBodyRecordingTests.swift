import DataSources
import JSONKit
@testable import Recording
import Replay
import Testing

/// A POST's route holds its method and body, secrets out, page values in: what the replayed
/// daemon sends from the recorded `send` steps, so the route matches it.
@Suite struct RequestBodyRecordingTests {
    @Test func aPostsRouteHoldsItsBodyWithSecretsRedactedAndCursorsKept() throws {
        let session = try SyntheticSession()
        session.request("initialize")
        let variables: JSON = ["token": "var-tok-31337", "login": "octocat", "viewer": "hdr-tok-8c1f2e77", "first": 2]
        let graphql: JSON = ["query": "query($first: Int) { a }", "variables": variables, "connection": "a"]
        session.request(
            "createSource",
            [
                "name": "g", "kind": "paginated", "graphql": graphql,
                "remoteConfiguration": ["baseURL": "http://api.example.test:8080", "headers": ["Authorization": "hdr-tok-8c1f2e77"]],
            ])
        let body: JSON = [
            "query": "query($first: Int) { a }",
            "variables": ["token": "var-tok-31337", "login": "octocat", "viewer": "hdr-tok-8c1f2e77", "first": 2, "after": "Y3Vyc29yOjI="],
            "nested": [["password": 12]],
        ]
        var exchange = -1
        session.request("fetchData", ["source": "g"], result: ["isFetching": true]) {
            exchange = session.startExchange("/graphql", posting: body, headers: [("Authorization", "hdr-tok-8c1f2e77")])
        }
        session.complete(exchange, body: ["data": ["a": ["nodes": []]]])
        session.handleCompletion(notifying: "loaded")
        session.recorder.finish(exitStatus: 0)

        let document = try session.document()
        let route = try #require(document["fixtures"]?[0])
        #expect(route["method"]?.stringValue == "POST")
        let expected: JSON = [
            "query": "query($first: Int) { a }",
            "variables": ["token": "<redacted>", "login": "octocat", "viewer": "<redacted>", "first": 2, "after": "Y3Vyc29yOjI="],
            "nested": [["password": "<redacted>"]],
        ]
        #expect(route["requestBody"] == expected)
        // The source's own variables, as the send step holds them: the daemon replaying it sends
        // the body the route holds.
        let sent = try #require(document["steps"]?.arrayValue?.compactMap { $0["send"] }.first { $0["method"] == "createSource" })
        #expect(
            sent["params"]?["graphql"]?["variables"] == ["token": "<redacted>", "login": "octocat", "viewer": "<redacted>", "first": 2])
        // A `$` in the query is the query's, not a pattern: written as is.
        #expect(sent["params"]?["graphql"]?["query"]?.stringValue == "query($first: Int) { a }")
        let text = String(decoding: try session.bytes(), as: UTF8.self)
        for secret in ["var-tok-31337", "hdr-tok-8c1f2e77"] { #expect(!text.contains(secret), "\(secret) in the recording") }
    }

    @Test func aGetsRouteNamesNeitherMethodNorBody() throws {
        let session = try SyntheticSession()
        session.request("initialize")
        var exchange = -1
        session.request("fetchData", ["source": "r"], result: ["isFetching": true]) { exchange = session.startExchange("/items?page=1") }
        session.complete(exchange, body: ["items": []])
        session.handleCompletion(notifying: "loaded")
        session.recorder.finish(exitStatus: 0)
        let route = try #require(try session.document()["fixtures"]?[0])
        #expect(route.objectKeys == ["path", "query", "times", "hold", "status", "headers", "body"])
    }

    @Test func secretMembersAreRedactedByTheRecordersRuleAtAnyDepth() {
        let rendering = Rendering(secrets: Secrets(extraNames: ["tenant"]))
        let body: JSON = ["a": [["api_key": "k", "Tenant": "t", "cursor": "c"]], "page_size": 5, "session_id": 1]
        #expect(
            rendering.redactingSecretMembers(body)
                == ["a": [["api_key": "<redacted>", "Tenant": "<redacted>", "cursor": "c"]], "page_size": 5, "session_id": "<redacted>"])
        #expect(Rendering.secretMemberValues(body, isSecret: rendering.secrets.isSecret(name:)).sorted() == ["1", "k", "t"])
    }

    @Test func trimmingKeepsTheRouteWhoseBodyARequestMatched() throws {
        let document = try JSON.parse(
            #"""
            {"fixtures": [
              {"path": "/search", "method": "POST", "requestBody": {"genre": "poetry"}, "body": []},
              {"path": "/search", "method": "POST", "requestBody": {"genre": "drama"}, "body": []},
              {"path": "/search", "body": []}],
             "steps": []}
            """#)
        let drama = FixtureServer.ReceivedRequest(method: "POST", target: "/search", headers: [], body: Array(#"{"genre":"drama"}"#.utf8))
        let trimmed = Trimming.droppingUnusedFixtures(document, requested: [drama])
        #expect(trimmed["fixtures"] == [["path": "/search", "method": "POST", "requestBody": ["genre": "drama"], "body": []]])
        // A GET is answered by the route that names no body.
        let get = Trimming.droppingUnusedFixtures(document, requested: ["/search"])
        #expect(get["fixtures"] == [["path": "/search", "body": []]])
    }
}
