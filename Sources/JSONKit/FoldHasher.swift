/// A keyed 64-bit hash, several times cheaper than `Hasher` (SipHash-1-3) for the small
/// values rows are made of: every step is one 64 × 64 → 128-bit multiply whose halves are
/// folded together, and nothing is a call into the standard library (whose `Hasher` cannot
/// be inlined). A change set of a long list hashes every row, and a `Hasher` per member
/// with its finalisation was most of that time.
///
/// Keyed by four words drawn at random once per process, as `Hasher` is: which inputs
/// collide depends on them, so a server cannot choose rows that all land in one chain of
/// a source's tables without knowing them. (Folded multiplication has no proof of that
/// resistance, as SipHash has; it is the trade of Go's map hash and of foldhash.)
struct FoldHasher {
    private static let keys: (UInt64, UInt64, UInt64, UInt64) = {
        var random = SystemRandomNumberGenerator()
        return (random.next(), random.next(), random.next(), random.next())
    }()

    private let keys: (UInt64, UInt64, UInt64, UInt64)
    private var state: UInt64

    @inline(__always) init() {
        self.init(keys: Self.keys)
    }

    @inline(__always) private init(keys: (UInt64, UInt64, UInt64, UInt64)) {
        self.keys = keys
        state = keys.2
    }

    /// A new hasher with the same keys (what `init()` gives), without reading the
    /// process's keys again: one per member of every object hashed.
    @inline(__always) func fresh() -> FoldHasher { FoldHasher(keys: keys) }

    @inline(__always) private static func fold(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.high ^ product.low
    }

    @inline(__always) mutating func combine(_ word: UInt64) {
        state = Self.fold(state ^ word, keys.0 | 1)
    }

    /// The bytes alone: the caller has combined their count (every value says where it
    /// ends, so values side by side never hash as if one ran into the next).
    @inline(__always) mutating func combine(bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset + 16 <= bytes.count {
            let first = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            let second = bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)
            state = Self.fold(state ^ first ^ keys.0, second ^ keys.1)
            offset += 16
        }
        // The last 1...15 bytes as two words, read without a copy: overlapping reads for 4 or
        // more (the count, combined before, tells overlaps apart).
        let rest = bytes.count - offset
        guard rest > 0 else { return }
        let first: UInt64, second: UInt64
        if rest >= 8 {
            first = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            second = bytes.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self)
        } else if rest >= 4 {
            first = UInt64(bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            second = UInt64(bytes.loadUnaligned(fromByteOffset: bytes.count - 4, as: UInt32.self))
        } else {
            first = UInt64(bytes[offset]) | UInt64(bytes[offset + rest / 2]) << 8
            second = UInt64(bytes[bytes.count - 1])
        }
        state = Self.fold(state ^ first ^ keys.0, second ^ keys.1)
    }

    @inline(__always) func finish() -> Int {
        Int(truncatingIfNeeded: Self.fold(state ^ keys.3, keys.1 | 1))
    }
}
