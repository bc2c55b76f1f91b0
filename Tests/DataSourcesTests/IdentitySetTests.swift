import Testing
@testable import DataSources
import JSONKit

/// `IdentitySet` must answer as a set of identities does, whatever the hashes: real ones,
/// and hashes cut down until most rows share one (then only comparing rows tells them apart;
/// cut to no bits, every hash is 0, which the table keeps as 1).
@Suite struct IdentitySetTests {
    @Test(arguments: 0..<4)
    func answersAsASetOfIdentities(seed: Int) {
        var random = Generator(seed: seed)
        for identity in [Identity(key: JSONKeyPath("id")), Identity(key: nil)] {
            for keptBits in [64, 0, 4] {
                var set = IdentitySet(identity: identity)
                var seen = Set<JSON>()
                for _ in 0..<(keptBits == 0 ? 300 : 2_000) {  // one chain of everything: quadratic
                    let id = random.next(keptBits == 0 ? 150 : 1_000)
                    let row: JSON = identity.key == nil ? JSON(id) : ["id": JSON(id), "n": JSON(random.next(3))]
                    let hash = identity.hash(of: row)
                    let given = keptBits == 64 ? hash : hash & ((1 << keptBits) - 1)
                    let expected = seen.insert(identity.of(row)).inserted
                    let inserted = set.insert(row.packed(), hash: given)
                    #expect(inserted == expected, "id \(id), \(keptBits) bits of hash")
                }
            }
        }
    }

    @Test func aPlaceholderIsNotTheObjectItStandsFor() {
        var set = IdentitySet(identity: Identity(key: JSONKeyPath("id")))
        let results = [
            set.insert(["id": 1]), set.insert(["id": 1, "title": "again"]),
            set.insert(Placeholder.loadingRow), set.insert(Placeholder.loadingRow),
        ]
        #expect(results == [true, false, true, false])
    }
}
