@testable import DataSources
import Testing

/// The identity index's table stores positions only and reads each entry's hash back
/// through the caller: checked against a dictionary, with hashes made to share home slots.
@Suite struct PositionTableTests {
    @Test(arguments: seeds(40))
    func answersAsADictionaryDoes(seed: Int) {
        var random = Generator(seed: seed)
        // Hashes of the positions, few distinct low bits: long runs of shared home slots.
        var hashOfPosition: [UInt32: Int] = [:]
        var expected: [Int: UInt32] = [:]
        var table = PositionTable(capacity: seed % 3 == 0 ? 0 : 8)
        let hashOfEntry: (UInt32) -> Int = { hashOfPosition[$0]! }
        var nextPosition: UInt32 = 0
        for step in 0..<400 {
            if random.next(3) > 0 || expected.isEmpty {
                let hash = (random.next(1 << 20) << 8) | random.next(4)
                guard expected[hash] == nil else { continue }
                hashOfPosition[nextPosition] = hash
                table.insert(nextPosition, hash: hash, hashOfEntry: hashOfEntry)
                expected[hash] = nextPosition
                nextPosition += 1
            } else {
                let hashes = expected.keys.sorted()
                let hash = hashes[random.next(hashes.count)], position = expected[hash]!
                // Removing by a position that is not the entry's changes nothing.
                table.remove(hash: hash) { $0 == position + 1_000_000 }
                #expect(table.position(of: hash, hashOfEntry: hashOfEntry) == position)
                table.remove(hash: hash) { $0 == position }
                expected[hash] = nil
            }
            for (hash, position) in expected {
                #expect(table.position(of: hash, hashOfEntry: hashOfEntry) == position, "seed \(seed) step \(step)")
            }
            #expect(table.position(of: (1 << 40) | 1, hashOfEntry: hashOfEntry) == nil)
        }
    }
}
