import JSONKit

/// The declarative stand-in for Instant Cocoa's `mappingClass`: which output fields an
/// object has, where each is read from, and what type it must be.
///
/// ```json
/// {"id": {"type": "integer"},
///  "title": "name",                                   // shorthand for {"keyPath": "name"}
///  "author": {"keyPath": "user", "type": "object", "mapping": {"login": {}}},
///  "tags": {"type": "array", "items": {"type": "string"}},
///  "published": {"keyPath": "created_at", "type": "date", "default": null}}
/// ```
///
/// As in the original: a field is read at its key path, else at the literal key of its own
/// name; a missing or null value drops the field (unless a default is given); only the
/// mapped fields are kept; elements that are not objects pass through unmapped.
package struct ObjectMapping: Sendable {
    package enum FieldType: String, Sendable, CaseIterable {
        case any, string, number, integer, boolean, date, url, object, array
    }

    /// How one field is read and checked.
    package indirect enum FieldSpec: Sendable {
        case field(keyPath: JSONKeyPath?, type: FieldType, defaultValue: JSON?, nested: ObjectMapping?, items: FieldSpec?)
    }

    package let fields: [(name: String, spec: FieldSpec)]
    /// `fields` as mapping reads them, unpacked once: taking an indirect enum's payload apart
    /// for every object of every page copies (and counts references to) each of its parts.
    private let readers: [FieldReader]
    /// A name given twice: the object is then built as a tree would be (the last value
    /// read wins, at the first name's place), not written member by member.
    private let repeatsAName: Bool

    package init(fields: [(name: String, spec: FieldSpec)]) {
        self.fields = fields
        readers = fields.map { FieldReader(name: $0.name, spec: $0.spec) }
        repeatsAName = Set(fields.map(\.name)).count != fields.count
    }

    /// One output field: where it is read, its default, and its check.
    private final class FieldReader: Sendable {
        let name: JSON.MemberName
        let keyPath: JSONKeyPath?
        let defaultValue: JSON?
        let check: Check

        init(name: String, spec: FieldSpec) {
            guard case .field(let keyPath, _, let defaultValue, _, _) = spec else { fatalError("FieldSpec has one case") }
            self.name = JSON.MemberName(name)
            self.keyPath = keyPath
            self.defaultValue = defaultValue
            check = Check(spec)
        }
    }

    /// A value's declared type, with the mapping of an object and the check of an array's
    /// elements.
    private final class Check: Sendable {
        let type: FieldType
        let nested: ObjectMapping?
        let items: Check?

        init(_ spec: FieldSpec) {
            guard case .field(_, let type, _, let nested, let items) = spec else { fatalError("FieldSpec has one case") }
            self.type = type
            self.nested = nested
            self.items = items.map(Check.init)
        }
    }

    /// One value that did not fit its declared type.
    package struct Issue: Error, Sendable, Equatable {
        /// Where in the object: `author.name`, `tags[2]`.
        package let field: String
        package let expected: String
        package let got: String

        package init(field: String, expected: String, got: String) {
            self.field = field
            self.expected = expected
            self.got = got
        }
    }

    /// Maps one element. Non-objects pass through unmapped, as in the original.
    package func map(_ element: JSON) -> Result<JSON, Issue> {
        var writer = PackedObjectWriter()
        return map(element.cursor, writer: &writer)
    }

    /// Maps one element read in place, the object written by `writer` (one writer serves a
    /// whole page). Mapped objects are kept as rows: packed.
    package func map(_ element: JSON.Cursor, writer: inout PackedObjectWriter) -> Result<JSON, Issue> {
        guard element.isObject else { return .success(element.value) }
        // Read through borrowed cursors, with no reference counted per field read: `element`
        // keeps the whole value alive until the object is written.
        return withExtendedLifetime(element) {
            do throws(Issue) {
                return .success(try map(object: element.borrowed, path: { nil }, writer: &writer))
            } catch {
                return .failure(error)
            }
        }
    }

    /// `path`: where the object is, for messages (nil at the top); made only when a value
    /// is wrong.
    private func map(object: JSON.BorrowedCursor, path: () -> FieldPath?, writer: inout PackedObjectWriter) throws(Issue) -> JSON {
        guard !repeatsAName else {
            // Made as a tree would be (see `repeatsAName`).
            var output: [(String, JSON)] = []
            try forEachField(of: object, path: path) { name, value in output.append((name.description, value.value)) }
            return .packedObject(output)
        }
        do throws(Issue) {
            try forEachField(of: object, path: path) { name, value in
                switch value {
                case .read(let cursor): writer.append(name, borrowed: cursor)
                case .made(let made): writer.append(name, made)
                }
            }
        } catch {
            // The fields appended so far point into this object, which the caller may drop
            // before it maps the next one with the same writer.
            writer.abandon()
            throw error
        }
        return writer.finish()
    }

    /// An output field's value: as read from the object (most are), or made (a default, a
    /// converted value).
    private enum FieldValue {
        case read(JSON.BorrowedCursor)
        case made(JSON)

        var value: JSON {
            switch self {
            case .read(let cursor): cursor.value
            case .made(let value): value
            }
        }
    }

    /// Calls `body` with each output field, in the mapping's order: read, checked, converted
    /// where the type asks, or defaulted; a missing field without a default is left out.
    @inline(__always)
    private func forEachField(
        of object: JSON.BorrowedCursor, path: () -> FieldPath?, _ body: (JSON.MemberName, FieldValue) -> Void
    ) throws(Issue) {
        for field in readers {
            guard let present = Self.read(field.name, keyPath: field.keyPath, in: object) else {
                if let defaultValue = field.defaultValue { body(field.name, .made(defaultValue)) }
                continue
            }
            switch try Self.convert(present, check: field.check, path: { FieldPath(parent: path(), name: field.name.description) }) {
            case .unchanged: body(field.name, .read(present))
            case .converted(let value): body(field.name, .made(value))
            }
        }
    }

    /// A field's value: at its key path, else at the literal key of its name; nil when
    /// missing or null at both.
    private static func read(_ name: JSON.MemberName, keyPath: JSONKeyPath?, in object: JSON.BorrowedCursor) -> JSON.BorrowedCursor? {
        if let keyPath, let value = object.at(keyPath), !value.isNull { return value }
        guard let value = object.member(name), !value.isNull else { return nil }
        return value
    }

    /// Where a value sits, spelled only for a message.
    private indirect enum FieldPath {
        case member(parent: FieldPath?, name: String)
        case element(parent: FieldPath, index: Int)

        init(parent: FieldPath?, name: String) { self = .member(parent: parent, name: name) }

        var description: String {
            switch self {
            case .member(nil, let name): return name
            case .member(let parent?, let name): return "\(parent.description).\(name)"
            case .element(let parent, let index): return "\(parent.description)[\(index)]"
            }
        }
    }

    /// A checked value: as it was (most are), or made anew (an integral real as an
    /// integer, an array without its nulls or with converted elements, a nested mapping).
    private enum Converted {
        case unchanged
        case converted(JSON)
    }

    /// `path`: where the value is, made only when it is wrong.
    private static func convert(_ value: JSON.BorrowedCursor, check: Check, path: () -> FieldPath) throws(Issue) -> Converted {
        func wrong(_ expected: String) -> Issue { Issue(field: path().description, expected: expected, got: value.kindDescription) }
        func quoted() -> String { value.stringValue.map { "\"\($0)\"" } ?? value.kindDescription }
        switch check.type {
        case .any:
            return .unchanged
        case .string:
            guard value.kind == .string else { throw wrong("a string") }
            return .unchanged
        case .number:
            guard value.kind == .integer || value.kind == .real else { throw wrong("a number") }
            return .unchanged
        case .integer:
            var integral: Int?
            value.withScalar { scalar in
                switch scalar {
                case .integer(let number): integral = Int(number)
                case .real(let real) where real.rounded() == real && abs(real) < 9.0e15: integral = Int(real)
                default: break
                }
            }
            guard let integral else { throw wrong("an integer") }
            return value.kind == .integer ? .unchanged : .converted(JSON(integral))
        case .boolean:
            guard value.kind == .boolean else { throw wrong("a boolean") }
            return .unchanged
        case .date:
            var valid = false
            value.withScalar { if case .string(let bytes) = $0 { valid = ISO8601.isValid(bytes) } }
            guard valid else { throw Issue(field: path().description, expected: "an ISO-8601 date string", got: quoted()) }
            return .unchanged
        case .url:
            var valid = false
            value.withScalar { if case .string(let bytes) = $0 { valid = URLSyntax.hasScheme(bytes) } }
            guard valid else { throw Issue(field: path().description, expected: "an absolute URL string", got: quoted()) }
            return .unchanged
        case .object:
            guard value.isObject else { throw wrong("an object") }
            guard let nested = check.nested else { return .unchanged }
            var writer = PackedObjectWriter()
            return .converted(try nested.map(object: value, path: path, writer: &writer))
        case .array:
            guard value.kind == .array else { throw wrong("an array") }
            guard let items = check.items else { return .unchanged }
            // Checked in place; made anew only when an element is null (dropped) or converted.
            var unchanged = true
            try value.forEachElement { (index, element) throws(Issue) in
                if element.isNull {
                    unchanged = false
                    return
                }
                if case .converted = try convert(element, check: items, path: { .element(parent: path(), index: index) }) {
                    unchanged = false
                }
            }
            if unchanged { return .unchanged }
            var mapped: [JSON] = []
            try value.forEachElement { (index, element) throws(Issue) in
                guard !element.isNull else { return }
                switch try convert(element, check: items, path: { .element(parent: path(), index: index) }) {
                case .unchanged: mapped.append(element.value)
                case .converted(let converted): mapped.append(converted)
                }
            }
            return .converted(.array(mapped))
        }
    }
}

