import Basics
import Testing

@Suite struct ParallelTests {
    @Test(arguments: [0, 1, 100, Parallel.threshold - 1, Parallel.threshold, 5 * Parallel.threshold + 3])
    func mapGivesWhatALoopGives(count: Int) {
        let values = Array(0..<count)
        #expect(Parallel.map(values) { $0 &* 31 &+ 7 } == values.map { $0 &* 31 &+ 7 })
        // Per-chunk state: each chunk counts its own elements from zero, so the counts
        // restart exactly where chunks start.
        let counted = Parallel.map(values, state: { 0 }) { seen, _ in
            defer { seen += 1 }
            return seen
        }
        let chunks = Parallel.chunkCount(for: count)
        let starts = (0..<chunks).map { count * $0 / chunks }
        let expected = values.map { index in index - starts.last { $0 <= index }! }
        #expect(counted == expected)
    }

    @Test func shortListsStayOnTheCallingThread() {
        #expect(Parallel.chunkCount(for: Parallel.threshold - 1) == 1)
        #expect(Parallel.chunkCount(for: 0) == 1)
        let many = Parallel.chunkCount(for: 100 * Parallel.threshold)
        #expect(
            many == (Parallel.processorCount > 1 ? min(2 * Parallel.processorCount, 200) : 1),
            "two a core, and chunks of threshold / 2 at least")
    }
}
