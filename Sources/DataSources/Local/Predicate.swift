import JSONKit

/// A `filter` of a filtered source: comparisons of the value at a key path with a given
/// value, combined with `and`, `or` and `not`.
///
/// Values compare in the total order sectioned sources sort by (`SortKeys`): missing and
/// null first, then booleans, numbers (an integer and a real as doubles), strings (by their
/// UTF-8 bytes), arrays, objects. `eq` and `ne` use it across kinds (so a missing value is
/// `eq null`, and `1` is `eq 1.0`); `lt`, `le`, `gt` and `ge` hold only between values of
/// one kind (numbers with numbers, strings with strings): `price lt 10` never matches a row
/// without a price.
package indirect enum Predicate: Sendable, Equatable {
    case comparison(keyPath: JSONKeyPath, op: Operator, value: Operand)
    case and([Predicate])
    case or([Predicate])
    case not(Predicate)

    package enum Operator: String, Sendable, CaseIterable {
        case eq, ne, lt, le, gt, ge, `in`, contains, prefix, exists
    }

    /// How deep a predicate may nest, `and`, `or`, `not` each counting a level and a
    /// comparison none (Protocol.md): a comparison inside 32 of them is the deepest taken.
    /// Deeper ones are refused where they are read (`FilterDecoding`), so evaluating never
    /// recurses more than 33 calls deep.
    package static let maximumDepth = 32

    /// A comparison of the value at `keyPath` with `value`.
    package static func field(_ keyPath: String, _ op: Operator, _ value: JSON) -> Predicate {
        .comparison(keyPath: JSONKeyPath(keyPath), op: op, value: Operand(value))
    }

    /// Whether `object` satisfies the predicate: one row at a time, what `narrow` answers a
    /// block at a time (the tests hold the two against each other).
    package func matches(_ object: JSON) -> Bool {
        switch self {
        case .comparison(let keyPath, let op, let value):
            return Self.compare(object, keyPath, op, value)
        case .and(let predicates):
            return predicates.allSatisfy { $0.matches(object) }
        case .or(let predicates):
            return predicates.contains { $0.matches(object) }
        case .not(let predicate):
            return !predicate.matches(object)
        }
    }

    /// Narrows `keep` to the rows that satisfy the predicate: a row whose `keep` is false is
    /// not read, and one that fails is set false. The same answers as `matches`, a block of
    /// rows at a time: each part of the predicate is taken apart once for the block, where
    /// taking it apart for every row would count references to it from every core at once,
    /// a row at a time. `and` reads only the rows its earlier parts kept.
    package func narrow(_ keep: inout [Bool], rows: UnsafeBufferPointer<JSON>) {
        precondition(keep.count == rows.count, "a flag a row")
        switch self {
        case .comparison(let keyPath, let op, let value):
            // The block's scalars in one call into JSONKit; arrays and objects read whole after.
            var whole: [Int] = []
            let candidates = keep
            JSON.forEachScalar(in: rows, at: keyPath, where: candidates) { index, scalar in
                if let passes = Self.test(scalar, op, value) { keep[index] = passes } else { whole.append(index) }
            }
            for index in whole { keep[index] = Self.compareWhole(rows[index], keyPath, op, value) }
        case .and(let predicates):
            for predicate in predicates { predicate.narrow(&keep, rows: rows) }
        case .or(let predicates):
            var passed = [Bool](repeating: false, count: keep.count)
            for predicate in predicates {
                // Only the rows no earlier part let through are read again.
                var candidates = keep
                for index in candidates.indices where passed[index] { candidates[index] = false }
                predicate.narrow(&candidates, rows: rows)
                for index in candidates.indices where candidates[index] { passed[index] = true }
            }
            keep = passed
        case .not(let predicate):
            var passed = keep
            predicate.narrow(&passed, rows: rows)
            for index in passed.indices where passed[index] { keep[index] = false }
        }
    }

    private static func compare(_ object: JSON, _ keyPath: JSONKeyPath, _ op: Operator, _ operand: Operand) -> Bool {
        var answer: Bool?
        object.withScalar(at: keyPath) { answer = test($0, op, operand) }
        return answer ?? compareWhole(object, keyPath, op, operand)
    }

    /// The comparison answered from the scalar at the key path, read in place; nil when the
    /// value there is an array or an object that the operator reads whole (`compareWhole`).
    private static func test(_ scalar: JSON.Scalar, _ op: Operator, _ operand: Operand) -> Bool? {
        if case .container = scalar {
            switch op {
            case .exists: return operand.value.boolValue ?? true
            case .prefix: return false
            default: return nil
            }
        }
        switch op {
        case .eq: return operand.order(ofScalar: scalar) == 0
        case .ne: return operand.order(ofScalar: scalar) != 0
        case .lt, .le, .gt, .ge: return operand.order(ofScalar: scalar, sameKindOnly: true).map { holds(op, $0) } ?? false
        case .in: return operand.elements.contains { $0.order(ofScalar: scalar) == 0 }
        case .exists:
            if case .missing = scalar { return !(operand.value.boolValue ?? true) }
            return operand.value.boolValue ?? true
        case .prefix:
            if case .string(let bytes) = scalar { return bytes.starts(with: operand.bytes) }
            return false
        case .contains:
            if case .string(let bytes) = scalar { return operand.rank == .string && Self.contains(bytes, operand.bytes) }
            return false
        }
    }

    /// Whether an order (-1, 0 or 1 of the row's value against the operand) satisfies `op`.
    private static func holds(_ op: Operator, _ order: Int) -> Bool {
        switch op {
        case .lt: return order < 0
        case .le: return order <= 0
        case .gt: return order > 0
        default: return order >= 0
        }
    }

    /// The comparison when the value at the key path is an array or an object: compared whole
    /// (its encoding with sorted keys), or for `contains`, an array's elements one by one.
    private static func compareWhole(_ object: JSON, _ keyPath: JSONKeyPath, _ op: Operator, _ operand: Operand) -> Bool {
        switch op {
        case .eq: return operand.order(of: object, at: keyPath) == 0
        case .ne: return operand.order(of: object, at: keyPath) != 0
        case .lt, .le, .gt, .ge: return operand.order(of: object, at: keyPath, sameKindOnly: true).map { holds(op, $0) } ?? false
        case .in: return operand.elements.contains { $0.order(of: object, at: keyPath) == 0 }
        case .contains:
            guard let elements = object.value(at: keyPath)?.arrayValue else { return false }
            return elements.contains { operand.order(of: $0, at: Self.wholeValue) == 0 }
        case .exists: return operand.value.boolValue ?? true
        case .prefix: return false
        }
    }

    private static let wholeValue = JSONKeyPath("")

    private static func contains(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard haystack.count >= needle.count else { return false }
        let first = needle[0]
        for start in 0...(haystack.count - needle.count) where haystack[start] == first {
            var offset = 1
            while offset < needle.count, haystack[start + offset] == needle[offset] { offset += 1 }
            if offset == needle.count { return true }
        }
        return false
    }

    /// A comparison's value, read once into what comparing a row with it needs (each row
    /// is compared in place, without building its value).
    package struct Operand: Sendable, Equatable {
        package let value: JSON
        let rank: SortKey.Rank
        /// A string's UTF-8 bytes, or an array's or object's compact encoding with sorted keys.
        let bytes: [UInt8]
        let integer: Int64?
        let real: Double?
        /// `in`: each element, read the same way.
        let elements: [Operand]

        package init(_ value: JSON) {
            self.value = value
            var integer: Int64?, real: Double?, bytes: [UInt8] = [], elements: [Operand] = []
            switch value.kind {
            case .null: rank = .null
            case .boolean: rank = .boolean
            case .integer:
                rank = .number
                integer = value.integerValue.map(Int64.init)
            case .real:
                rank = .number
                real = value.doubleValue
            case .string:
                rank = .string
                bytes = Array((value.stringValue ?? "").utf8)
            case .array:
                rank = .array
                bytes = value.encoded(format: .sortedKeys)
                elements = (value.arrayValue ?? []).map(Operand.init)
            case .object:
                rank = .object
                bytes = value.encoded(format: .sortedKeys)
            }
            (self.integer, self.real, self.bytes, self.elements) = (integer, real, bytes, elements)
        }

        package static func == (left: Operand, right: Operand) -> Bool { left.value == right.value }

        /// -1, 0 or 1: the value at `keyPath` of `object` against this one in the sort order;
        /// nil when `sameKindOnly` and they are of different kinds.
        func order(of object: JSON, at keyPath: JSONKeyPath, sameKindOnly: Bool = false) -> Int? {
            var result: Int?, isContainer = false
            object.withScalar(at: keyPath) { scalar in
                if case .container = scalar { isContainer = true } else { result = order(ofScalar: scalar, sameKindOnly: sameKindOnly) }
            }
            if isContainer, let found = object.value(at: keyPath) {
                let rowRank: SortKey.Rank = found.kind == .array ? .array : .object
                guard rowRank == rank else { return sameKindOnly ? nil : (rowRank.rawValue < rank.rawValue ? -1 : 1) }
                return found.encoded(format: .sortedKeys).withUnsafeBufferPointer { Self.compare($0, bytes) }
            }
            return result
        }

        /// The same for a scalar read in place (not `.container`: an array or an object is
        /// compared whole, by `order(of:at:)`).
        func order(ofScalar scalar: JSON.Scalar, sameKindOnly: Bool = false) -> Int? {
            let rowRank: SortKey.Rank
            switch scalar {
            case .missing, .null: rowRank = .null
            case .boolean: rowRank = .boolean
            case .integer, .real: rowRank = .number
            case .string: rowRank = .string
            case .container: preconditionFailure("an array or an object is compared whole")
            }
            guard rowRank == rank else { return sameKindOnly ? nil : (rowRank.rawValue < rank.rawValue ? -1 : 1) }
            switch scalar {
            case .boolean(let flag): return Self.sign(flag ? 1 : 0, value.boolValue == true ? 1 : 0)
            case .integer(let number):
                if let integer { return Self.sign(number, integer) }
                return Self.sign(Double(number), real ?? 0)
            case .real(let number): return Self.sign(number, integer.map(Double.init) ?? real ?? 0)
            case .string(let text): return Self.compare(text, bytes)
            default: return 0
            }
        }

        private static func sign<T: Comparable>(_ left: T, _ right: T) -> Int { left < right ? -1 : (left == right ? 0 : 1) }

        private static func compare(_ left: UnsafeBufferPointer<UInt8>, _ right: [UInt8]) -> Int {
            let shorter = min(left.count, right.count)
            var index = 0
            while index < shorter {
                if left[index] != right[index] { return left[index] < right[index] ? -1 : 1 }
                index += 1
            }
            return sign(left.count, right.count)
        }
    }
}

/// A `match`: a fuzzy query over the strings at one or more key paths.
package struct MatchQuery: Sendable, Equatable {
    package let query: String
    package let keyPaths: [JSONKeyPath]

    package init(query: String, keyPaths: [JSONKeyPath]) {
        self.query = query
        self.keyPaths = keyPaths
    }
}
