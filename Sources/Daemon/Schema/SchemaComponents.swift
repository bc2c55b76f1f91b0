import JSONKit
import WireSchema

/// The schemas and errors that methods and notifications refer to (`#/components/...` in
/// Protocol/openrpc.json), each declared once; the files beside this one hold them by topic.
enum SchemaComponents {
    /// `components.schemas`, in the document's order.
    static let schemas: [(name: String, schema: Schema)] = [
        ("SourceName", sourceName),
        ("IndexPath", indexPath),
        ("ChangedRows", changedRows),
        ("PageRequest", pageRequest),
        ("Refusal", refusal),
        ("NextPageResult", nextPageResult),
        ("Row", row),
        ("Placeholder", placeholder),
        ("ChangeSet", changeSet),
        ("FetchError", fetchError),
        ("LoadFailure", loadFailure),
        ("SortDescriptor", CreateSourceParams.sortDescriptor.schema()),
        ("RemoteConfiguration", RemoteConfigurationDecoding.remoteConfiguration.schema()),
        ("Headers", headers),
        ("QueryParameters", queryParameters),
        ("TLSFiles", tLSFiles),
        ("PlaceholderStorageOptions", placeholderStorageOptions),
        ("Limits", RemoteConfigurationDecoding.limits.schema()),
        ("RequestBody", RequestBodyDecoding.request.schema().described("request: the method, and a POST's JSON body")),
        ("GraphQLQuery", RequestBodyDecoding.graphql.schema().described("graphql: the list is the Relay connection at data.<connection>")),
        ("FieldSpec", fieldSpec),
        ("Mapping", mapping),
        ("Pagination", pagination),
        ("SourceSpec", CreateSourceParams.schema),
        ("Predicate", predicate),
        ("MatchQuery", matchQuery),
        ("Matches", matches),
        ("LoadState", loadState),
        ("LoadStates", loadStates),
        ("SourceDescription", sourceDescription),
        ("FieldErrorData", fieldErrorData),
        ("CacheSettings", RemoteConfigurationDecoding.cache.schema().described("opt in to the persisted cache")),
    ]

    static let keyPath = Schema.string(minLength: 1).described("a dot-separated key path; a component of digits also indexes arrays")
}

/// `components.errors`: the JSON-RPC errors the daemon answers with, each with the shape of its `data`.
enum ErrorComponent: CaseIterable {
    case parseError
    case invalidRequest
    case methodNotFound
    case invalidParams
    case internalError
    case serverNotInitialized
    case requestCancelled

    var name: String {
        switch self {
        case .parseError: "ParseError"
        case .invalidRequest: "InvalidRequest"
        case .methodNotFound: "MethodNotFound"
        case .invalidParams: "InvalidParams"
        case .internalError: "InternalError"
        case .serverNotInitialized: "ServerNotInitialized"
        case .requestCancelled: "RequestCancelled"
        }
    }

    /// The error object: `{code, message, data?}`, `data` as a schema.
    var json: JSON {
        switch self {
        case .parseError:
            Self.error(
                -32700, "Parse error",
                data: .object(
                    [
                        "line": .integer,
                        "column": .integer,
                        "position": .integer,
                    ],
                    additionalProperties: true))
        case .invalidRequest: Self.error(-32600, "Invalid request", data: .type("object"))
        case .methodNotFound:
            Self.error(
                -32601, "Method not found",
                data: .object(
                    [
                        "method": .string
                    ],
                    required: ["method"]))
        case .invalidParams: Self.error(-32602, "Invalid params", data: .ref("FieldErrorData"))
        case .internalError: Self.error(-32603, "Internal error")
        case .serverNotInitialized:
            Self.error(
                -32002, "Server not initialized",
                data: .object(
                    [
                        "method": .string
                    ],
                    required: ["method"]))
        case .requestCancelled:
            Self.error(
                -32800, "Request cancelled",
                data: .anyOf([
                    .object(
                        [
                            "id": .anything
                        ],
                        required: ["id"]),
                    .object(
                        [
                            "reason": .constant("shutdown")
                        ],
                        required: ["reason"]),
                ]))
        }
    }

    private static func error(_ code: Int, _ message: String, data: Schema? = nil) -> JSON {
        .object([("code", JSON(code)), ("message", JSON(message))] + (data.map { [("data", $0.json)] } ?? []))
    }
}
