import DataSources
import JSONKit
import WireSchema

// Components of Protocol/openrpc.json: loads: paging requests and refusals, load states, fetch errors and refused params.
extension SchemaComponents {
    static let pageRequest: Schema = .anyOf([
        .null,
        .object(
            [
                "page": .integer
            ],
            required: ["page"]),
        .object(
            [
                "offset": .integer(in: 0...Int.max)
            ],
            required: ["offset"]),
        .object(
            [
                "cursor": .string
            ],
            required: ["cursor"]),
        .object(
            [
                "before": .string.described(
                    "the page before this cursor, asked for by the names of paging back (a GraphQL source's last and before)")
            ],
            required: ["before"]),
        .object(
            [
                "url": .string
            ],
            required: ["url"]),
    ])

    static let refusal: Schema = .object(
        [
            "started": .constant(false),
            "reason": .string,
        ],
        required: ["started", "reason"]
    ).described("A request that did nothing, and why: a page asked for where none is, a retry with no failed direction")

    static let nextPageResult: Schema = .anyOf([
        .object(
            [
                "started": .constant(true)
            ],
            required: ["started"]),
        .ref("Refusal"),
    ]).described("The result of fetchNextPage and fetchPreviousPage: whether the page was asked for, and if not why")

    static let fetchError: Schema = .object(
        [
            "kind": .oneOfValues(FetchError.Kind.allCases.map { JSON($0.rawValue) }),
            "message": .string,
            "status": .integer(in: 100...599),
            "url": .string,
            "finalURL": .string,
            "keyPath": .string,
            "index": .integer(in: 0...Int.max),
            "field": .string,
            "expected": .string,
            "got": .string,
            "line": .integer,
            "column": .integer,
            "position": .integer,
            "maxDepth": .integer(in: 1...Int.max),
            "maxBodyBytes": .integer(in: 1...Int.max),
            "maxObjectsPerPage": .integer(in: 1...Int.max),
            "serverMessage": .string,
            "body": .string(maxLength: 2048),
            "retryAfterSeconds": .type("number").with {
                $0.minimum = 0
            },
            "reason": .oneOfValues(["first", "page", "offset", "cursor", "before", "url", "noNewObjects", "maxPages"]),
            "pagesLoaded": .integer(in: 0...Int.max),
            "source": .string.described("the child that failed, when a sectioned source passes its child's failure on"),
            "credential": .oneOf([
                .object(
                    [
                        "env": .string
                    ],
                    required: ["env"]),
                .object(
                    [
                        "file": .string
                    ],
                    required: ["file"]),
            ]).described(
                "(credentialNotAllowed) the variable not sent, or the file as it is opened (~ expanded, symbolic links resolved): allowCredential takes it with origin"
            ),
            "origin": .string.described(
                "(credentialNotAllowed) where the value would have gone: scheme://host, with :port when not the default"),
            "graphqlErrors": .array(
                of: .object(
                    [
                        "message": .string,
                        "path": .array(of: .anyOf([.string, .integer])),
                        "code": .string.described("extensions.code, or the error's type (GitHub's RATE_LIMITED)"),
                    ],
                    required: ["message"])
            ).described("(graphql) the response's errors, the first 20"),
            "rateLimited": .constant(true).described(
                "(http, graphql) a 429, a 403 whose headers say the rate limit is spent or ask to retry later, or a GraphQL RATE_LIMITED error; absent otherwise"
            ),
        ],
        required: ["kind", "message"]
    ).described("why a load failed (dataSource/failedWithError, error rows, lastError)")

    static let loadFailure: Schema = .anyOf([
        .ref("FetchError"),
        .object(
            [
                "kind": .constant("children"),
                "message": .string,
                "failures": .array(
                    of: .object(
                        [
                            "source": .string,
                            "error": .ref("LoadFailure"),
                        ],
                        required: ["source", "error"])),
            ],
            required: ["kind", "message", "failures"]),
    ])

    static let loadState: Schema = .anyOf([
        .object(
            [
                "state": .oneOfValues(["idle", "loading", "endReached"])
            ],
            required: ["state"]),
        .object(
            [
                "state": .constant("error"),
                "error": .ref("FetchError"),
            ],
            required: ["state", "error"]),
    ])

    static let loadStates: Schema = .object(
        [
            "refresh": .ref("LoadState"),
            "prepend": .ref("LoadState"),
            "append": .ref("LoadState"),
        ],
        required: ["refresh", "prepend", "append"]
    ).described(
        "a paginated source's load state in each direction: the first page of a run, the page before the first loaded, the page after the last"
    )

    static let fieldErrorData: Schema = .object(
        [
            "field": .string,
            "expected": .string,
            "got": .anything,
        ],
        required: ["field", "expected", "got"],
        additionalProperties: true)
}
