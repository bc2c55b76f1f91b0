import WireSchema

// Components of Protocol/openrpc.json: describeSource's answer.
extension SchemaComponents {
    static let sourceDescription: Schema = .object(
        [
            "name": .string,
            "kind": .oneOfValues(["simple", "sectioned", "multi", "remote", "paginated", "filtered"]),
            "numberOfSections": .integer(in: 0...Int.max),
            "sectionTitles": .type("array"),
            "counts": .array(of: .integer(in: 0...Int.max)),
            "isFetching": .boolean,
            "revision": .integer(in: 0...Int.max),
            "identityKey": .string,
            "children": .array(of: .string),
            "source": .string,
            "sectioningKey": .string,
            "sortDescriptors": .array(of: .ref("SortDescriptor")),
            "sources": .array(of: .string),
            "preserveSections": .boolean,
            "filter": .anyOf([
                .ref("Predicate"),
                .null,
            ]),
            "match": .anyOf([
                .ref("MatchQuery"),
                .null,
            ]),
            "fill": FilterDecoding.fillShape.schema,
            "remoteConfiguration": .object(
                [
                    "baseURL": .string,
                    "headers": .map(
                        of: .anyOf([
                            .string,
                            .object(
                                [
                                    "env": .string,
                                    "prefix": .string,
                                ],
                                required: ["env"]),
                            .object(
                                [
                                    "file": .string,
                                    "prefix": .string,
                                ],
                                required: ["file"]),
                        ]).described(
                            "secret values as \"<redacted>\"; values read from the environment or a file as where they come from, never the value"
                        )),
                    "timeoutSeconds": .number,
                    "compression": .constant(false).described("shown only when false"),
                    "proxy": .anyOf([
                        .string,
                        .null,
                    ]).described("shown only when given; the URL without its credentials"),
                ],
                required: ["baseURL", "headers", "timeoutSeconds"]),
            "apiPath": .string,
            "queryParameters": .map(of: .string),
            "placeholderStorageOptions": .array(of: .oneOfValues(["loading", "noResults", "errors"])),
            "limits": .ref("Limits"),
            "keyPath": .string,
            "lastURL": .string,
            "lastError": .ref("FetchError"),
            "lastWarning": .ref("FetchError").described(
                "the errors a GraphQL response sent beside its rows (kind graphql); gone after a new load from the first page"),
            "request": .ref("RequestBody"),
            "graphql": .ref("GraphQLQuery"),
            "actions": .map(of: ActionDecoding.action.schema()).described("the actions, as declared (performAction)"),
            "pendingMutations": .array(
                of: .object(
                    [
                        "mutation": .string, "action": .string, "identity": .anything,
                        "values": .type("object").described("as passed, members named like secrets redacted"),
                        "status": .oneOfValues(["waiting", "inFlight", "queued"]).described(
                            "waiting for the ones before it, on its way, or queued to be sent again"),
                        "attempts": .integer(in: 0...Int.max).described("the requests that failed and were queued"),
                        "lastError": .ref("FetchError"),
                    ],
                    required: ["mutation", "action", "values", "status", "attempts"])
            ).described("the actions called and not yet settled, in the order made (sent in that order)"),
            "paginatorKeys": .object(
                [
                    "pageSize": .string(minLength: 1),
                    "currentPage": .string(minLength: 1),
                    "numberOfPages": .string(minLength: 1),
                    "numberOfTotalObjects": .string(minLength: 1),
                ]),
            "requestKeys": .object(
                [
                    "currentPage": .string(minLength: 1),
                    "pageSize": .string(minLength: 1),
                ]),
            "firstPage": .integer(in: 0...Int.max),
            "initialPage": .integer(in: 0...Int.max),
            "initialOffset": .integer(in: 0...Int.max),
            "initialCursor": .string,
            "window": .type("object").with {
                $0.properties = [
                    ("maxPages", .integer(in: 1...Int.max)),
                    ("maxObjects", .integer(in: 1...Int.max)),
                ]
                $0.additionalProperties = false
            },
            "pagesDropped": .integer(in: 0...Int.max).described("pages the window dropped in this run (with a window only)"),
            "metadataKeyPath": .string,
            "pagination": .ref("Pagination"),
            "prefetchDistance": .integer(in: 0...Int.max),
            "pageSize": .type("integer", "null").with {
                $0.minimum = 0
            },
            "currentPage": .type("integer", "null").with {
                $0.minimum = 0
            },
            "numberOfPages": .type("integer", "null").with {
                $0.minimum = 0
            },
            "numberOfTotalResults": .type("integer", "null").with {
                $0.minimum = 0
            },
            "hasMorePages": .boolean,
            "numberOfObjects": .integer(in: 0...Int.max),
            "nextPage": .ref("PageRequest"),
            "previousPage": .ref("PageRequest"),
            "pagesLoaded": .integer(in: 0...Int.max),
            "duplicatesDropped": .integer(in: 0...Int.max),
            "loadStates": .ref("LoadStates"),
            "jumpThreshold": .integer(in: 1...Int.max),
            "placeholders": .object(
                [
                    "requested": .oneOfValues(["trailing", "counted"]),
                    "inForce": .oneOfValues(["trailing", "counted"]),
                    "reason": .string.described("why counted placeholders, asked for, are not in force"),
                ],
                required: ["requested", "inForce"]),
            "capabilities": .object(
                [
                    "pageBackwards": .boolean,
                    "jump": .boolean,
                    "countedPlaceholders": .boolean,
                    "reasons": .type("object").with {
                        $0.properties = [
                            ("pageBackwards", .string),
                            ("jump", .string),
                        ]
                        $0.additionalProperties = false
                    }.described("why each capability that is false is"),
                ],
                required: ["pageBackwards", "jump", "countedPlaceholders", "reasons"]),
            "jumps": .integer(in: 0...Int.max).described("jumps made: far unloaded rows displayed, each loading its page as a new run"),
            "cache": .object(
                [
                    "enabled": .boolean,
                    "maxAgeSeconds": .type("number").with {
                        $0.minimum = 0
                    },
                    "maxPages": .integer(in: 1...Int.max),
                    "available": .boolean.described("the daemon has a usable cache file"),
                ],
                required: ["enabled", "maxPages", "available"]),
            "stale": .boolean.described("the rows shown came from the persisted cache and no response has confirmed them yet"),
            "cachedAt": .string(format: "date-time").described("while stale: when the cached rows were stored or last confirmed"),
            "refreshIntervalSeconds": .number(in: 1...86400),
            "refresh": .object(
                [
                    "intervalSeconds": .type("number").with {
                        $0.minimum = 1
                    },
                    "nextRefreshAt": .string(format: "date-time").described("RFC 3339, UTC, to the millisecond"),
                    "consecutiveFailures": .integer(in: 0...Int.max),
                    "lastError": .ref("FetchError"),
                ],
                required: ["intervalSeconds", "consecutiveFailures"]),
            "rateLimit": .object(
                [
                    "limit": .integer(in: 0...Int.max),
                    "remaining": .integer(in: 0...Int.max),
                    "resetAt": .string(format: "date-time").described("RFC 3339, UTC, to the millisecond"),
                ]).described("what the last response's rate-limit headers said; absent until one did"),
        ],
        required: ["name", "kind", "numberOfSections", "sectionTitles", "counts", "isFetching", "revision"]
    ).described("describeSource; createSource answers it too")
}
