@testable import Daemon
@testable import DataSources
import JSONKit
import Testing

/// The wire shapes of the model's values, which only the wire layer writes (Wire/Encoding.swift).
@Suite struct ModelValueEncodingTests {
    @Test func aChangeSetIsSixListsOfSectionsAndIndexPaths() throws {
        var changes = ChangeSet()
        changes.deletedSections = [2]
        changes.deleted = [IndexPath(section: 0, item: 1)]
        changes.inserted = [IndexPath(section: 1, item: 1)]
        // Moves are written straight into a packed buffer: numbers of one byte and of
        // several (varints), read back through the text.
        changes.moved = [
            ChangeSet.Move(from: IndexPath(section: 0, item: 3), to: IndexPath(section: 0, item: 0)),
            ChangeSet.Move(from: IndexPath(section: 70, item: 1_000_000), to: IndexPath(section: 129, item: 65_536)),
        ]
        changes.updated = [IndexPath(section: 0, item: 0)]
        let expected: JSON = [
            "deletedSections": [2], "insertedSections": [], "deleted": [[0, 1]], "inserted": [[1, 1]],
            "moved": [["from": [0, 3], "to": [0, 0]], ["from": [70, 1_000_000], "to": [129, 65_536]]], "updated": [[0, 0]],
        ]
        #expect(try JSON.parse(changes.json.text()) == expected)
        #expect(changes.json == expected, "the packed value itself, compared with the tree")

        // Enough moves that the list's own size takes a varint of several bytes.
        changes.moved = (0..<40).map {
            ChangeSet.Move(from: IndexPath(section: $0, item: $0 * 100_003), to: IndexPath(section: 39 - $0, item: 1 << 40 + $0))
        }
        let moves = JSON.array(
            changes.moved.map { ["from": [JSON($0.from.section), JSON($0.from.item)], "to": [JSON($0.to.section), JSON($0.to.item)]] })
        #expect(try JSON.parse(changes.json.text())["moved"] == moves)
    }

    @Test func anIndexPathIsAPairAndASortDescriptorNamesItsKeyPath() {
        #expect(IndexPath(section: 3, item: 7).json == [3, 7])
        let descriptor = SortDescriptor(keyPath: JSONKeyPath("a.b"), ascending: false)
        #expect(descriptor.json == ["keyPath": "a.b", "ascending": false])
    }
}
