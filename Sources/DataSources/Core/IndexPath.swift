import JSONKit

/// A row's address: `[section, item]` on the wire.
package struct IndexPath: Hashable, Comparable, Sendable, CustomStringConvertible {
    package var section: Int
    package var item: Int

    package init(section: Int, item: Int) {
        self.section = section
        self.item = item
    }

    package static func < (lhs: IndexPath, rhs: IndexPath) -> Bool {
        (lhs.section, lhs.item) < (rhs.section, rhs.item)
    }

    package var description: String { "[\(section), \(item)]" }

    /// Reads `[section, item]`; nil unless it is an array of two integers.
    package init?(json: JSON) {
        guard let elements = json.arrayValue, elements.count == 2,
            let section = elements[0].integerValue, let item = elements[1].integerValue
        else { return nil }
        self.init(section: section, item: item)
    }
}

extension IndexPath {
    /// The path of row `flat`, counting rows across sections, given each section's first row
    /// (`sectionStarts`, ascending): in the last section starting at or before it (empty
    /// sections share their start with the next).
    init(flat: Int, sectionStarts: [Int]) {
        var low = 0, high = sectionStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if sectionStarts[middle] <= flat { low = middle } else { high = middle - 1 }
        }
        self.init(section: low, item: flat - sectionStarts[low])
    }
}
