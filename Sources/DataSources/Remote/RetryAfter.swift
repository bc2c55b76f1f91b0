import Basics

/// `Retry-After` (RFC 9110 §10.2.3): a number of seconds or an HTTP-date.
package enum RetryAfter {
    /// The delay in seconds, given the current time as seconds since 1970; nil if unreadable.
    package static func seconds(_ value: String, now: Double) -> Double? {
        let text = value.trimmingSpaces()
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
            return text.count > 9 ? nil : Double(text)
        }
        guard let date = HTTPDate.seconds(text) else { return nil }
        return max(0, date - now)
    }
}
