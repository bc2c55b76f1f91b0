import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Per-row work over a long list (hashing its rows, packing them, encoding them), split in contiguous
/// chunks over the machine's cores and joined before returning: the caller's thread stays
/// the only one that ever sees the source change, and the result is what a loop on it
/// would give, in order. Short lists run on the calling thread, where handing out chunks
/// would cost more than it saves.
package enum Parallel {
    /// Fewer elements than this are mapped on the calling thread. At about 0.1–1 µs a row,
    /// 8,192 rows are a millisecond or more: well above what waking a worker costs.
    @usableFromInline package static let threshold = 8192

    /// The machine's online cores, read once (affinity and cgroup quotas are not counted:
    /// with fewer cores usable, chunks only queue up).
    @usableFromInline package static let processorCount: Int = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))

    /// `transform` of each element, in order. `makeState` gives each chunk its own working
    /// storage (a packing scratch, say), so that chunks share nothing they write.
    /// `transform` must only read shared state: chunks run at the same time.
    /// Inlinable, so that callers in other modules get it specialized for their collection:
    /// unspecialized, each element of a slice of rows cost a look-up of generic metadata.
    @inlinable
    package static func map<Elements: RandomAccessCollection & Sendable, State, Result: Sendable>(
        _ elements: Elements, state makeState: @Sendable () -> State, _ transform: @Sendable (inout State, Elements.Element) -> Result
    ) -> [Result] where Elements.Index == Int {
        let count = elements.count
        let chunks = chunkCount(for: count)
        guard chunks > 1 else {
            var state = makeState()
            return elements.map { transform(&state, $0) }
        }
        let start = elements.startIndex
        return [Result](unsafeUninitializedCapacity: count) { buffer, initialized in
            let output = SharedOutput(start: buffer.baseAddress!)
            DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                let lower = count * chunk / chunks, upper = count * (chunk + 1) / chunks
                var state = makeState()
                var target = output.start + lower
                for element in elements[(start + lower)..<(start + upper)] {
                    target.initialize(to: transform(&state, element))
                    target += 1
                }
            }
            initialized = count
        }
    }

    /// The same without per-chunk state.
    @inlinable
    package static func map<Elements: RandomAccessCollection & Sendable, Result: Sendable>(
        _ elements: Elements, _ transform: @Sendable (Elements.Element) -> Result
    ) -> [Result] where Elements.Index == Int {
        map(elements, state: { () }, { _, element in transform(element) })
    }

    /// Calls `body` with each of `pieces` pieces of work (in no given order, on all cores when
    /// the `elements` they cover in all are `threshold` or more), and returns once all are done.
    /// `body` must only read shared state, and write only what its piece owns.
    package static func forEach(pieces: Int, elements: Int, _ body: @Sendable (Int) -> Void) {
        guard processorCount > 1, elements >= threshold, pieces > 1 else {
            for piece in 0..<pieces { body(piece) }
            return
        }
        DispatchQueue.concurrentPerform(iterations: pieces, execute: body)
    }

    /// The same for pieces each worth a thread of its own (tens of kilobytes of work each):
    /// on all cores whenever there are two or more.
    package static func forEach(pieces: Int, _ body: @Sendable (Int) -> Void) {
        forEach(pieces: pieces, elements: threshold, body)
    }

    /// Storage that pieces of work (a map's chunks) write at once, each only its own part.
    ///
    /// Unchecked, and why that is safe: each piece writes (or reads) only the elements that
    /// are its own, `forEach` returns only once every piece is done, and the caller keeps the
    /// storage alive and untouched until then; a raw pointer cannot say so to the compiler.
    @usableFromInline
    package struct SharedOutput<Element>: @unchecked Sendable {
        @usableFromInline package let start: UnsafeMutablePointer<Element>
        @inlinable package init(start: UnsafeMutablePointer<Element>) { self.start = start }
    }

    /// Two chunks a core, so that a core that finishes early takes another, and never a
    /// chunk under `threshold / 2` elements.
    @inlinable
    package static func chunkCount(for count: Int) -> Int {
        guard processorCount > 1, count >= threshold else { return 1 }
        return min(2 * processorCount, count / (threshold / 2))
    }
}
