import Basics
import DataSources

/// What a recording never holds: values of secret headers and query parameters (the daemon's
/// rule for logs and `describeSource`, plus the names given with `--redact`) and URL
/// credentials. Each such value, once seen anywhere, is also scrubbed from every other string
/// of the recording (an echoed token in a response body, an error message).
struct Secrets {
    /// What stands for a secret in the recording.
    static let placeholder = SecretRedaction.placeholder
    /// The placeholder inside a URL's query, percent-encoded as the daemon encodes
    /// `queryParameters`: a replayed request built from `<redacted>` then carries the same text.
    static let queryPlaceholder = "%3Credacted%3E"
    /// Shorter values are redacted where they stand (a named header or parameter) but not
    /// scrubbed from other text, where they would erase ordinary words and numbers.
    static let shortestScrubbed = 4

    /// Lowercased names from `--redact`, for headers and query parameters alike.
    let extraNames: Set<String>
    private(set) var values: Set<String> = []
    /// The same values, in the order they were learned: what a recording already written may
    /// still hold is what was learned after it was written.
    private(set) var learnedInOrder: [String] = []

    init(extraNames: some Sequence<String>) {
        self.extraNames = Set(extraNames.map { $0.lowercased() })
    }

    /// The daemon's rule, also for query parameters, where `api_key` is spelled with `_`.
    func isSecret(name: String) -> Bool {
        RemoteConfiguration.isSecretHeader(name) || RemoteConfiguration.isSecretHeader(name.replacing("_", with: "-"))
            || extraNames.contains(name.lowercased())
    }

    /// Remembers `value` to scrub it everywhere; true when it was not known yet.
    @discardableResult
    mutating func learn(_ value: String) -> Bool {
        var learned = false
        for candidate in Secrets.scrubbable(value) where !values.contains(candidate) {
            values.insert(candidate)
            learnedInOrder.append(candidate)
            learned = true
        }
        return learned
    }

    /// The value itself, and the long words inside it: the token of `Bearer TOKEN`, the
    /// values of a `Cookie` header's pairs.
    private static func scrubbable(_ value: String) -> [String] {
        guard value.count >= shortestScrubbed, value != placeholder, value != queryPlaceholder else { return [] }
        var found = [value]
        let words = value.split(whereSeparator: { $0 == " " || $0 == ";" || $0 == "," || $0 == "=" })
        if words.count > 1 {
            found += words.map { String($0) }.filter { $0.count >= 8 }
        }
        return found
    }

    /// `text` with every known secret value replaced by the placeholder, as written or
    /// JSON-escaped (`\/`, `\uXXXX`, surrogate pairs: a body or an error's quoted body is JSON
    /// text), overlapping ones together so that none leaves a tail of itself behind: the
    /// daemon's own redaction (`SecretRedaction`), with this type's threshold on what is
    /// learned (`shortestScrubbed`).
    func scrubbed(_ text: String) -> String {
        guard !values.isEmpty else { return text }
        return SecretRedaction.redacted(text, secrets: learnedInOrder)
    }
}
