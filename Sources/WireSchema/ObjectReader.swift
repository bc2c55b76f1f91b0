import DataSources
import JSONKit

/// Reads the members of one JSON object by name, each into a checked Swift value, and
/// refuses members nobody asked for (naming the closest known one). Every number is
/// range-checked here, where it is decoded, so no arithmetic on client input can trap.
///
/// `field` is the object's own path (`""` for `params`); members are reported as
/// `path.member`. Transcripts and fixture files are read with it too (TranscriptFormat):
/// files are input like the wire, hence `package`.
package struct ObjectReader {
    package let field: String
    private let object: JSON
    /// The names asked for, each once (a handful: a list beats a set here, as every request
    /// reads its params through one of these).
    private var read: [String] = []
    /// How many of them the object has: when that is all its members, none is unknown.
    private var presentRead = 0

    /// `value` nil (absent `params`) reads as an empty object.
    package init(_ value: JSON?, field: String, expected: String = "an object") throws(FieldError) {
        self.field = field
        guard let value else {
            object = [:]
            return
        }
        guard value.isObject else {
            guard field.isEmpty else { throw .mistyped(field, expected: expected, got: value) }
            throw FieldError(
                field: "params", expected: "an object", got: JSON(value.kind.rawValue),
                message: "params must be an object with named members, got \(value.kindDescription)")
        }
        object = value
    }

    package func path(_ key: String) -> String { field.isEmpty ? key : "\(field).\(key)" }

    /// The object as sent, every member included.
    package var wholeObject: JSON { object }

    /// The member, nil when absent or null; marks it as known.
    package mutating func value(_ key: String) -> JSON? {
        guard let value = rawValue(key), !value.isNull else { return nil }
        return value
    }

    /// The member as sent, null included; marks it as known.
    package mutating func rawValue(_ key: String) -> JSON? {
        let value = object[key]
        markRead(key, present: value != nil)
        return value
    }

    /// The member read in place, null included; marks it as known. What the scalar readers
    /// take first: a value made of each member costs an allocation, on every request.
    private mutating func member(_ key: String) -> JSON.Cursor? {
        let member = object.cursor.member(key)
        markRead(key, present: member != nil)
        return member
    }

    private mutating func markRead(_ key: String, present: Bool) {
        guard !read.contains(key) else { return }
        if read.isEmpty { read.reserveCapacity(4) }  // one allocation for the usual few names
        read.append(key)
        if present { presentRead += 1 }
    }

    /// Refuses members that were never read: a typo must not be silently ignored.
    package func finish() throws(FieldError) {
        guard presentRead != object.count else { return }
        for key in object.objectKeys where !read.contains(key) {
            let known = read.sorted()
            var message = "unknown member \"\(path(key))\""
            if let closest = ObjectReader.closest(to: key, among: known) { message += "; did you mean \"\(path(closest))\"?" }
            throw FieldError(
                field: path(key), expected: known.isEmpty ? "no members" : "one of \(known.joined(separator: ", "))",
                got: JSON(key), message: message,
                context: ObjectReader.closest(to: key, among: known).map { [("didYouMean", JSON(path($0)))] } ?? [])
        }
    }

    // MARK: Typed members

    package mutating func required<T>(
        _ key: String, _ decode: (JSON, String) throws(FieldError) -> T, expected: String
    ) throws(FieldError) -> T {
        guard let value = value(key) else { throw .missing(path(key), expected: expected) }
        return try decode(value, path(key))
    }

    /// The same, trying `inPlace` on the member where it lies first; it answers nil for
    /// anything it does not take, which `decode` then refuses by name.
    package mutating func required<T>(
        _ key: String, inPlace: (JSON.Cursor) -> T?, _ decode: (JSON, String) throws(FieldError) -> T,
        expected: String
    ) throws(FieldError) -> T {
        if let member = member(key), let decoded = inPlace(member) { return decoded }
        return try required(key, decode, expected: expected)
    }

    package mutating func optional<T>(_ key: String, _ decode: (JSON, String) throws(FieldError) -> T) throws(FieldError) -> T? {
        guard let value = value(key) else { return nil }
        return try decode(value, path(key))
    }

    package mutating func string(_ key: String, nonEmpty: Bool = false) throws(FieldError) -> String {
        let expected = nonEmpty ? "a non-empty string" : "a string"
        return try required(
            key, inPlace: { member in member.stringValue.flatMap { nonEmpty && $0.isEmpty ? nil : $0 } },
            { value, field throws(FieldError) in try Decode.string(value, field, nonEmpty: nonEmpty) }, expected: expected)
    }

    package mutating func optionalString(_ key: String, nonEmpty: Bool = false) throws(FieldError) -> String? {
        try optional(key) { value, field throws(FieldError) in try Decode.string(value, field, nonEmpty: nonEmpty) }
    }

    package mutating func integer(_ key: String, in range: ClosedRange<Int>) throws(FieldError) -> Int {
        try required(
            key, { value, field throws(FieldError) in try Decode.integer(value, field, in: range) },
            expected: Decode.integerExpectation(range))
    }

    package mutating func optionalInteger(_ key: String, in range: ClosedRange<Int>) throws(FieldError) -> Int? {
        try optional(key) { value, field throws(FieldError) in try Decode.integer(value, field, in: range) }
    }

    package mutating func optionalNumber(
        _ key: String, in range: ClosedRange<Double>, excludingLowerBound: Bool = false
    ) throws(FieldError) -> Double? {
        try optional(key) { value, field throws(FieldError) in
            try Decode.number(value, field, in: range, excludingLowerBound: excludingLowerBound)
        }
    }

    package mutating func optionalBool(_ key: String) throws(FieldError) -> Bool? {
        // Absent, the usual case for a flag, reads nothing more.
        guard member(key) != nil else { return nil }
        return try optional(key) { value, field throws(FieldError) in try Decode.bool(value, field) }
    }

    package mutating func optionalKeyPath(_ key: String) throws(FieldError) -> JSONKeyPath? {
        try optional(key) { value, field throws(FieldError) in try Decode.keyPath(value, field) }
    }

    /// A nested object's reader; the caller finishes it.
    package mutating func optionalObject(_ key: String, expected: String) throws(FieldError) -> ObjectReader? {
        guard let value = value(key) else { return nil }
        return try ObjectReader(value, field: path(key), expected: expected)
    }

    // MARK: Closest name

    /// The known name a typo most likely meant: same letters ignoring case, or within a
    /// small edit distance.
    package static func closest(to key: String, among known: [String]) -> String? {
        let lower = key.lowercased()
        if let same = known.first(where: { $0.lowercased() == lower }) { return same }
        let scored = known.map { ($0, editDistance(lower, $0.lowercased())) }.filter { $0.1 <= max(2, key.count / 3) }
        return scored.min { $0.1 < $1.1 }?.0
    }

    package static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8.prefix(64)), b = Array(b.utf8.prefix(64))
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}

