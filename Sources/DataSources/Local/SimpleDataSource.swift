import Basics
import JSONKit

/// One section of objects the client gives and edits.
package final class SimpleDataSource: DataSource {
    package override var kind: String { "simple" }

    package init(name: String, identity: Identity, objects: [JSON]) {
        super.init(name: name, identity: identity)
        replaceLayout(Self.layout(objects))
    }

    /// Rows are kept packed, a few times smaller than the trees they come as (see
    /// `JSON.packed()`); rows already packed stay as they are.
    private static func layout(_ objects: [JSON]) -> Layout {
        Layout(sections: [RowArray(packedRows(objects))], titles: [""])
    }

    /// Packed on all cores when there are many: a list replaced or created whole.
    private static func packedRows(_ objects: [JSON]) -> [JSON] {
        Parallel.map(objects, state: { PackingScratch() }) { scratch, object in object.cursor.packed(using: &scratch) }
    }

    package var objects: RowArray<JSON> { layout.sections[0] }

    /// Local data is always loaded: the cycle completes at once.
    package override func fetchData() {
        emit(.willLoadData)
        emit(.finishedLoading)
    }

    // MARK: Edits; each emits one change set, and a refused edit changes nothing.
    // An insertion, removal or update says what it did (its change set is the rows it
    // touched), without comparing the list before and after; a replacement is diffed.

    package func replaceObjects(_ objects: [JSON]) {
        replaceLayout(Self.layout(objects))
    }

    package func insert(_ newObjects: [JSON], at index: Int) throws(Refusal) {
        guard (0...objects.count).contains(index) else {
            throw .outOfRange(argument: "index", value: index, valid: 0...objects.count, after: nil, numberOfObjects: objects.count)
        }
        insertRows(Self.packedRows(newObjects), at: index)
    }

    package func remove(at index: Int, count: Int) throws(Refusal) {
        // Compared without adding: index and count come from the client and may be near Int.max.
        guard index >= 0, index <= objects.count else {
            throw .outOfRange(argument: "index", value: index, valid: 0...objects.count, after: nil, numberOfObjects: objects.count)
        }
        guard count >= 0, count <= objects.count - index else {
            throw .outOfRange(
                argument: "count", value: count, valid: 0...objects.count - index, after: index, numberOfObjects: objects.count)
        }
        removeRows(index..<index + count)
    }

    /// Replaces each object that has the same identity as one given.
    package func update(_ replacements: [JSON]) throws(Refusal) {
        var updated: [Int: JSON] = [:]
        for (position, replacement) in replacements.enumerated() {
            guard let path = indexPath(for: replacement) else {
                throw .noObjectWithIdentity(position: position, identity: identity.of(replacement))
            }
            updated[path.item] = replacement.packed()
        }
        replaceRows(updated)
    }
}
