import JSONKit

/// Builds requests from the method table's shapes, mostly valid, with values the input
/// chooses to mutate: huge, negative and real numbers, wrong kinds, unknown members,
/// missing members, names of sources that may or may not exist.
struct RequestBuilder {
    /// Few names, so that requests meet the sources earlier ones created.
    static let sourceNames = ["a", "b", "c", "r", "p"]

    /// Numbers written as text: some jansson cannot hold (beyond 64 bits, beyond double).
    static let oversizedMarker = "\u{1}oversized\u{1}"
    static let oversizedTexts = ["18446744073709551616", "1e400", "-99999999999999999999"]

    static let hostileValues: [JSON] = [
        0, -1, 1, JSON(1 << 31), JSON(Int.max), JSON(Int.min), 1e308, -0.0, 1.5, -1e308,
        "", "x", .null, true, false, [], [:], ["nested": [1, 2]], [0, -1], [JSON(Int.max), JSON(Int.max)],
        JSON(String(repeating: "ü", count: 300)), JSON(oversizedMarker),
    ]

    var choices: Choices

    mutating func params(for method: String) -> JSON {
        let members: [(String, JSON)]
        switch method {
        case "initialize":
            members = [
                ("clientInfo", object([("name", string()), ("version", string())])),
                (
                    "capabilities",
                    object([("changeValues", choices.chance(128) ? JSON(choices.chance(200)) : object([("maxBytes", integer())]))])
                ),
            ]
        case "ping": members = [("delayMilliseconds", integer(upTo: 2))]
        case "shutdown", "listSources": members = []
        case "createSource": return createSource()
        case "destroySource": members = [("name", sourceName()), ("cascade", bool())]
        case "numberOfObjectsInSection": members = [("source", sourceName()), ("section", integer())]
        case "objectsInSection":
            members = [("source", sourceName()), ("section", integer()), ("start", integer()), ("count", integer())]
        case "objectAtIndexPath": members = [("source", sourceName()), ("indexPath", indexPath()), ("withRevision", bool())]
        case "willDisplayObjectAtIndexPath": members = [("source", sourceName()), ("indexPath", indexPath())]
        case "indexPathForObject": members = [("source", sourceName()), ("object", row())]
        case "allObjects": members = [("source", sourceName()), ("withRevision", bool())]
        case "replaceObjects", "updateObjects": members = [("source", sourceName()), ("objects", rows())]
        case "insertObjects": members = [("source", sourceName()), ("objects", rows()), ("index", integer())]
        case "removeObjects": members = [("source", sourceName()), ("index", integer()), ("count", integer())]
        case "fetchData": members = [("source", sourceName()), ("wait", bool())]
        default:
            // describeSource, numberOfSections, sectionTitles, cancelFetch, fetchNextPage, and
            // any method added later: `source` is what most take.
            members = [("source", sourceName())]
        }
        return object(members)
    }

    private mutating func createSource() -> JSON {
        let kind = choices.pick(["simple", "sectioned", "multi", "remote", "paginated"])
        var members: [(String, JSON)] = [("name", sourceName()), ("kind", value(JSON(kind)))]
        if choices.chance(40) { members.append(("identityKey", value(choices.pick(["id", "name", "missing.path", ""])))) }
        switch kind {
        case "simple":
            members.append(("objects", rows()))
        case "sectioned":
            members += [
                ("source", sourceName()), ("sectioningKey", value(choices.pick(["group", "id", "name", "no.such"]))),
                (
                    "sortDescriptors",
                    value(
                        .array(
                            (0..<choices.below(3)).map { _ in
                                object([("keyPath", string()), ("ascending", bool())])
                            }))
                ),
            ]
        case "multi":
            members += [("sources", value(.array((0..<choices.below(4)).map { _ in sourceName() }))), ("preserveSections", bool())]
        default:
            members += remoteMembers()
            if kind == "paginated" {
                members += [
                    ("pageSize", integer()), ("firstPage", integer()),
                    ("metadataKeyPath", value(choices.pick(["meta", "", "items"]))),
                    (
                        "paginatorKeys",
                        object([
                            ("pageSize", string()), ("currentPage", string()),
                            ("numberOfPages", string()), ("numberOfTotalObjects", string()),
                        ])
                    ),
                    ("requestKeys", object([("currentPage", string()), ("pageSize", string())])),
                ]
            }
        }
        return object(members)
    }

