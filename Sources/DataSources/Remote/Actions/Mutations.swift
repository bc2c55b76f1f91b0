import Basics
import JSONKit

/// One call of an action, from `performAction` until the server settles it.
package struct Mutation: Sendable {
    package enum State: String, Sendable {
        /// Made, waiting for the mutations made before it.
        case waiting
        case inFlight
        /// Failed on the network or with 408, 429 or 5xx: sent again after `retryAt`.
        case queued
    }

    package let id: String
    package let action: Action
    /// The row it changes (update, remove), or the temporary identity of the row it adds.
    package let identity: JSON?
    /// The call's values, an object.
    package let values: JSON
    package let idempotencyKey: String
    package var state = State.waiting
    package var attempts = 0
    /// Seconds since 1970 when a queued mutation is sent again.
    package var retryAt: Double?
    package var lastError: FetchError?
}

/// How a mutation ended, as `dataSource/didSettleMutation` says it.
package struct MutationSettlement: Sendable {
    package enum Status: String, Sendable, CaseIterable {
        case committed, rolledBack, queued
    }

    package let mutation: String
    package let action: String
    package let status: Status
    package let error: FetchError?
    /// Sources to revalidate (a committed action's `invalidates`).
    package let invalidates: [String]
}

/// The pending mutations of a source and the server's version of the rows they change: what
/// a row shows is the server's version with every pending mutation of it applied, in the
/// order made. So a page that arrives meanwhile shows the server's rows under the pending
/// changes, and undoing one mutation leaves what arrived and the others' changes.
struct MutationLedger {
    /// The most pending mutations a source holds (each a few hundred bytes and its values).
    static let maximumPending = 10_000

    private(set) var pending: [Mutation] = []
    /// The server's version of each row a pending mutation changes, by identity; absent for a
    /// row only a pending insert made.
    private var bases: [JSON: JSON] = [:]
    /// How many pending mutations change each identity: a row of a page is looked up once.
    private var pendingCounts: [JSON: Int] = [:]
    /// Where a pending remove took its row from, among the objects, and the identity of the
    /// row before it then (nil: the first): a rollback puts it back after that row if it is
    /// still there, else at that index.
    private var removedAt: [JSON: (index: Int, after: JSON?)] = [:]
    /// The identities whose base is among the rows the list holds from the server now (shown,
    /// or hidden by a pending remove). A rollback puts a removed row back only if so: after a
    /// reload that did not bring it again, the server's row is for the pages to come to show.
    private var held: Set<JSON> = []
    private var made = 0

    var isEmpty: Bool { pending.isEmpty }

    /// Takes up mutations a persisted cache kept (`PendingMutationsEntry`), before any of
    /// this source's own: IDs go on after theirs.
    mutating func restore(_ restored: [(mutation: Mutation, base: JSON?)]) {
        for (mutation, base) in restored {
            // Held once their rows arrive from the cache or the server.
            add(mutation, base: base, shown: false)
            made = max(made, Int(mutation.id.dropFirst()) ?? 0)
        }
    }

    /// A new mutation's ID ("m1", "m2", ...: unique in the source for its life).
    mutating func nextID() -> String {
        made += 1
        return "m\(made)"
    }

    /// Adds `mutation` of a row the list `shown` now (or a new row), whose server version is `base`.
    mutating func add(_ mutation: Mutation, base: JSON?, removedAt place: (index: Int, after: JSON?)? = nil, shown: Bool = true) {
        if let identity = mutation.identity {
            if bases[identity] == nil, let base { bases[identity] = base }
            if base != nil, shown { held.insert(identity) }
            if let place { removedAt[identity] = place }
            pendingCounts[identity, default: 0] += 1
        }
        pending.append(mutation)
    }

    func index(of id: String) -> Int? { pending.firstIndex { $0.id == id } }

    mutating func update(_ id: String, _ change: (inout Mutation) -> Void) {
        guard let index = index(of: id) else { return }
        change(&pending[index])
    }

