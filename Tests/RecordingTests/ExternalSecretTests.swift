import DataSources
import JSONKit
@testable import Recording
import Testing

/// Issue 28: a header value read from the environment or a file is secret in a recording
/// whatever its header's name: the request says so (`RemoteRequest.secretValues`).
@Suite struct ExternalSecretTests {
    @Test func valuesTheRequestMarksSecretAreScrubbedFromTheRecording() {
        var session = RecordedSession(rendering: Rendering(secrets: Secrets(extraNames: [])))
        var request = RemoteRequest(
            url: "http://api.example.com/items", headers: [("X-Workspace", "ws workspace-4711")],
            timeoutSeconds: 5, maximumBodySize: 1 << 20)
        request.secretValues = ["ws workspace-4711", "workspace-4711"]
        let number = session.startExchange(request)
        session.completeExchange(
            number,
            .success(
                RemoteResponse(
                    url: request.url, status: 403, contentType: "application/json",
                    body: Array(#"{"message":"workspace-4711 is not yours"}"#.utf8))))
        let layout = session.layout(daemonArguments: [])
        let text = (layout.routes + layout.stepLines).joined(separator: "\n")
        #expect(!text.contains("workspace-4711"), "\(text)")
        #expect(text.contains("<redacted> is not yours"), "\(text)")
    }
}