    private mutating func remoteMembers() -> [(String, JSON)] {
        let base = choices.pick(["http://fuzz.invalid", "https://fuzz.invalid:8443/v1/", "http://[::1]:1", "ftp://x", "http://h:99999"])
        return [
            (
                "remoteConfiguration",
                object([
                    ("baseURL", value(JSON(base))), ("timeoutSeconds", number()),
                    ("headers", object([("X-Key", string())])),
                ])
            ),
            ("apiPath", value(choices.pick(["items", "/items?x=1", "", "http://other.invalid/p", "../up"]))),
            ("keyPath", value(choices.pick(["items", "", "meta.page", "no.such"]))),
            ("queryParameters", object([("q", choices.pick([JSON("x"), 1, 1.5, true]))])),
            ("placeholderStorageOptions", value(choices.pick([JSON(14), 0, 2, ["loading", "errors"], ["noResults"]]))),
            ("limits", object([("maxBodyBytes", integer()), ("maxDepth", integer())])),
            ("mapping", choices.chance(60) ? value(["title": "name", "n": ["keyPath": "id", "type": "integer", "default": 0]]) : .null),
        ]
    }

    // MARK: Values, each possibly replaced by a hostile one

    private mutating func value(_ valid: JSON) -> JSON {
        choices.chance(24) ? choices.pick(Self.hostileValues) : valid
    }

    mutating func sourceName() -> JSON { value(JSON(choices.pick(Self.sourceNames))) }
    private mutating func string() -> JSON { value(JSON(choices.pick(["id", "page", "n", "x y", ""]))) }
    private mutating func bool() -> JSON { value(JSON(choices.chance(128))) }
    private mutating func integer(upTo limit: Int = 4) -> JSON { value(JSON(choices.below(limit + 1))) }
    private mutating func number() -> JSON { value(choices.pick([JSON(1), 0.5, 30])) }
    private mutating func indexPath() -> JSON { value([integer(), integer()]) }

    private mutating func row() -> JSON {
        switch choices.below(8) {
        case 0: return .null
        case 1: return JSON(choices.below(3))
        case 2: return "text"
        default:
            let id = choices.below(6)
            return .object([("id", JSON(id)), ("name", JSON("n\(id)")), ("group", JSON(choices.pick(["x", "y", "z"])))])
        }
    }

    private mutating func rows() -> JSON { value(.array((0..<choices.below(5)).map { _ in row() })) }

    /// An object of these members; each may be left out, and an unknown one may join.
    private mutating func object(_ members: [(String, JSON)]) -> JSON {
        var kept = members.filter { !$0.1.isNull && !choices.chance(16) }
        if choices.chance(16) { kept.append((choices.pick(["sourc", "extra", "Source", "withrevision", "limits"]), 1)) }
        return value(.object(kept))
    }

    /// The request as bytes, with the oversized markers written as the numbers they stand for.
    static func text(of message: JSON, oversized: Int) -> [UInt8] {
        let encoded = message.encoded()
        let marker = Array(#""\u0001oversized\u0001""#.utf8)
        let number = Array(oversizedTexts[oversized % oversizedTexts.count].utf8)
        var result: [UInt8] = []
        result.reserveCapacity(encoded.count)
        var index = 0
        while index < encoded.count {
            if encoded[index] == marker[0], encoded.count - index >= marker.count,
                encoded[index..<index + marker.count].elementsEqual(marker)
            {
                result += number
                index += marker.count
            } else {
                result.append(encoded[index])
                index += 1
            }
        }
        return result
    }
}
