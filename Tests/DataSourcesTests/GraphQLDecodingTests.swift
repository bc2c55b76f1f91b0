@testable import DataSources
import JSONKit
import Testing

/// A GraphQL response read as a Relay connection: rows from edges or nodes, errors with and
/// without data, and the shapes that are not a connection.
@Suite struct GraphQLDecodingTests {
    static let configuration: RemoteConfiguration = {
        var configuration = RemoteConfiguration(baseURL: "http://api.invalid", apiPath: "/graphql")
        configuration.graphql = GraphQLQuery(query: "query { books { edges { node { id } } } }", connection: JSONKeyPath("shelf.books"))
        configuration.method = .post
        return configuration
    }()

    static func decode(_ body: String, headers: [(name: String, value: String)] = []) -> Result<DecodedResponse, FetchError> {
        ResponseDecoding.decode(
            RemoteResponse(
                url: "http://api.invalid/graphql", status: 200, headers: [("Content-Type", "application/json")] + headers,
                body: Array(body.utf8)),
            configuration: configuration, url: "http://api.invalid/graphql")
    }

    @Test func rowsAreTheNodesOfTheEdgesAndTheRestIsMetadata() throws {
        let page = try Self.decode(
            #"{"data": {"shelf": {"books": {"totalCount": 3, "pageInfo": {"endCursor": "c2", "hasNextPage": true}, "edges": [{"cursor": "c1", "node": {"id": 1}}, {"cursor": "x", "node": null}, {"cursor": "c2", "node": {"id": 2}}]}}}}"#
        ).get()
        #expect(page.objects == [["id": 1], ["id": 2]], "an edge without a node is skipped")
        #expect(page.document?.value(at: JSONKeyPath("data.shelf.books.pageInfo.endCursor")) == "c2")
        #expect(page.document?.value(at: JSONKeyPath("data.shelf.books.totalCount")) == 3)
        #expect(page.document?.value(at: JSONKeyPath("data.shelf.books.edges")) == nil, "the list is not kept twice")
        #expect(page.warning == nil)
    }

    @Test func nodesWithoutEdgesAreTheRows() throws {
        let page = try Self.decode(#"{"data": {"shelf": {"books": {"nodes": [{"id": 7}, {"id": 8}]}}}}"#).get()
        #expect(page.objects == [["id": 7], ["id": 8]])
    }

    @Test func errorsWithoutTheConnectionFailWithKindGraphQL() throws {
        let failure = Self.decode(
            #"{"data": null, "errors": [{"message": "boom", "path": ["shelf", "books"], "extensions": {"code": "INTERNAL"}}, {"message": "second"}]}"#
        )
        guard case .failure(let error) = failure else { return #expect(Bool(false), "expected a failure") }
        #expect(error.kind == .graphql)
        #expect(error.serverMessage == "boom")
        #expect(
            error.graphqlErrors == [
                FetchError.GraphQLError(message: "boom", path: ["shelf", "books"], code: "INTERNAL"),
                FetchError.GraphQLError(message: "second"),
            ])
        #expect(error.fields["graphqlErrors"]?[0]?["code"] == "INTERNAL")
        #expect(!error.rateLimited)
    }

    @Test func errorsBesideTheRowsAreAWarning() throws {
        let page = try Self.decode(
            #"{"data": {"shelf": {"books": {"edges": [{"node": {"id": 1}}]}}}, "errors": [{"message": "one field failed", "path": ["shelf", "books", "edges", 0, "node", "title"]}]}"#
        ).get()
        #expect(page.objects == [["id": 1]])
        #expect(page.warning?.kind == .graphql)
        #expect(page.warning?.graphqlErrors?.first?.path == ["shelf", "books", "edges", 0, "node", "title"])
    }

    @Test func githubsRateLimitErrorIsARateLimitUntilTheReset() throws {
        let reset = Int(WallClock.secondsSince1970()) + 600
        let failure = Self.decode(
            #"{"errors": [{"type": "RATE_LIMITED", "message": "API rate limit exceeded"}]}"#,
            headers: [("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", String(reset)), ("X-RateLimit-Limit", "5000")])
        guard case .failure(let error) = failure else { return #expect(Bool(false), "expected a failure") }
        #expect(error.kind == .graphql && error.rateLimited)
        #expect((590...600).contains(error.retryAfterSeconds ?? 0))
    }

    @Test(arguments: [
        (#"{"data": {"shelf": {"books": {"edges": {"node": {}}}}}}"#, "data.shelf.books.edges"),
        (#"{"data": {"shelf": {"books": {"nodes": 3}}}}"#, "data.shelf.books.nodes"),
        (#"{"data": {"shelf": {}}}"#, "data.shelf.books"),
        (#"{"data": {"shelf": {"books": "nope"}}}"#, "data.shelf.books"),
    ])
    func shapesThatAreNotAConnectionNameWhere(body: String, keyPath: String) {
        guard case .failure(let error) = Self.decode(body) else { return #expect(Bool(false), "expected a failure") }
        #expect(error.kind == .keyPath)
        #expect(error.keyPath == keyPath)
    }

    @Test func manyErrorsAreBounded() throws {
        let errors = (0..<500).map {
            #"{"message": "error \#($0)", "path": [\#(Array(repeating: "\"p\"", count: 100).joined(separator: ","))]}"#
        }
        guard case .failure(let error) = Self.decode(#"{"errors": [\#(errors.joined(separator: ","))]}"#) else {
            return #expect(Bool(false), "expected a failure")
        }
        #expect(error.graphqlErrors?.count == GraphQLDecoding.maximumErrors)
        #expect(error.graphqlErrors?.first?.path == nil, "a path longer than 32 steps is left out")
    }

    @Test func theBodyIsTheQueryWithThePageValuesSetAtTheirKeyPaths() throws {
        let values: [(path: JSONKeyPath, value: JSON)] = [
            (JSONKeyPath("variables.first"), JSON(10)), (JSONKeyPath("variables.after"), JSON("c")),
        ]
        let body = try #require(Self.configuration.encodedBody(setting: values))
        let sent = try JSON.parse(body)
        #expect(sent["query"] == JSON(Self.configuration.graphql!.query))
        #expect(sent["variables"] == ["first": 10, "after": "c"])
        #expect(JSON.object([("a", 1)]).setting(["b", "c"][...], to: true) == ["a": 1, "b": ["c": true]])
        #expect(JSON.object([("b", 1)]).setting(["b", "c"][...], to: true) == ["b": ["c": true]], "a value in the way is replaced")
    }
}
