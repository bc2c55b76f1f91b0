import WireSchema

// Components of Protocol/openrpc.json: the rows, change sets and matches every source answers with.
extension SchemaComponents {
    static let sourceName: Schema = .string.described("the name of a source")

    static let indexPath: Schema = .array(of: .integer(in: 0...Int.max), minItems: 2, maxItems: 2).described("[section, item]")

    static let changedRows: Schema = .anyOf([
        .ref("IndexPath"),
        .array(of: .integer(in: 0...Int.max), minItems: 3, maxItems: 3).described(
            "[section, item, count]: count (2 or more) consecutive rows from item, sent only to clients with the changeRanges capability"),
    ])

    static let row: Schema = .anyOf([
        .not(
            .type("object").with {
                $0.required = ["$placeholder"]
            }),
        .ref("Placeholder"),
    ]).described("any JSON value: an object the source holds, or a placeholder row")

    static let placeholder: Schema = .oneOf([
        .object(
            [
                "$placeholder": .constant("loading")
            ],
            required: ["$placeholder"]),
        .object(
            [
                "$placeholder": .constant("noResults")
            ],
            required: ["$placeholder"]),
        .object(
            [
                "$placeholder": .constant("error"),
                "error": .ref("FetchError"),
            ],
            required: ["$placeholder", "error"]),
        .object(
            [
                "$placeholder": .constant("unloaded"),
                "index": .integer(in: 0...Int.max),
            ],
            required: ["$placeholder", "index"]
        ).described("a counted list's row not loaded yet, at its index"),
    ])

    static let changeSet: Schema = .object(
        [
            "deletedSections": .array(of: .integer(in: 0...Int.max)),
            "insertedSections": .array(of: .integer(in: 0...Int.max)),
            "deleted": .array(of: .ref("ChangedRows")),
            "inserted": .array(of: .ref("ChangedRows")),
            "moved": .array(
                of: .object(
                    [
                        "from": .ref("IndexPath"),
                        "to": .ref("IndexPath"),
                    ],
                    required: ["from", "to"])),
            "updated": .array(of: .ref("ChangedRows")),
        ],
        required: ["deletedSections", "insertedSections", "deleted", "inserted", "moved", "updated"])

    static let predicate: Schema = .oneOf([
        .object(
            [
                "keyPath": keyPath,
                "op": .oneOfValues(["eq", "ne", "lt", "le", "gt", "ge", "in", "contains", "prefix", "exists"]),
                "value": .anything.described(
                    "lt, le, gt, ge: a number or a string; in: an array; prefix: a string; exists: a boolean (default true)"),
            ],
            required: ["keyPath", "op"]),
        .object(
            [
                "and": .array(of: .ref("Predicate"))
            ],
            required: ["and"]),
        .object(
            [
                "or": .array(of: .ref("Predicate"))
            ],
            required: ["or"]),
        .object(
            [
                "not": .ref("Predicate")
            ],
            required: ["not"]),
    ]).described("a filter: a comparison, or and/or/not of predicates, nested at most 32 levels deep")

    static let matchQuery: Schema = .object(
        [
            "query": .string(maxLength: 256),
            "keyPaths": .array(of: keyPath, minItems: 1),
        ],
        required: ["query", "keyPaths"]
    ).described("a fuzzy query over the strings at one or more key paths, scored as fzf's v2 algorithm")

    static let matches: Schema = .anyOf([
        .object(
            [
                "score": .integer,
                "keyPath": .string.described("the key path whose string gave the best score"),
                "positions": .array(of: .integer(in: 0...Int.max)).described(
                    "the matched characters: indexes of Unicode scalars (code points) in that string, ascending"),
            ],
            required: ["score", "keyPath", "positions"]),
        .null,
    ]).described("withMatches: how a row matches its filtered source's query; null for a source without a query, and for placeholders")
}
