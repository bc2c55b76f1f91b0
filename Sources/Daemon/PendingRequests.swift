import JSONKit
import JSONRPC

/// Names one request that has not been answered yet.
package struct RequestToken: Hashable, Sendable {
    let serial: Int
}

/// Requests that are not answered yet, and the batches waiting for them.
///
/// Every request gets a token when it arrives and is answered exactly once: by its
/// handler, by `$/cancelRequest` (-32800), or at shutdown. A late completion for a token
/// that was already answered is dropped, which is how cancellation wins races.
struct PendingRequests {
    private struct Entry {
        let id: JSON
        let batch: Int?
    }

    private struct Batch {
        var slots: [Outgoing?]
        var unanswered: Int
    }

    private var entries: [Int: Entry] = [:]
    /// The oldest unanswered request of each id, and the later ones of an id a client
    /// reused while it was pending (rare): every request is one entry of an Int, not an array.
    private var oldestByID: [JSON: Int] = [:]
    private var laterByID: [JSON: [Int]] = [:]
    private var batches: [Int: Batch] = [:]
    private var slotOfToken: [Int: Int] = [:]
    private var nextSerial = 0

    /// Opens a batch of `count` responses; returns its number.
    mutating func beginBatch(expecting count: Int) -> Int {
        nextSerial += 1
        batches[nextSerial] = Batch(slots: Array(repeating: nil, count: count), unanswered: count)
        return nextSerial
    }

    mutating func begin(id: JSON, batch: Int?, slot: Int) -> RequestToken {
        nextSerial += 1
        entries[nextSerial] = Entry(id: id, batch: batch)
        if oldestByID[id] == nil { oldestByID[id] = nextSerial } else { laterByID[id, default: []].append(nextSerial) }
        if batch != nil { slotOfToken[nextSerial] = slot }
        return RequestToken(serial: nextSerial)
    }

    /// Records the answer; returns what to write now (nothing while its batch is incomplete,
    /// or when the request was already answered).
    mutating func finish(_ token: RequestToken, _ result: Result<JSON, ResponseError>) -> Outgoing? {
        guard let entry = entries.removeValue(forKey: token.serial) else { return nil }
        if oldestByID[entry.id] == token.serial {
            // The next one of the same id, if any, becomes the oldest.
            if let index = laterByID.index(forKey: entry.id) {
                oldestByID[entry.id] = laterByID.values[index].removeFirst()
                if laterByID.values[index].isEmpty { laterByID.remove(at: index) }
            } else {
                oldestByID[entry.id] = nil
            }
        } else if let index = laterByID.index(forKey: entry.id) {
            laterByID.values[index].removeAll { $0 == token.serial }
            if laterByID.values[index].isEmpty { laterByID.remove(at: index) }
        }
        let response = Outgoing.response(id: entry.id, result: result)
        guard let batchNumber = entry.batch, let slot = slotOfToken.removeValue(forKey: token.serial) else {
            return response
        }
        return fill(batch: batchNumber, slot: slot, with: response)
    }

    /// Fills a batch slot that needs no handler (an invalid entry); returns the batch when complete.
    mutating func fill(batch number: Int, slot: Int, with response: Outgoing) -> Outgoing? {
        guard var batch = batches[number] else { return nil }
        batch.slots[slot] = response
        batch.unanswered -= 1
        guard batch.unanswered == 0 else {
            batches[number] = batch
            return nil
        }
        batches[number] = nil
        return .batch(batch.slots.compactMap { $0 })
    }

    /// The oldest unanswered request with this id. Work behind it needs no stopping: its
    /// answer, when it comes, finds the request answered and is dropped.
    func oldest(withID id: JSON) -> RequestToken? {
        oldestByID[id].map(RequestToken.init)
    }

    /// Every unanswered request but `kept`, oldest first.
    func all(except kept: RequestToken? = nil) -> [RequestToken] {
        entries.keys.sorted().filter { $0 != kept?.serial }.map(RequestToken.init)
    }
}
