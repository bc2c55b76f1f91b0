@testable import Daemon
import JSONKit
import JSONRPC
import Testing

/// A client may reuse an id while a request with it is pending: `$/cancelRequest` of that
/// id must reach the oldest one still unanswered, whichever were answered before.
@Suite struct PendingRequestsTests {
    @Test func theOldestUnansweredRequestOfAnIdIsFound() {
        var pending = PendingRequests()
        let first = pending.begin(id: 7, batch: nil, slot: 0)
        let second = pending.begin(id: 7, batch: nil, slot: 0)
        let third = pending.begin(id: 7, batch: nil, slot: 0)
        let other = pending.begin(id: "7", batch: nil, slot: 0)
        #expect(pending.oldest(withID: 7) == first)
        #expect(pending.oldest(withID: "7") == other)
        #expect(pending.finish(second, .success(1)) != nil)
        #expect(pending.oldest(withID: 7) == first)
        #expect(pending.finish(first, .success(1)) != nil)
        #expect(pending.oldest(withID: 7) == third)
        #expect(pending.finish(first, .success(1)) == nil, "answered once only")
        #expect(pending.finish(third, .success(1)) != nil)
        #expect(pending.oldest(withID: 7) == nil)
        #expect(pending.oldest(withID: "7") == other)
        let again = pending.begin(id: 7, batch: nil, slot: 0)
        #expect(pending.oldest(withID: 7) == again)
        #expect(pending.all() == [other, again])
    }
}