    /// Takes `id` out; the row's base goes once no pending mutation changes it.
    @discardableResult
    mutating func remove(_ id: String) -> Mutation? {
        guard let index = index(of: id) else { return nil }
        let mutation = pending.remove(at: index)
        if let identity = mutation.identity {
            let left = (pendingCounts[identity] ?? 1) - 1
            pendingCounts[identity] = left > 0 ? left : nil
            if left <= 0 {
                bases[identity] = nil
                removedAt[identity] = nil
                held.remove(identity)
            }
        }
        return mutation
    }

    func pendingIDs(of identity: JSON) -> [String] {
        guard pendingCounts[identity] != nil else { return [] }
        return pending.filter { $0.identity == identity }.map(\.id)
    }

    func base(of identity: JSON) -> JSON? { bases[identity] }

    func removedPlace(of identity: JSON) -> (index: Int, after: JSON?)? { removedAt[identity] }

    /// A row arriving from the server was hidden (a pending remove) at `index`, after `after`.
    mutating func hid(_ identity: JSON, at index: Int, after: JSON?) { removedAt[identity] = (index, after) }

    mutating func setBase(_ row: JSON, of identity: JSON) { bases[identity] = row }

    /// Whether the server's row of `identity` is among the rows the list holds now.
    func holds(_ identity: JSON) -> Bool { held.contains(identity) }

    /// The list was replaced (a load, a paged list's first page): no row is held until it arrives again.
    mutating func listReplaced() { held.removeAll() }

    /// Whether a row of this identity has changes pending.
    func changes(_ identity: JSON) -> Bool { pendingCounts[identity] != nil }

    /// `base` (the server's row) with the pending mutations of `identity` applied in order:
    /// nil when one of them removes it.
    func shown(_ base: JSON, identity: JSON) -> JSON? {
        var row: JSON? = base
        for mutation in pending where mutation.identity == identity {
            switch mutation.action.optimistic {
            case .update: row = row.map { Self.merging(mutation.values, into: $0) }
            case .remove: row = nil
            case .insert, .none: break
            }
        }
        return row
    }

    /// The rows pending inserts add, in the order made (shown first in the list).
    var insertedRows: [(id: String, row: JSON)] {
        pending.compactMap { mutation in
            guard mutation.action.optimistic == .insert, let identity = mutation.identity, let row = bases[identity] else {
                return nil
            }
            return (mutation.id, shown(row, identity: identity) ?? row)
        }
    }

    /// A row arrived from the server: its base becomes this version. Answers what to show
    /// (nil: a pending remove hides it), or the row itself when nothing is pending for it.
    mutating func arrived(_ row: JSON, identity: JSON) -> JSON? {
        guard bases[identity] != nil else { return row }
        bases[identity] = row
        held.insert(identity)
        return shown(row, identity: identity)
    }

    /// `values`' members set on `row` (an object; anything else is taken as `{}`).
    static func merging(_ values: JSON, into row: JSON) -> JSON {
        var merged = row.isObject ? row : [:]
        for (name, value) in values.objectMembers ?? [] { merged = merged.setting(name, to: value) }
        return merged
    }

    /// A version 4 UUID, as `Idempotency-Key` carries it.
    static func idempotencyKey() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = bytes[6] & 0x0f | 0x40
        bytes[8] = bytes[8] & 0x3f | 0x80
        let hex = bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
        return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }.joined(separator: "-")
    }

    /// Seconds before a queued mutation is sent again: the server's `Retry-After`, else 1, 2,
    /// 4... up to 60 by the attempts made.
    static func retryDelay(attempts: Int, retryAfter: Double?) -> Double {
        if let retryAfter, retryAfter.isFinite, retryAfter >= 0 { return min(retryAfter, 3600) }
        return min(60, Double(1 << min(max(attempts - 1, 0), 6)))
    }
}