/// ISO-8601 calendar dates and date-times, as APIs send them:
/// `2024-05-01`, `2024-05-01T12:30:00Z`, `2024-05-01T12:30:00.123+02:00`.
enum ISO8601 {
    static func isValid(_ text: String) -> Bool {
        Array(text.utf8).withUnsafeBufferPointer { isValid($0) }
    }

    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        func digits(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for index in range {
                guard bytes[index] >= 48, bytes[index] <= 57 else { return nil }
                value = value * 10 + Int(bytes[index] - 48)
            }
            return value
        }
        guard let _ = digits(0..<4), bytes.count >= 10, bytes[4] == 45, bytes[7] == 45,
            let month = digits(5..<7), (1...12).contains(month),
            let day = digits(8..<10), (1...31).contains(day)
        else { return false }
        if bytes.count == 10 { return true }
        guard bytes[10] == 84 || bytes[10] == 116 || bytes[10] == 32, bytes.count >= 16,
            let hour = digits(11..<13), hour <= 23, bytes[13] == 58,
            let minute = digits(14..<16), minute <= 59
        else { return false }
        var index = 16
        if index < bytes.count, bytes[index] == 58 {
            guard let second = digits(index + 1..<index + 3), second <= 60 else { return false }
            index += 3
            if index < bytes.count, bytes[index] == 46 || bytes[index] == 44 {
                index += 1
                let start = index
                while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 { index += 1 }
                guard index > start else { return false }
            }
        }
        if index == bytes.count { return true }
        if bytes[index] == 90 || bytes[index] == 122 { return index + 1 == bytes.count }
        guard bytes[index] == 43 || bytes[index] == 45, let offsetHour = digits(index + 1..<index + 3), offsetHour <= 23 else {
            return false
        }
        index += 3
        if index == bytes.count { return true }
        if bytes[index] == 58 { index += 1 }
        guard let offsetMinute = digits(index..<index + 2), offsetMinute <= 59 else { return false }
        return index + 2 == bytes.count
    }
}

enum URLSyntax {
    /// RFC 3986: `scheme ":" ...` where scheme is a letter then letters, digits, `+`, `-`, `.`.
    static func hasScheme(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        hasScheme(String(decoding: bytes, as: UTF8.self))
    }

    static func hasScheme(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else { return false }
        let scheme = text[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter else { return false }
        return scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
            && text.index(after: colon) < text.endIndex
    }
}
