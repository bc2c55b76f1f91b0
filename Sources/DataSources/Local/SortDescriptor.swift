import JSONKit

/// `{keyPath, ascending}`: one key of a stable sort, as `NSSortDescriptor` was.
public struct SortDescriptor: Sendable {
    public let keyPath: KeyPath
    public let ascending: Bool

    public init(keyPath: KeyPath, ascending: Bool) {
        self.keyPath = keyPath
        self.ascending = ascending
    }

    public var json: JSON { ["keyPath": JSON(keyPath.description), "ascending": JSON(ascending)] }

    /// Sorts stably: objects with equal keys keep their order.
    static func sorted(_ objects: [JSON], by descriptors: [SortDescriptor]) -> [JSON] {
        guard !descriptors.isEmpty else { return objects }
        // Read every key once, not once per comparison.
        let keyed = objects.enumerated().map { index, object in
            (index: index, keys: descriptors.map { object.value(at: $0.keyPath) }, object: object)
        }
        return keyed.sorted { left, right in
            for (position, descriptor) in descriptors.enumerated() {
                let order = JSONOrder.compare(left.keys[position], right.keys[position])
                if order != 0 { return descriptor.ascending ? order < 0 : order > 0 }
            }
            return left.index < right.index
        }.map(\.object)
    }
}

/// A total order on JSON values for sorting: missing and null first, then booleans (false
/// before true), numbers (by value), strings (by Unicode scalar values), arrays, objects
/// (the last two by their compact encoding).
enum JSONOrder {
    static func compare(_ left: JSON?, _ right: JSON?) -> Int {
        let leftRank = rank(left), rightRank = rank(right)
        if leftRank != rightRank { return leftRank < rightRank ? -1 : 1 }
        guard let left, let right else { return 0 }
        switch leftRank {
        case 1:
            return compare(left.boolValue! ? 1 : 0, right.boolValue! ? 1 : 0)
        case 2:
            if let a = left.integerValue, let b = right.integerValue { return compare(a, b) }
            return compare(left.doubleValue!, right.doubleValue!)
        case 3:
            return compare(Array(left.stringValue!.unicodeScalars.map(\.value)), Array(right.stringValue!.unicodeScalars.map(\.value)))
        default:
            return compare(left.encoded(format: .sortedKeys), right.encoded(format: .sortedKeys))
        }
    }

    private static func rank(_ value: JSON?) -> Int {
        guard let value else { return 0 }
        switch value.kind {
        case .null: return 0
        case .boolean: return 1
        case .integer, .real: return 2
        case .string: return 3
        case .array: return 4
        case .object: return 5
        }
    }

    private static func compare<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a == b ? 0 : 1) }

    private static func compare<T: Comparable>(_ a: [T], _ b: [T]) -> Int {
        for (x, y) in zip(a, b) where x != y { return x < y ? -1 : 1 }
        return compare(a.count, b.count)
    }
}
