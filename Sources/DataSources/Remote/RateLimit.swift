import Basics

/// What a server said of its rate limit in a response's headers: GitHub's (and many others')
/// `X-RateLimit-Limit`/`-Remaining`/`-Reset`, the IETF draft's `RateLimit-Limit`/`-Remaining`/
/// `-Reset`, or its structured `RateLimit` header, in the older dictionary form
/// (`limit=100, remaining=0, reset=30`) or the newer list form (`"default";r=0;t=30`, the limit
/// in `RateLimit-Policy: "default";q=100;w=60`).
package struct RateLimitStatus: Sendable, Equatable {
    package var limit: Int?
    package var remaining: Int?
    /// When the window resets, in seconds since 1970.
    package var resetAt: Double?

    package init(limit: Int? = nil, remaining: Int? = nil, resetAt: Double? = nil) {
        self.limit = limit
        self.remaining = remaining
        self.resetAt = resetAt
    }

    /// The longest wait a reset may ask for (ten years); a later one is ignored as garbage.
    package static let maximumResetSeconds = 315_360_000.0
    /// An `X-RateLimit-Reset` below this is not a time since 1970 (it would be in 2001) but a
    /// number of seconds from now, as some APIs send it.
    static let earliestEpochReset = 1_000_000_000

    /// Seconds from `now` until the reset, whole and at least 0; nil when no reset was given.
    package func secondsUntilReset(now: Double) -> Double? {
        resetAt.map { max(0, ($0 - now).rounded(.up)) }
    }

    /// The status the headers give, nil when they give none. `now` is when they arrived, in
    /// seconds since 1970. Every number is range-checked: digits only, at most 12 of them.
    package static func read(from headers: [(name: String, value: String)], now: Double) -> RateLimitStatus? {
        var legacy = Fields(), draft = Fields(), structured: String?, policy: String?
        for (name, value) in headers {
            // Most headers are not about rate limits: a cheap look before lowercasing.
            guard name.utf8.count >= 9, name.utf8.count <= 21, let first = name.utf8.first,
                first | 0x20 == UInt8(ascii: "r") || first | 0x20 == UInt8(ascii: "x")
            else { continue }
            switch name.lowercased() {
            case "x-ratelimit-limit": legacy.limit = legacy.limit ?? value
            case "x-ratelimit-remaining": legacy.remaining = legacy.remaining ?? value
            case "x-ratelimit-reset": legacy.reset = legacy.reset ?? value
            case "ratelimit-limit": draft.limit = draft.limit ?? value
            case "ratelimit-remaining": draft.remaining = draft.remaining ?? value
            case "ratelimit-reset": draft.reset = draft.reset ?? value
            case "ratelimit": structured = structured ?? value
            case "ratelimit-policy": policy = policy ?? value
            default: break
            }
        }
        var status = RateLimitStatus()
        if let structured { status = Self.structured(structured, policy: policy, now: now) }
        status.limit = count(legacy.limit) ?? count(draft.limit) ?? status.limit
        status.remaining = count(legacy.remaining) ?? count(draft.remaining) ?? status.remaining
        if let reset = count(legacy.reset) {
            status.resetAt = reset >= earliestEpochReset ? epoch(reset, now: now) : delta(reset, now: now)
        } else if let reset = count(draft.reset) {
            status.resetAt = delta(reset, now: now)
        }
        return status == RateLimitStatus() ? nil : status
    }

    private struct Fields {
        var limit: String?
        var remaining: String?
        var reset: String?
    }

    /// A non-negative count: the first of a list (`100, 100;w=10` in early drafts), before any
    /// parameters, of at most 12 digits; nil for anything else.
    static func count(_ text: String?) -> Int? {
        guard let text else { return nil }
        let first = text.utf8.prefix { $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: ";") }
        let digits = first.drop { $0 == 32 || $0 == 9 }.reversed().drop { $0 == 32 || $0 == 9 }
        guard !digits.isEmpty, digits.count <= 12, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return digits.reversed().reduce(0) { $0 * 10 + Int($1 - 48) }
    }

    private static func delta(_ seconds: Int, now: Double) -> Double? {
        Double(seconds) <= maximumResetSeconds ? now + Double(seconds) : nil
    }

    private static func epoch(_ seconds: Int, now: Double) -> Double? {
        Double(seconds) - now <= maximumResetSeconds ? Double(seconds) : nil
    }

    /// The `RateLimit` header: `limit=100, remaining=0, reset=30`, or items with parameters,
    /// `"default";r=0;t=30` (the most restrictive item counts: the least remaining).
    private static func structured(_ value: String, policy: String?, now: Double) -> RateLimitStatus {
        let members = split(value, on: ",")
        let dictionary = members.compactMap { member -> (String, String)? in
            let parts = split(member, on: "=")
            guard parts.count == 2 else { return nil }
            return (parts[0].lowercased(), parts[1])
        }
        if dictionary.contains(where: { ["limit", "remaining", "reset"].contains($0.0) }) {
            func field(_ key: String) -> Int? { count(dictionary.first { $0.0 == key }?.1) }
            return RateLimitStatus(
                limit: field("limit"), remaining: field("remaining"), resetAt: field("reset").flatMap { delta($0, now: now) })
        }
        let items = members.map(item)
        guard
            let chosen = items.min(by: { ($0.parameters["r"].flatMap(count) ?? Int.max) < ($1.parameters["r"].flatMap(count) ?? Int.max) })
        else {
            return RateLimitStatus()
        }
        let quota = policy.flatMap { text in split(text, on: ",").map(item).first { $0.name == chosen.name }?.parameters["q"] }
        return RateLimitStatus(
            limit: count(quota), remaining: count(chosen.parameters["r"]),
            resetAt: count(chosen.parameters["t"]).flatMap { delta($0, now: now) })
    }

    /// `"name";key=value;key=value` (RFC 8941 item with parameters), the name unquoted.
    private static func item(_ text: String) -> (name: String, parameters: [String: String]) {
        let parts = split(text, on: ";")
        var name = parts.first ?? ""
        if name.hasPrefix("\""), name.hasSuffix("\""), name.count >= 2 { name = String(name.dropFirst().dropLast()) }
        var parameters: [String: String] = [:]
        for parameter in parts.dropFirst() {
            let pair = split(parameter, on: "=")
            if pair.count == 2, parameters[pair[0].lowercased()] == nil { parameters[pair[0].lowercased()] = pair[1] }
        }
        return (name, parameters)
    }

    /// `text` split at `separator` outside double quotes, each part without surrounding spaces.
    private static func split(_ text: String, on separator: Character) -> [String] {
        var parts: [String] = [], current = "", quoted = false
        for character in text {
            if character == "\"" { quoted.toggle() }
            if character == separator, !quoted {
                parts.append(current.trimmingSpaces())
                current = ""
            } else {
                current.append(character)
            }
        }
        parts.append(current.trimmingSpaces())
        return parts
    }
}