/// Checked conversions of one JSON value, naming `field` when they refuse.
package enum Decode {
    package static func string(_ value: JSON, _ field: String, nonEmpty: Bool = false) throws(FieldError) -> String {
        let expected = nonEmpty ? "a non-empty string" : "a string"
        guard let text = value.stringValue else { throw .mistyped(field, expected: expected, got: value) }
        if nonEmpty, text.isEmpty { throw .invalid(field, expected: expected, got: value) }
        return text
    }

    package static func integerExpectation(_ range: ClosedRange<Int>) -> String {
        switch (range.lowerBound, range.upperBound) {
        case (0, Int.max): "a non-negative integer"
        case (1, Int.max): "a positive integer"
        case (Int.min, Int.max): "an integer"
        default: "an integer in \(range.lowerBound)...\(range.upperBound)"
        }
    }

    /// An integer within `range`. Reals are refused, even integral ones (`1.0`, `-0.0`):
    /// the protocol's counts and indices are integers.
    package static func integer(_ value: JSON, _ field: String, in range: ClosedRange<Int>) throws(FieldError) -> Int {
        let expected = integerExpectation(range)
        guard value.kind == .integer, let integer = value.integerValue else { throw .mistyped(field, expected: expected, got: value) }
        guard range.contains(integer) else { throw .invalid(field, expected: expected, got: value) }
        return integer
    }

    /// A finite number within `range` (integers accepted).
    package static func number(
        _ value: JSON, _ field: String, in range: ClosedRange<Double>, excludingLowerBound: Bool
    ) throws(FieldError) -> Double {
        let lower = excludingLowerBound ? "(\(format(range.lowerBound))" : "[\(format(range.lowerBound))"
        let expected = "a number in \(lower), \(format(range.upperBound))]"
        guard value.isNumber, let number = value.doubleValue else { throw .mistyped(field, expected: expected, got: value) }
        guard number.isFinite, range.contains(number), !(excludingLowerBound && number == range.lowerBound) else {
            throw .invalid(field, expected: expected, got: value)
        }
        return number
    }

    private static func format(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }

    package static func bool(_ value: JSON, _ field: String) throws(FieldError) -> Bool {
        guard let bool = value.boolValue else { throw .mistyped(field, expected: "a boolean", got: value) }
        return bool
    }

    package static func keyPath(_ value: JSON, _ field: String) throws(FieldError) -> JSONKeyPath {
        let expected = "a non-empty key path string"
        guard let text = value.stringValue else { throw .mistyped(field, expected: expected, got: value) }
        guard !text.isEmpty else { throw .invalid(field, expected: expected, got: value) }
        return JSONKeyPath(text)
    }

    /// The name of a source (its existence is the registry's to check).
    package static func sourceName(_ value: JSON, _ field: String) throws(FieldError) -> String {
        guard let text = value.stringValue else { throw .mistyped(field, expected: "the name of an existing source", got: value) }
        return text
    }

    package static func array(_ value: JSON, _ field: String, expected: String = "an array") throws(FieldError) -> [JSON] {
        guard let elements = value.arrayValue else { throw .mistyped(field, expected: expected, got: value) }
        return elements
    }

    /// `[section, item]`, both non-negative integers.
    package static func indexPath(_ value: JSON, _ field: String) throws(FieldError) -> IndexPath {
        let expected = "[section, item], an array of two non-negative integers"
        if let indexPath = indexPath(inPlace: value.cursor) { return indexPath }
        guard let elements = value.arrayValue, elements.count == 2 else { throw .mistyped(field, expected: expected, got: value) }
        let section = try integer(elements[0], "\(field)[0]", in: 0...Int.max)
        let item = try integer(elements[1], "\(field)[1]", in: 0...Int.max)
        return IndexPath(section: section, item: item)
    }

    /// A valid index path read where it lies, with no value made of its elements (most
    /// requests carry one); nil for anything else, which `indexPath(_:_:)` refuses by name.
    package static func indexPath(inPlace value: JSON.Cursor) -> IndexPath? {
        var count = 0, first: Int64 = -1, second: Int64 = -1
        value.forEachElement { index, element in
            count += 1
            element.withScalar { scalar in
                guard case .integer(let integer) = scalar else { return }
                if index == 0 { first = integer } else if index == 1 { second = integer }
            }
        }
        guard count == 2, first >= 0, second >= 0, let section = Int(exactly: first), let item = Int(exactly: second) else { return nil }
        return IndexPath(section: section, item: item)
    }
}
