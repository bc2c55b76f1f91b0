import Basics
import DataSources
import JSONKit
import WireSchema

/// A filtered source's `filter` and `match` (`createSource`, `setFilter`).
enum FilterDecoding {
    static let predicateExpectation = "an object {keyPath, op, value}, {and: [...]}, {or: [...]} or {not: {...}}"
    static let operators = Predicate.Operator.allCases.map(\.rawValue)

    /// `{keyPath, op, value}`, `{and: [P, ...]}`, `{or: [P, ...]}` or `{not: P}`, nested at most
    /// `Predicate.maximumDepth` levels deep, each `and`, `or` and `not` a level (Protocol.md): a
    /// comparison alone is 0 levels, `{not: comparison}` 1; 32 nested `not`s around a
    /// comparison are taken, and a 33rd is refused, naming its field.
    static func predicate(_ value: JSON, _ field: String) throws(FieldError) -> Predicate {
        try predicate(value, field, levels: 0)
    }

    /// `levels`: how many `and`, `or` and `not` hold this predicate.
    private static func predicate(_ value: JSON, _ field: String, levels: Int) throws(FieldError) -> Predicate {
        var reader = try ObjectReader(value, field: field, expected: predicateExpectation)
        /// This predicate is an `and`, `or` or `not`: a level more than the ones holding it.
        func level() throws(FieldError) {
            guard levels < Predicate.maximumDepth else {
                throw FieldError(
                    field: field, expected: "a predicate nested at most \(Predicate.maximumDepth) levels deep (and, or, not)",
                    got: JSON(value.kind.rawValue),
                    message: "\"\(field)\": the filter nests more than \(Predicate.maximumDepth) levels deep (each and, or, not is a level)"
                )
            }
        }
        func list(_ key: String) throws(FieldError) -> [Predicate]? {
            guard let member = reader.rawValue(key) else { return nil }
            try level()
            var predicates: [Predicate] = []
            for (index, element) in try Decode.array(member, reader.path(key), expected: "an array of predicates").enumerated() {
                predicates.append(try predicate(element, "\(reader.path(key))[\(index)]", levels: levels + 1))
            }
            return predicates
        }
        let result: Predicate
        if let predicates = try list("and") {
            result = .and(predicates)
        } else if let predicates = try list("or") {
            result = .or(predicates)
        } else if let inner = reader.rawValue("not") {
            try level()
            result = .not(try predicate(inner, reader.path("not"), levels: levels + 1))
        } else {
            let keyPath = try reader.required("keyPath", Decode.keyPath, expected: "a non-empty key path string")
            let op = try reader.required(
                "op",
                { value, field throws(FieldError) in
                    guard let name = value.stringValue else {
                        throw .mistyped(field, expected: "one of " + operators.joined(separator: ", "), got: value)
                    }
                    guard let op = Predicate.Operator(rawValue: name) else {
                        throw FieldError(
                            field: field, expected: "one of " + operators.joined(separator: ", "), got: value,
                            message: "\"\(field)\": unknown operator \"\(name)\"; expected one of " + operators.joined(separator: ", "))
                    }
                    return op
                }, expected: "one of " + operators.joined(separator: ", "))
            let operand: JSON
            if let given = reader.rawValue("value") {
                operand = given
            } else if op == .exists {
                operand = true
            } else {
                throw .missing(reader.path("value"), expected: "the value to compare with")
            }
            try checkOperand(operand, of: op, reader.path("value"))
            result = .comparison(keyPath: keyPath, op: op, value: Predicate.Operand(operand.packed()))
        }
        try reader.finish()
        return result
    }

    /// An operand of the kind its operator compares.
    private static func checkOperand(_ value: JSON, of op: Predicate.Operator, _ field: String) throws(FieldError) {
        let expected: String
        switch op {
        case .lt, .le, .gt, .ge:
            guard ![.integer, .real, .string].contains(value.kind) else { return }
            expected = "a number or a string (\"\(op.rawValue)\" orders numbers with numbers, strings with strings)"
        case .in:
            guard value.kind != .array else { return }
            expected = "an array of values (\"in\" matches a value equal to one of them)"
        case .prefix:
            guard value.kind != .string else { return }
            expected = "a string (\"prefix\" matches strings that start with it)"
        case .exists:
            guard value.kind != .boolean else { return }
            expected = "a boolean (\"exists\": true matches rows that have the key path)"
        case .eq, .ne, .contains:
            return
        }
        throw FieldError(
            field: field, expected: expected, got: JSON(value.kind.rawValue),
            message: "\"\(field)\" must be \(expected), got \(value.kindDescription)")
    }

    static let matchExpectation = "an object {query, keyPaths}"

    /// `{query, keyPaths: [KEYPATH, ...]}`, at least one key path.
    static func match(_ value: JSON, _ field: String) throws(FieldError) -> MatchQuery {
        var reader = try ObjectReader(value, field: field, expected: matchExpectation)
        let query = try reader.required(
            "query", { value, field throws(FieldError) in try Decode.string(value, field) }, expected: "a string")
        guard query.unicodeScalars.count <= maximumQueryLength else {
            throw FieldError(
                field: reader.path("query"), expected: "a string of at most \(maximumQueryLength) characters", got: JSON(query))
        }
        let keyPaths = try reader.required(
            "keyPaths",
            { value, field throws(FieldError) in
                let elements = try Decode.array(value, field, expected: "an array of key paths")
                guard !elements.isEmpty else {
                    throw FieldError(
                        field: field, expected: "at least one key path", got: value,
                        message: "\"\(field)\" must name at least one key path to match the query in")
                }
                var keyPaths: [JSONKeyPath] = []
                for (index, element) in elements.enumerated() { keyPaths.append(try Decode.keyPath(element, "\(field)[\(index)]")) }
                return keyPaths
            }, expected: "an array of key paths")
        try reader.finish()
        return MatchQuery(query: query, keyPaths: keyPaths)
    }

    /// A query is typed: past this, scoring every row would cost more than any list is worth.
    static let maximumQueryLength = 256
}

// The shapes other methods' params take from a source's spec.
extension FilterDecoding {
    static let predicateShape = Shape(.ref("Predicate"), expected: predicateExpectation) { value, field throws(FieldError) in
        try predicate(value, field)
    }
    static let matchShape = Shape(.ref("MatchQuery"), expected: matchExpectation) { value, field throws(FieldError) in
        try match(value, field)
    }

    /// A filtered source's `fill`: a screen's rows (an editor passes its window's height).
    static let fillShape = Shape<Int>.integer(in: 1...10_000)
    static let fillDoc =
        "while fewer rows than this pass and the child's last row is its loading row, the child's next page is asked for; it stops at this many, at the child's last page or on a failure"
}
