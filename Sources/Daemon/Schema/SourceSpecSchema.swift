import JSONKit
import WireSchema

// Components of Protocol/openrpc.json: createSource's params, kind by kind.
extension SchemaComponents {
    static let sourceSpec: Schema = .oneOf([
        kind("simple", [("objects", .type("array"))]),
        kind(
            "sectioned",
            [("source", .string), ("sectioningKey", keyPath), ("sortDescriptors", .array(of: .ref("SortDescriptor")))],
            required: ["source", "sectioningKey"]),
        kind("multi", [("sources", .array(of: .string)), ("preserveSections", .boolean)], required: ["sources"]),
        kind("remote", remoteMembers + liveMembers, required: ["remoteConfiguration", "apiPath"]),
        kind("paginated", remoteMembers + pagingMembers + liveMembers, required: ["remoteConfiguration", "apiPath"]),
        kind(
            "filtered",
            [("source", .string), ("filter", .anyOf([.ref("Predicate"), .null])), ("match", .anyOf([.ref("MatchQuery"), .null]))],
            required: ["source"]),
    ]).described("createSource params, by kind")

    /// One kind's params: the members every kind has, then its own.
    private static func kind(_ kind: String, _ members: [(String, Schema)], required: [String] = []) -> Schema {
        let common: [(String, Schema)] = [
            ("name", .string(minLength: 1)), ("identityKey", .anyOf([keyPath, .null])), ("kind", .constant(JSON(kind))),
        ]
        return .object(members: common + members, required: ["name", "kind"] + required)
    }

    static let keyPath = Schema.string(minLength: 1).described("a dot-separated key path; a component of digits also indexes arrays")

    /// A remote source's members, which a paginated source has too.
    private static let remoteMembers: [(String, Schema)] = [
        ("remoteConfiguration", .ref("RemoteConfiguration")), ("apiPath", .string), ("queryParameters", .ref("QueryParameters")),
        ("keyPath", .string), ("mapping", .ref("Mapping")), ("placeholderStorageOptions", .ref("PlaceholderStorageOptions")),
        ("limits", .ref("Limits")),
    ]

    /// What remote and paginated sources end with: the cache and live refreshes.
    private static let liveMembers: [(String, Schema)] = [
        ("cache", .ref("CacheSettings")),
        (
            "refreshIntervalSeconds",
            RemoteConfigurationDecoding.refreshIntervalShape.schema.described("seconds between refreshes of a live list; null: none")
        ),
    ]

    private static let pagingMembers: [(String, Schema)] = [
        (
            "paginatorKeys",
            .object(
                members: ["pageSize", "currentPage", "numberOfPages", "numberOfTotalObjects"].map { ($0, .string(minLength: 1)) },
                additionalProperties: false
            ).with { $0.required = nil }
        ),
        (
            "requestKeys",
            .object(members: ["currentPage", "pageSize"].map { ($0, .string(minLength: 1)) }, additionalProperties: false).with {
                $0.required = nil
            }
        ),
        ("pageSize", .integer(in: 1...2_147_483_648)),
        ("firstPage", .integer(in: 0...2_147_483_648)),
        ("initialPage", .integer(in: 0...2_147_483_648).described("(pageNumber) the page a run starts at, firstPage or later")),
        ("initialOffset", .integer(in: 0...9_007_199_254_740_992).described("(offset) the offset a run starts at")),
        ("initialCursor", .string(minLength: 1).described("(cursor) the cursor a run starts at")),
        (
            "window",
            .object(
                members: [("maxPages", .integer(in: 1...1_000_000)), ("maxObjects", .integer(in: 1...2_147_483_648))],
                additionalProperties: false
            ).with {
                $0.required = nil
                $0.minProperties = 1
            }.described("the most pages and objects held; pages far from the rows displayed are dropped, whole")
        ),
        (
            "placeholders",
            .oneOfValues(["trailing", "counted"]).described(
                "counted: with a known total the list has its full size at once, unloaded rows being {\"$placeholder\": \"unloaded\", \"index\": N}"
            )
        ),
        (
            "jumpThreshold",
            .integer(in: 1...2_147_483_648).described(
                "rows: a displayed unloaded row farther than this from the loaded ones loads its own page (a jump); default two pages")
        ),
        ("metadataKeyPath", .string),
        ("prefetchDistance", .integer(in: 0...1_000_000)),
        ("pagination", .ref("Pagination")),
    ]
}
