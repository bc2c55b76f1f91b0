import JSONKit

/// A source's pending mutations as the persisted cache keeps them beside its pages, so that a
/// daemon started on the same file shows them pending again and sends them: each mutation
/// (its action by name, the row's identity, the values, the Idempotency-Key, the attempts made)
/// with the server's version of the row it changes. Read back as input: every member checked.
enum PendingMutationsEntry {
    static let format = "datasourced-pending-actions"

    static func encoded(_ ledger: MutationLedger) -> [UInt8] {
        let mutations: [JSON] = ledger.pending.map { mutation in
            var members: [(String, JSON)] = [("id", JSON(mutation.id)), ("action", JSON(mutation.action.name))]
            if let identity = mutation.identity {
                members.append(("identity", identity))
                if let base = ledger.base(of: identity) { members.append(("base", base)) }
            }
            members += [
                ("values", mutation.values), ("idempotencyKey", JSON(mutation.idempotencyKey)), ("attempts", JSON(mutation.attempts)),
            ]
            return .object(members)
        }
        return JSON.object([("format", JSON(format)), ("version", 1), ("mutations", .array(mutations))]).encoded()
    }

    /// The mutations `payload` holds, each with its row's base, for a source whose actions are
    /// `actions`; or why the entry cannot be taken up.
    static func decoded(
        _ payload: [UInt8], actions: [Action], maximumDepth: Int
    ) -> Result<[(mutation: Mutation, base: JSON?)], Problem> {
        guard payload.count <= 64 << 20 else { return .failure(Problem("it is \(payload.count) bytes, more than 64 MiB")) }
        // The nesting is scanned before jansson parses: a row may nest as deep as a response.
        let tooDeep = payload.withUnsafeBytes { JSON.nestingDepthExceeding(maximumDepth.addingClamped(8), in: $0) }
        guard tooDeep == nil, let document = try? JSON.parse(payload) else {
            return .failure(Problem("it is not JSON, or nests deeper than the source's limits.maxDepth"))
        }
        guard document["format"]?.stringValue == format, document["version"]?.integerValue == 1 else {
            return .failure(Problem("its format is not \(format) version 1"))
        }
        guard let list = document["mutations"]?.arrayValue, list.count <= MutationLedger.maximumPending else {
            return .failure(Problem("\"mutations\" must be an array of at most \(MutationLedger.maximumPending)"))
        }
        var restored: [(mutation: Mutation, base: JSON?)] = []
        var ids: Set<String> = []
        for (index, entry) in list.enumerated() {
            let field = "mutations[\(index)]"
            guard let id = entry["id"]?.stringValue, id.hasPrefix("m"), let number = Int(id.dropFirst()), number > 0,
                id == "m\(number)", ids.insert(id).inserted
            else { return .failure(Problem("\(field).id must be \"m\" and a positive number, each once")) }
            guard let name = entry["action"]?.stringValue, let action = actions.first(where: { $0.name == name }) else {
                return .failure(Problem("\(field).action names no action the source declares"))
            }
            guard let values = entry["values"], values.isObject, action.refusal(of: values) == nil else {
                return .failure(Problem("\(field).values do not fit the action's declaration"))
            }
            guard let key = entry["idempotencyKey"]?.stringValue, (1...128).contains(key.utf8.count),
                key.utf8.allSatisfy({ $0 > 32 && $0 < 127 })
            else { return .failure(Problem("\(field).idempotencyKey must be 1 to 128 visible ASCII characters")) }
            guard let attempts = entry["attempts"]?.integerValue, (0...1_000_000).contains(attempts) else {
                return .failure(Problem("\(field).attempts must be an integer in 0...1000000"))
            }
            let identity = entry["identity"]
            if action.optimistic != .none, identity == nil { return .failure(Problem("\(field).identity is missing")) }
            let base = entry["base"]
            if let base, !base.isObject { return .failure(Problem("\(field).base must be an object")) }
            var mutation = Mutation(id: id, action: action, identity: identity, values: values, idempotencyKey: key)
            mutation.attempts = attempts
            restored.append((mutation, base))
        }
        return .success(restored)
    }

    struct Problem: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }
}
