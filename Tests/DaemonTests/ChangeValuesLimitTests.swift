@testable import Daemon
import DataSources
import JSONKit
import JSONRPC
import Testing

/// `changeValues.maxBytes` counts each row's JSON and a separator; a change of more rows than
/// half the limit carries no values (it could not fit, whatever its rows).
@Suite struct ChangeValuesLimitTests {
    /// The `values` of the `didChange` that inserting `objects` into an empty simple source sends.
    static func values(inserting objects: JSON, maxBytes: Int) -> JSON? {
        let client = WireClient(fetcher: ScriptedFetcher([:]))
        _ = client.request("initialize", ["capabilities": ["changeValues": ["maxBytes": JSON(maxBytes)]]])
        _ = client.request("createSource", ["name": "s", "kind": "simple", "identityKey": "id", "objects": []])
        _ = client.request("insertObjects", ["source": "s", "objects": objects])
        let change = client.notifications.last { $0["method"] == "dataSource/didChange" }
        return change?["params"]?["values"]
    }

    static func rows(_ count: Int) -> JSON { .array((1...count).map { ["id": JSON($0)] }) }

    @Test func rowsAndTheirSeparatorsFitTheLimitOrNoValueIsSent() {
        // {"id":1} is 8 bytes: 9 with its separator.
        #expect(Self.values(inserting: Self.rows(5), maxBytes: 45)?["inserted"]?.arrayValue?.count == 5)
        #expect(Self.values(inserting: Self.rows(5), maxBytes: 44) == nil)
        #expect(Self.values(inserting: Self.rows(5), maxBytes: 0) == nil)
    }

    @Test func aChangeOfMoreRowsThanHalfTheLimitCarriesNoValues() {
        // Ten rows of 1 byte each: 20 bytes with their separators.
        let ones = JSON.array((1...10).map { _ in JSON(1) })
        let client = WireClient(fetcher: ScriptedFetcher([:]))
        _ = client.request("initialize", ["capabilities": ["changeValues": ["maxBytes": 19]]])
        _ = client.request("createSource", ["name": "s", "kind": "simple", "objects": []])
        _ = client.request("insertObjects", ["source": "s", "objects": ones])
        let change = client.notifications.last { $0["method"] == "dataSource/didChange" }
        #expect(change?["params"]?["changes"]?["inserted"]?.arrayValue?.count == 10)
        #expect(change?["params"]?["values"] == nil)
        #expect(Self.values(inserting: Self.rows(2), maxBytes: 19)?["inserted"]?.arrayValue?.count == 2)
    }
}
