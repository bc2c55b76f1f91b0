@testable import DataSources
import JSONKit
import Testing

/// Issue 28: the server's own error text, from the shapes common APIs and frameworks send,
/// each as they really send it.
@Suite struct ServerMessageTests {
    static func serverMessage(_ body: String, status: Int = 400) -> String? {
        ResponseDecoding.httpFailure(
            RemoteResponse(
                url: "http://api.invalid/x", status: status, contentType: "application/json",
                body: Array(body.utf8)), secrets: []
        ).serverMessage
    }

    @Test(arguments: [
        // marshmallow / flask-smorest validation errors: the first message, after the names leading to it.
        (
            #"{"code": 422, "status": "Unprocessable Entity", "errors": {"query": {"page_size": ["Must be <= 100"]}}}"#,
            "query.page_size: Must be <= 100"
        ),
        // Eve.
        (
            #"{"_status": "ERR", "_error": {"code": 404, "message": "The requested URL was not found on the server."}}"#,
            "The requested URL was not found on the server."
        ),
        // RFC 9457 problem details: detail, else title.
        (
            #"{"type": "https://example.com/probs/out-of-credit", "title": "You do not have enough credit.", "status": 403, "detail": "Your current balance is 30, but that costs 50.", "instance": "/account/12345/msgs/abc"}"#,
            "Your current balance is 30, but that costs 50."
        ),
        (#"{"type": "about:blank", "title": "Not Found", "status": 404}"#, "Not Found"),
        // JSON:API.
        (
            #"{"errors": [{"status": "400", "source": {"parameter": "page[size]"}, "title": "Invalid Query Parameter", "detail": "page[size] must be at most 100."}]}"#,
            "page[size] must be at most 100."
        ),
        // OAuth 2.0 (RFC 6750).
        (#"{"error": "invalid_token", "error_description": "The access token expired"}"#, "The access token expired"),
        (#"{"error": "invalid_token"}"#, "invalid_token"),
        // GitHub.
        (
            #"{"message": "API rate limit exceeded for 192.0.2.1.", "documentation_url": "https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"}"#,
            "API rate limit exceeded for 192.0.2.1."
        ),
        // Django REST framework.
        (#"{"detail": "Invalid page."}"#, "Invalid page."),
        // Google APIs and many others: error.message.
        (
            #"{"error": {"code": 403, "message": "The caller does not have permission", "status": "PERMISSION_DENIED"}}"#,
            "The caller does not have permission"
        ),
        // GraphQL.
        (
            #"{"errors": [{"message": "Field 'x' doesn't exist on type 'Query'", "locations": [{"line": 1, "column": 3}]}]}"#,
            "Field 'x' doesn't exist on type 'Query'"
        ),
    ])
    func theRealShapes(_ body: String, _ expected: String) {
        #expect(Self.serverMessage(body) == expected)
    }

    @Test func theFieldsAreTriedInOrder() {
        let fields = [#""detail": "d""#, #""message": "m""#, #""error_description": "ed""#, #""error": "e""#]
        for (index, expected) in ["d", "m", "ed", "e"].enumerated() {
            #expect(Self.serverMessage("{" + fields[index...].joined(separator: ", ") + "}") == expected, "\(fields[index...])")
        }
        #expect(Self.serverMessage(#"{"error": {"message": "em"}, "_error": {"message": "_em"}, "title": "t"}"#) == "em")
        #expect(Self.serverMessage(#"{"_error": {"message": "_em"}, "errors": [{"message": "e0"}], "title": "t"}"#) == "_em")
        #expect(Self.serverMessage(#"{"errors": [{"detail": "e0d", "message": "e0m"}], "title": "t"}"#) == "e0m")
        #expect(Self.serverMessage(#"{"errors": [{"detail": "e0d", "title": "e0t"}], "title": "t"}"#) == "e0d")
        #expect(Self.serverMessage(#"{"errors": [{"code": 1, "hint": "h"}], "title": "t"}"#) == "t")
        #expect(Self.serverMessage(#"{"errors": [{"code": 1, "hint": "h"}]}"#) == "hint: h")
        #expect(Self.serverMessage(#"{"errors": ["plain"]}"#) == "plain")
    }

    @Test func emptyOrMissingTextIsNone() {
        #expect(Self.serverMessage(#"{"detail": "", "message": "m"}"#) == "m", "an empty string is skipped")
        #expect(Self.serverMessage(#"{"errors": {"a": [1, 2, {"b": null}], "c": ""}}"#) == nil)
        #expect(Self.serverMessage(#"{"status": "Unprocessable Entity", "code": 422}"#) == nil)
        #expect(Self.serverMessage("[1, 2]") == nil)
        #expect(Self.serverMessage("not json") == nil)
    }

    @Test func theSearchInErrorsIsBounded() {
        let deep = String(repeating: #"{"a": "#, count: 100) + #""x""# + String(repeating: "}", count: 100)
        #expect(ResponseDecoding.firstString(in: try! JSON.parse(Array(deep.utf8))) == nil, "deeper than 64 levels is not searched")
        let wide = "[" + Array(repeating: "0", count: 20_000).joined(separator: ",") + #", "late"]"#
        #expect(ResponseDecoding.firstString(in: try! JSON.parse(Array(wide.utf8))) == nil, "at most 10,000 values are looked at")
        #expect(ResponseDecoding.firstString(in: try! JSON.parse(Array(#"[0, 0, "early"]"#.utf8))) == "early")
    }
}
