#if canImport(Glibc)
import Glibc
#endif
/// A small deterministic generator, so that every seed replays. (DaemonTests' ModelTestSupport
/// has the same one: a test target cannot import another's code.)
struct Generator {
    var state: UInt64
    init(seed: Int) { state = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 &+ 1 }
    mutating func next(_ bound: Int) -> Int {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Int((state >> 33) % UInt64(max(1, bound)))
    }
    mutating func chance(_ percent: Int) -> Bool { next(100) < percent }
}

/// The seeds of a randomized test: `0..<count`, or a part of them when
/// `DATASOURCED_SEED_DIVISOR` is N (`scripts/sanitizers.sh` sets 10): under a sanitizer a seed
/// costs many times more, and what the sanitizer looks for (memory and thread errors) the first
/// seeds reach as well as the rest. The plain run covers every seed.
func seeds(_ count: Int) -> Range<Int> {
    let divisor = ProcessInfoLite.integer("DATASOURCED_SEED_DIVISOR").map { min(max($0, 1), count) } ?? 1
    return 0..<max(1, count / divisor)
}

/// An environment variable read as an integer, without Foundation.
enum ProcessInfoLite {
    static func integer(_ name: String) -> Int? {
        getenv(name).flatMap { Int(String(cString: $0)) }
    }
}
