import Basics
@testable import DataSources
import Testing

/// Parallel's own tests are in BasicsTests; this one needs the model's rows.
@Suite struct ParallelRowsTests {
    @Test func slicesMapFromTheirOwnStart() {
        let rows = RowArray(Array(0..<(3 * Parallel.threshold)))
        let slice = rows[100..<(2 * Parallel.threshold + 100)]
        #expect(Parallel.map(slice) { $0 } == Array(100..<(2 * Parallel.threshold + 100)))
    }
}
