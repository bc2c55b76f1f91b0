import JSONKit

/// How a source tells two objects apart: by the value at `identityKey` when given (objects
/// lacking it fall back to their whole value), else by whole-value equality.
public struct Identity: Sendable {
    public let key: KeyPath?

    public init(key: KeyPath?) { self.key = key }

    /// The value two objects must share to be the same object. Placeholders are compared
    /// whole, so a loading row never matches data.
    public func of(_ object: JSON) -> JSON {
        guard let key, object.isObject, object[Placeholder.key] == nil, let value = object.value(at: key) else { return object }
        return value
    }
}

/// Where each object sits, by identity: O(1) `indexPath(for:)` and the basis of change sets.
struct IdentityIndex {
    private var positions: [JSON: IndexPath] = [:]

    init() {}

    init(sections: [[JSON]], identity: Identity) {
        positions.reserveCapacity(sections.reduce(0) { $0 + $1.count })
        for (section, objects) in sections.enumerated() {
            for (item, object) in objects.enumerated() {
                let key = identity.of(object)
                // The first of equal objects wins, as `indexOf` did in the original.
                if positions[key] == nil { positions[key] = IndexPath(section: section, item: item) }
            }
        }
    }

    func indexPath(of identity: JSON) -> IndexPath? { positions[identity] }

    /// Re-indexes a single section whose first `from` objects did not move: only the rows
    /// after them are forgotten and indexed again, so appending a page costs the page.
    mutating func reindex(section: Int, from start: Int, old: ArraySlice<JSON>, new: ArraySlice<JSON>, identity: Identity) {
        for object in old {
            let key = identity.of(object)
            if let position = positions[key], position.section == section, position.item >= start { positions[key] = nil }
        }
        for (offset, object) in new.enumerated() {
            let key = identity.of(object)
            if positions[key] == nil { positions[key] = IndexPath(section: section, item: start + offset) }
        }
    }
}
