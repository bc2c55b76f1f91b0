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
public struct ObjectMapping: Sendable {
    public enum FieldType: String, Sendable, CaseIterable {
        case any, string, number, integer, boolean, date, url, object, array
    }

    /// How one field is read and checked.
    public indirect enum FieldSpec: Sendable {
        case field(keyPath: JSONKeyPath?, type: FieldType, defaultValue: JSON?, nested: ObjectMapping?, items: FieldSpec?)
    }

    public let fields: [(name: String, spec: FieldSpec)]

    public init(fields: [(name: String, spec: FieldSpec)]) {
        self.fields = fields
    }

    /// One value that did not fit its declared type.
    public struct Issue: Error, Sendable, Equatable {
        /// Where in the object: `author.name`, `tags[2]`.
        public let field: String
        public let expected: String
        public let got: String

        public init(field: String, expected: String, got: String) {
            self.field = field
            self.expected = expected
            self.got = got
        }
    }

    /// Maps one element. Non-objects pass through unmapped, as in the original.
    public func map(_ element: JSON) -> Result<JSON, Issue> {
        guard element.isObject else { return .success(element) }
        do throws(Issue) {
            return .success(try map(object: element, path: ""))
        } catch {
            return .failure(error)
        }
    }

    private func map(object: JSON, path: String) throws(Issue) -> JSON {
        var output: [(String, JSON)] = []
        output.reserveCapacity(fields.count)
        for (name, spec) in fields {
            guard case .field(let keyPath, _, let defaultValue, _, _) = spec else { continue }
            var value = keyPath.flatMap { object.value(at: $0) }
            if value == nil || value!.isNull { value = object[name] }
            guard let present = value, !present.isNull else {
                if let defaultValue { output.append((name, defaultValue)) }
                continue
            }
            output.append((name, try ObjectMapping.convert(present, spec: spec, path: path.isEmpty ? name : "\(path).\(name)")))
        }
        // Mapped objects are kept as rows: packed straight from the fields read.
        return .packedObject(output)
    }

    private static func convert(_ value: JSON, spec: FieldSpec, path: String) throws(Issue) -> JSON {
        guard case .field(_, let type, _, let nested, let items) = spec else { return value }
        func wrong(_ expected: String) -> Issue { Issue(field: path, expected: expected, got: value.kindDescription) }
        switch type {
        case .any:
            return value
        case .string:
            guard value.kind == .string else { throw wrong("a string") }
            return value
        case .number:
            guard value.isNumber else { throw wrong("a number") }
            return value
        case .integer:
            if value.kind == .integer { return value }
            if let real = value.doubleValue, real.rounded() == real, abs(real) < 9.0e15 { return JSON(Int(real)) }
            throw wrong("an integer")
        case .boolean:
            guard value.kind == .boolean else { throw wrong("a boolean") }
            return value
        case .date:
            guard let text = value.stringValue, ISO8601.isValid(text) else {
                throw Issue(field: path, expected: "an ISO-8601 date string", got: value.stringValue.map { "\"\($0)\"" } ?? value.kindDescription)
            }
            return value
        case .url:
            guard let text = value.stringValue, URLSyntax.hasScheme(text) else {
                throw Issue(field: path, expected: "an absolute URL string", got: value.stringValue.map { "\"\($0)\"" } ?? value.kindDescription)
            }
            return value
        case .object:
            guard value.isObject else { throw wrong("an object") }
            return try nested.map { mapping throws(Issue) in try mapping.map(object: value, path: path) } ?? value
        case .array:
            guard let elements = value.arrayValue else { throw wrong("an array") }
            guard let items else { return value }
            var mapped: [JSON] = []
            mapped.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() where !element.isNull {
                mapped.append(try convert(element, spec: items, path: "\(path)[\(index)]"))
            }
            return .array(mapped)
        }
    }
}

/// ISO-8601 calendar dates and date-times, as APIs send them:
/// `2024-05-01`, `2024-05-01T12:30:00Z`, `2024-05-01T12:30:00.123+02:00`.
enum ISO8601 {
    static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
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
              let day = digits(8..<10), (1...31).contains(day) else { return false }
        if bytes.count == 10 { return true }
        guard bytes[10] == 84 || bytes[10] == 116 || bytes[10] == 32, bytes.count >= 16,
              let hour = digits(11..<13), hour <= 23, bytes[13] == 58,
              let minute = digits(14..<16), minute <= 59 else { return false }
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
        guard bytes[index] == 43 || bytes[index] == 45, let offsetHour = digits(index + 1..<index + 3), offsetHour <= 23 else { return false }
        index += 3
        if index == bytes.count { return true }
        if bytes[index] == 58 { index += 1 }
        guard let offsetMinute = digits(index..<index + 2), offsetMinute <= 59 else { return false }
        return index + 2 == bytes.count
    }
}

enum URLSyntax {
    /// RFC 3986: `scheme ":" ...` where scheme is a letter then letters, digits, `+`, `-`, `.`.
    static func hasScheme(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else { return false }
        let scheme = text[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter else { return false }
        return scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) } && text.index(after: colon) < text.endIndex
    }
}
