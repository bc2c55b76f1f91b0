import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `initialize`: the first request of a session.
enum InitializeRequest: AnsweredAtOnce {
    static let name = "initialize"
    typealias Params = InitializeParams
    typealias Result = InitializeResult

    static func handle(_ daemon: Daemon, _ params: InitializeParams) throws -> InitializeResult {
        guard daemon.lifecycle == .uninitialized else {
            throw ResponseError.invalidRequest("\"initialize\" was already received; send it once per session")
        }
        if params.clientName != nil || params.clientVersion != nil {
            daemon.logger.info("client", metadata: ["name": "\(params.clientName ?? "?")", "version": "\(params.clientVersion ?? "?")"])
        }
        daemon.changeValuesLimit = params.changeValuesLimit
        daemon.sendsLoadStates = params.loadStates
        daemon.sendsChangeRanges = params.changeRanges
        daemon.loader.userAgent = DaemonInfo.userAgent(clientName: params.clientName, clientVersion: params.clientVersion)
        daemon.lifecycle = .running
        return InitializeResult(
            methods: daemon.methods.names, sourceKinds: daemon.registry.kinds,
            maxMessageSize: daemon.options.maximumMessageSize, changeValues: true)
    }

    static let summary = "the first request of a session"
    static let resultSchema: Schema = .object(
        [
            "protocolVersion": .string,
            "serverInfo": .object(
                [
                    "name": .string,
                    "version": .string,
                ],
                required: ["name", "version"]),
            "capabilities": .object(
                [
                    "methods": .array(of: .string),
                    "sourceKinds": .array(of: .string),
                    "notifications": .array(of: .string),
                    "batches": .boolean,
                    "cancelRequest": .boolean,
                    "maxMessageSize": .integer(in: 1...Int.max),
                    "changeValues": .boolean,
                ],
                required: ["methods", "sourceKinds", "notifications", "batches", "cancelRequest", "maxMessageSize", "changeValues"]),
        ],
        required: ["protocolVersion", "serverInfo", "capabilities"])
}

/// `{clientInfo?: {name?, version?}, capabilities?: {changeValues?, loadStates?, changeRanges?}}`.
struct InitializeParams: DeclaredParams {
    var clientName: String?
    var clientVersion: String?
    /// The most bytes of row values a `didChange` may carry; nil: none.
    var changeValuesLimit: Int?
    /// Whether the client asked for `dataSource/didChangeLoadState`.
    var loadStates = false
    /// Whether the client reads runs of rows in change sets as `[section, item, count]`.
    var changeRanges = false

    static let defaultChangeValuesLimit = 1 << 20
    static let maximumChangeValuesLimit = 64 << 20

    static let declaration = ObjectDeclaration(
        .optional("clientInfo", clientInfo.shape(expected: "an object {name?, version?}")),
        // Client capabilities this daemon does not know are ignored, as in LSP: a newer
        // client must be able to talk to an older daemon.
        .optional(
            "capabilities", capabilities.shape(expected: "an object of client capabilities", othersIgnored: true),
            doc: "unknown client capabilities are ignored"),
        as: { client, capabilities in
            InitializeParams(
                clientName: client?.name, clientVersion: client?.version, changeValuesLimit: capabilities?.changeValuesLimit,
                loadStates: capabilities?.loadStates ?? false, changeRanges: capabilities?.changeRanges ?? false)
        })

    private static let clientInfo = ObjectDeclaration(
        .optional("name", Shape.string, doc: "the client's name, for the daemon's log and User-Agent"),
        .optional("version", Shape.string, doc: "the client's version"), as: { (name: $0, version: $1) })

    private static let capabilities = ObjectDeclaration(
        .optional("changeValues", changeValues),
        .flag("loadStates", default: false, doc: "send dataSource/didChangeLoadState"),
        .flag(
            "changeRanges", default: false,
            doc: "in dataSource/didChange, send each run of two or more consecutive rows of a section as [section, item, count]"),
        as: { (changeValuesLimit: $0 ?? nil, loadStates: $1, changeRanges: $2) })

    /// `true` (the default limit), `false` (none) or `{maxBytes?}`: the limit.
    private static let changeValues = Shape<Int?>(
        .anyOf([.boolean, changeValuesOptions.schema()]).described(
            "send the rows a change brings in dataSource/didChange; true: up to 1 MiB of them"),
        expected: "a boolean or an object {maxBytes?}"
    ) { value, field throws(FieldError) in
        if let enabled = value.boolValue { return enabled ? defaultChangeValuesLimit : nil }
        return try changeValuesOptions.shape(expected: "a boolean or an object {maxBytes?}").decode(value, field)
    }

    private static let changeValuesOptions = ObjectDeclaration(
        .optional(
            "maxBytes", .integer(in: 0...maximumChangeValuesLimit), default: defaultChangeValuesLimit,
            doc: "the most bytes of row values one didChange carries"),
        as: { $0 })
}

struct InitializeResult: WireEncodable {
    let methods: [String]
    let sourceKinds: [String]
    let maxMessageSize: Int
    let changeValues: Bool

    var json: JSON {
        [
            "protocolVersion": JSON(DaemonInfo.protocolVersion),
            "serverInfo": ["name": JSON(DaemonInfo.name), "version": JSON(DaemonInfo.version)],
            "capabilities": .object([
                ("methods", .array(methods.map { JSON($0) })),
                ("sourceKinds", .array(sourceKinds.map { JSON($0) })),
                ("notifications", .array(NotificationName.allCases.map { JSON($0.rawValue) })),
                ("batches", true),
                ("cancelRequest", true),
                ("maxMessageSize", JSON(maxMessageSize)),
                ("changeValues", JSON(changeValues)),
            ]),
        ]
    }
}
