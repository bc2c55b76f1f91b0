#if canImport(Glibc)
import Glibc
#endif

/// Times as the daemon writes them: RFC 3339 in UTC, to the millisecond on the wire
/// (`2026-11-23T16:41:37.123Z`), to the second where people read them (`cache list`).
package enum Timestamp {
    package static func iso8601(_ secondsSince1970: Double, withMilliseconds: Bool = true) -> String {
        guard secondsSince1970.isFinite, abs(secondsSince1970) < 1e11 else {
            return withMilliseconds ? "1970-01-01T00:00:00.000Z" : "1970-01-01T00:00:00Z"
        }
        var whole = time_t(secondsSince1970.rounded(.down))
        let milliseconds = min(999, Int(((secondsSince1970 - Double(whole)) * 1000).rounded(.down)))
        var parts = tm()
        gmtime_r(&whole, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let millis = milliseconds < 10 ? "00\(milliseconds)" : milliseconds < 100 ? "0\(milliseconds)" : "\(milliseconds)"
        let seconds =
            "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
        return withMilliseconds ? "\(seconds).\(millis)Z" : "\(seconds)Z"
    }
}
