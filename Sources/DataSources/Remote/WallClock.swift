#if canImport(Glibc)
import Glibc
#endif

/// Seconds since 1970, as HTTP dates and cache entries count them.
package enum WallClock {
    package static func secondsSince1970() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
