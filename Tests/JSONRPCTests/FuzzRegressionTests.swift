import JSONKit
import JSONRPC
import Testing

/// Inputs the fuzzers (FUZZING.md) found, each answered as it should be now.
@Suite struct FuzzRegressionTests {
    /// fuzz-payload: a batch with an integer beyond 64 bits and a stray `:` between elements
    /// made the scan for its elements loop for ever (and grow without bound).
    @Test func aBatchWithAnOversizedIntegerAndAStrayColonIsAParseError() {
        let body = Array(#"[{"hsonrpc":"0.0","id":"ping"}66666666666666666666666,"metho-metho-":,0]"#.utf8)
        guard case .unusable(let error) = Payload(body: body) else {
            Issue.record("expected one parse error for the whole body")
            return
        }
        #expect(error.code == ErrorCode.parseError)
    }
}
