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
