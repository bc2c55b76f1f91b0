import DataSources
import JSONKit
import JSONRPC
import Testing

/// What a numeric member takes, as Protocol.md states it.
enum NumericRule {
    /// A JSON integer in the range (a real, even `1.0` or `-0.0`, is refused).
    case integer(ClosedRange<Int>)
    /// A finite number in the range; the lower bound itself refused when `excludingLower`.
    case number(ClosedRange<Double>, excludingLower: Bool)
    /// `placeholderStorageOptions`: an integer made of the bits 2, 4 and 8.
    case placeholderBits
    /// Any number (query parameters are sent as text).
    case anyNumber
}

enum Verdict {
    case accepted
    /// Refused at the wire, with this `got`: the kind when it is wrong, else the value.
    case refused(got: JSON)
}

struct NumericMember {
    let path: String
    let rule: NumericRule

    func verdict(_ value: JSON) -> Verdict {
        let wrongKind = Verdict.refused(got: JSON(value.kind.rawValue))
        switch rule {
        case .integer(let range):
            guard value.kind == .integer, let integer = value.integerValue else { return wrongKind }
            return range.contains(integer) ? .accepted : .refused(got: value)
        case .number(let range, let excludingLower):
            guard let number = value.doubleValue, value.isNumber else { return wrongKind }
            let inside = number.isFinite && range.contains(number) && !(excludingLower && number == range.lowerBound)
            return inside ? .accepted : .refused(got: value)
        case .placeholderBits:
            guard value.kind == .integer, let bits = value.integerValue else { return wrongKind }
            return bits >= 0 && bits & ~0b1110 == 0 ? .accepted : .refused(got: value)
        case .anyNumber:
            return value.isNumber ? .accepted : wrongKind
        }
    }
}

/// One method's params: valid ones (against the kept sources `keep`, `remote` and the
/// `scratch` source remade before each case), and what may be missing, mistyped or misspelt.
struct WireShape {
    let method: String
    /// `createSource` has one shape per kind.
    var name: String
    let params: JSON
    var required: [String] = []
    var mistyped: (String, JSON)?
    var nearMiss: (typo: String, meant: String?)
    var numbers: [NumericMember] = []
    /// An error a valid call gets anyway (`initialize` a second time).
    var validCallRefusal: Int?
    var checkResult: ((JSON, String) -> Void)?

    init(
        _ method: String, name: String? = nil, _ params: JSON, required: [String] = [], mistyped: (String, JSON)? = nil,
        nearMiss: (String, String?), numbers: [NumericMember] = [], validCallRefusal: Int? = nil,
        checkResult: ((JSON, String) -> Void)? = nil
    ) {
        self.method = method
        self.name = name ?? method
        self.params = params
        self.required = required
        self.mistyped = mistyped
        self.nearMiss = nearMiss
        self.numbers = numbers
        self.validCallRefusal = validCallRefusal
        self.checkResult = checkResult
    }
}

enum WireShapes {
    static let index = NumericRule.integer(0...Int.max)
    static let row: JSON = ["id": 9, "group": "z"]

    static func sourceOnly(_ method: String, _ source: String = "keep") -> WireShape {
        WireShape(method, ["source": JSON(source)], required: ["source"], mistyped: ("source", 5), nearMiss: ("sourc", "source"))
    }

    static func indexPathMembers() -> [NumericMember] {
        [NumericMember(path: "indexPath[0]", rule: index), NumericMember(path: "indexPath[1]", rule: index)]
    }

    static let remoteNumbers: [NumericMember] = [
        NumericMember(
            path: "remoteConfiguration.timeoutSeconds", rule: .number(0...RemoteConfiguration.maximumTimeoutSeconds, excludingLower: true)),
        NumericMember(path: "limits.maxBodyBytes", rule: .integer(1...RemoteConfiguration.maximumBodySizeLimit)),
        NumericMember(path: "limits.maxDepth", rule: .integer(1...RemoteConfiguration.maximumDepthLimit)),
        NumericMember(path: "limits.maxObjectsPerPage", rule: .integer(1...RemoteConfiguration.maximumObjectsPerPageLimit)),
        NumericMember(path: "placeholderStorageOptions", rule: .placeholderBits),
        NumericMember(path: "queryParameters.q", rule: .anyNumber),
        NumericMember(path: "cache.maxAgeSeconds", rule: .number(0...CacheSettings.maximumAgeLimit, excludingLower: false)),
        NumericMember(path: "cache.maxPages", rule: .integer(1...CacheSettings.maximumPagesLimit)),
        NumericMember(
            path: "refreshIntervalSeconds",
            rule: .number(
                RemoteConfiguration.minimumRefreshIntervalSeconds...RemoteConfiguration.maximumTimeoutSeconds,
                excludingLower: false)),
    ]

