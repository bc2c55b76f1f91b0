import JSONKit

/// Matches a received message against an expected pattern.
///
/// A pattern is JSON, compared exactly, except for these placeholders:
/// - `"$any"`: any value (the member must be present);
/// - `"$string"`, `"$number"`, `"$integer"`, `"$boolean"`, `"$object"`, `"$array"`: any value of that kind;
/// - `"$absent"`: as an object member's pattern, the member must not be present;
/// - `{"$contains": "text"}`: a string containing `text`;
/// - `{"$partial": true, ...}`: an object with at least the listed members;
/// - a string starting `"$$"` matches the literal string with one `$` removed.
package enum Matcher {
    /// nil when `actual` matches, else where and how it differs.
    package static func mismatch(expected: JSON, actual: JSON?, path: String = "$") -> String? {
        if let text = expected.stringValue, text.hasPrefix("$") {
            if text.hasPrefix("$$") {
                return actual?.stringValue == String(text.dropFirst()) ? nil : differs(path, expected, actual)
            }
            return matchPlaceholder(text, actual: actual, path: path)
        }
        guard let actual else { return "at \(path): expected \(expected), got nothing" }
        if expected.isObject {
            if let needle = expected["$contains"]?.stringValue, expected.count == 1 {
                guard let haystack = actual.stringValue, haystack.contains(needle) else {
                    return "at \(path): expected a string containing \"\(needle)\", got \(actual)"
                }
                return nil
            }
            guard actual.isObject else { return differs(path, expected, actual) }
            let partial = expected["$partial"]?.boolValue == true
            let members = expected.objectMembers ?? []
            for (key, pattern) in members where key != "$partial" {
                if pattern.stringValue == "$absent" {
                    if actual[key] != nil { return "at \(path).\(key): expected no member, got \(actual[key]!)" }
                    continue
                }
                if let problem = mismatch(expected: pattern, actual: actual[key], path: "\(path).\(key)") { return problem }
            }
            if !partial {
                let allowed = Set(members.map(\.key))
                if let extra = actual.objectKeys.first(where: { !allowed.contains($0) }) {
                    return "at \(path).\(extra): unexpected member \(actual[extra]!)"
                }
            }
            return nil
        }
        if let patterns = expected.arrayValue {
            guard let elements = actual.arrayValue else { return differs(path, expected, actual) }
            guard patterns.count == elements.count else {
                return "at \(path): expected an array of \(patterns.count) elements, got \(elements.count): \(actual)"
            }
            for (index, pattern) in patterns.enumerated() {
                if let problem = mismatch(expected: pattern, actual: elements[index], path: "\(path)[\(index)]") { return problem }
            }
            return nil
        }
        return expected == actual ? nil : differs(path, expected, actual)
    }

    private static func matchPlaceholder(_ placeholder: String, actual: JSON?, path: String) -> String? {
        guard let actual else { return "at \(path): expected \(placeholder), got nothing" }
        let kinds: [String: (JSON) -> Bool] = [
            "$any": { _ in true },
            "$string": { $0.kind == .string },
            "$number": { $0.isNumber },
            "$integer": { $0.kind == .integer },
            "$boolean": { $0.kind == .boolean },
            "$object": { $0.isObject },
            "$array": { $0.isArray },
        ]
        guard let test = kinds[placeholder] else {
            return "at \(path): unknown placeholder \(placeholder) in the transcript (write \"$\(placeholder)\" for the literal string)"
        }
        return test(actual) ? nil : "at \(path): expected \(placeholder), got \(actual)"
    }

    private static func differs(_ path: String, _ expected: JSON, _ actual: JSON?) -> String {
        "at \(path): expected \(expected), got \(actual.map { "\($0)" } ?? "nothing")"
    }
}