    static func remoteParams(kind: String) -> JSON {
        [
            "name": "probe", "kind": JSON(kind), "remoteConfiguration": ["baseURL": "http://probe.invalid", "timeoutSeconds": 5],
            "apiPath": "items", "queryParameters": ["q": 1], "placeholderStorageOptions": 14,
            "limits": ["maxBodyBytes": 1000, "maxDepth": 8, "maxObjectsPerPage": 50],
            "cache": ["enabled": true, "maxAgeSeconds": 60, "maxPages": 3], "refreshIntervalSeconds": 3600,
        ]
    }

    static func created(_ result: JSON, _ context: String) {
        #expect(result["name"] == "probe", "\(context)")
    }

    static var all: [WireShape] {
        [
            WireShape(
                "initialize", ["capabilities": ["changeValues": ["maxBytes": 1000]]], mistyped: ("clientInfo", 5),
                nearMiss: ("clientinfo", "clientInfo"),
                numbers: [NumericMember(path: "capabilities.changeValues.maxBytes", rule: .integer(0...(64 << 20)))],
                validCallRefusal: ErrorCode.invalidRequest),
            WireShape("shutdown", [:], nearMiss: ("sourc", nil)),
            WireShape(
                "ping", ["delayMilliseconds": 0], mistyped: ("delayMilliseconds", "x"), nearMiss: ("delayMiliseconds", "delayMilliseconds"),
                numbers: [NumericMember(path: "delayMilliseconds", rule: .integer(0...60_000))]),

            WireShape(
                "createSource", name: "createSource simple", ["name": "probe", "kind": "simple", "objects": [row]],
                required: ["name", "kind"], mistyped: ("objects", 5), nearMiss: ("nme", "name"), checkResult: created),
            WireShape(
                "createSource", name: "createSource sectioned",
                ["name": "probe", "kind": "sectioned", "source": "keep", "sectioningKey": "group"],
                required: ["name", "kind", "source", "sectioningKey"], mistyped: ("sectioningKey", 5),
                nearMiss: ("sectioningkey", "sectioningKey"),
                checkResult: created),
            WireShape(
                "createSource", name: "createSource multi", ["name": "probe", "kind": "multi", "sources": ["keep", "remote"]],
                required: ["name", "kind", "sources"], mistyped: ("sources", "keep"), nearMiss: ("source", "sources"), checkResult: created),
            WireShape(
                "createSource", name: "createSource remote", remoteParams(kind: "remote"),
                required: ["name", "kind", "remoteConfiguration", "remoteConfiguration.baseURL", "apiPath"],
                mistyped: ("remoteConfiguration.timeoutSeconds", "5"), nearMiss: ("apiPth", "apiPath"), numbers: remoteNumbers,
                checkResult: created),
            WireShape(
                "createSource", name: "createSource paginated",
                remoteParams(kind: "paginated").setting("pageSize", to: 10).setting("firstPage", to: 1),
                required: ["name", "kind", "remoteConfiguration", "apiPath"], mistyped: ("pageSize", "10"),
                nearMiss: ("pagesize", "pageSize"),
                numbers: remoteNumbers + [
                    NumericMember(path: "pageSize", rule: .integer(1...PaginatorConfiguration.maximumPageSize)),
                    NumericMember(path: "firstPage", rule: .integer(0...PaginatorConfiguration.maximumFirstPage)),
                ],
                checkResult: created),
            WireShape(
                "createSource", name: "createSource filtered",
                [
                    "name": "probe", "kind": "filtered", "source": "keep", "filter": ["keyPath": "group", "op": "eq", "value": "x"],
                    "match": ["query": "x", "keyPaths": ["group"]],
                ],
                required: ["name", "kind", "source", "filter.keyPath", "filter.op", "match.query", "match.keyPaths"],
                mistyped: ("filter", 5), nearMiss: ("fliter", "filter"), checkResult: created),
            WireShape("destroySource", ["name": "probe"], required: ["name"], mistyped: ("cascade", "yes"), nearMiss: ("nam", "name")),
            WireShape("listSources", [:], nearMiss: ("sourc", nil)),
            sourceOnly("describeSource"),

            sourceOnly("numberOfSections"),
            WireShape(
                "numberOfObjectsInSection", ["source": "keep", "section": 0], required: ["source", "section"], mistyped: ("section", "0"),
                nearMiss: ("sectoin", "section"), numbers: [NumericMember(path: "section", rule: index)]),
            sourceOnly("sectionTitles"),
            WireShape(
                "objectAtIndexPath", ["source": "keep", "indexPath": [0, 0]], required: ["source", "indexPath"],
                mistyped: ("indexPath", "0,0"),
                nearMiss: ("indexpath", "indexPath"), numbers: indexPathMembers()),
            WireShape(
                "indexPathForObject", ["source": "keep", "object": row], required: ["source", "object"], mistyped: ("source", 5),
                nearMiss: ("objekt", "object")),
            WireShape(
                "objectsInSection", ["source": "keep", "section": 0, "start": 0, "count": 1], required: ["source", "section"],
                mistyped: ("count", true), nearMiss: ("cuont", "count"),
                numbers: [
                    NumericMember(path: "section", rule: index), NumericMember(path: "start", rule: index),
                    NumericMember(path: "count", rule: index),
                ]),
            WireShape(
                "allObjects", ["source": "keep"], required: ["source"], mistyped: ("withRevision", 1),
                nearMiss: ("withrevision", "withRevision")),

            WireShape(
                "replaceObjects", ["source": "scratch", "objects": [row]], required: ["source", "objects"], mistyped: ("objects", row),
                nearMiss: ("object", "objects")),
            WireShape(
                "insertObjects", ["source": "scratch", "objects": [row], "index": 0], required: ["source", "objects"],
                mistyped: ("index", "0"),
                nearMiss: ("indx", "index"), numbers: [NumericMember(path: "index", rule: index)]),
            WireShape(
                "removeObjects", ["source": "scratch", "index": 0, "count": 1], required: ["source", "index"], mistyped: ("count", [1]),
                nearMiss: ("cout", "count"),
                numbers: [NumericMember(path: "index", rule: index), NumericMember(path: "count", rule: index)]),
            WireShape(
                "updateObjects", ["source": "scratch", "objects": [row]], required: ["source", "objects"], mistyped: ("objects", "x"),
                nearMiss: ("sourc", "source")),

            WireShape("fetchData", ["source": "keep"], required: ["source"], mistyped: ("wait", "no"), nearMiss: ("wiat", "wait")),
            sourceOnly("cancelFetch"),
            sourceOnly("fetchNextPage", "remote"),
            sourceOnly("fetchPreviousPage", "remote"),
            sourceOnly("retry", "remote"),
            WireShape(
                "setRefreshInterval", ["source": "remote", "seconds": 3600], required: ["source", "seconds"], mistyped: ("seconds", "60"),
                nearMiss: ("second", "seconds"),
                numbers: [
                    NumericMember(
                        path: "seconds",
                        rule: .number(
                            RemoteConfiguration.minimumRefreshIntervalSeconds...RemoteConfiguration.maximumTimeoutSeconds,
                            excludingLower: false))
                ]),
            // The same query as "remote" was created with: the shapes that follow still read its rows.
            WireShape(
                "updateSource",
                [
                    "source": "remote", "apiPath": "items", "queryParameters": [:], "keepRows": true,
                    "debounceMilliseconds": 0,
                ],
                required: ["source"], mistyped: ("keepRows", "yes"), nearMiss: ("keeprows", "keepRows"),
                numbers: [NumericMember(path: "debounceMilliseconds", rule: .integer(0...10_000))]),
            WireShape(
                "setFilter",
                [
                    "source": "scratchFiltered", "filter": ["keyPath": "id", "op": "ge", "value": 2],
                    "match": ["query": "x", "keyPaths": ["group"]],
                ],
                required: ["source", "filter.op", "match.keyPaths"], mistyped: ("match", "x"), nearMiss: ("macth", "match")),
            WireShape(
                "willDisplayObjectAtIndexPath", ["source": "keep", "indexPath": [0, 0]], required: ["source", "indexPath"],
                mistyped: ("indexPath", [0]), nearMiss: ("sourc", "source"), numbers: indexPathMembers()),
            // The boundary tests' daemon keeps no allowances file: a valid call is decoded, then
            // answered -32603 (CredentialAllowanceTests records one for real).
            WireShape(
                "allowCredential", ["env": "GITHUB_TOKEN", "origin": "https://api.github.com"], required: ["origin"],
                mistyped: ("origin", 5), nearMiss: ("orign", "origin"), validCallRefusal: ErrorCode.internalError),
            // "remote" declares no actions: a valid call is decoded, then refused naming the action.
            WireShape(
                "performAction", ["source": "remote", "action": "rename", "identity": 1, "values": ["title": "x"]],
                required: ["source", "action"], mistyped: ("values", "x"), nearMiss: ("identiy", "identity"),
                validCallRefusal: ErrorCode.invalidParams),
            WireShape(
                "cancelMutation", ["source": "remote", "mutation": "m1"], required: ["source", "mutation"], mistyped: ("mutation", 1),
                nearMiss: ("mutaton", "mutation"), validCallRefusal: ErrorCode.invalidParams),
        ]
    }
}
