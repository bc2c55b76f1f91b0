import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `updateSource`: changes a remote or paginated source's query parameters, API path,
/// headers, GraphQL variables or POST body in place, for search as you type.
///
/// The update is read as the source's `createSource` params with these members in place, so it
/// is checked exactly as they were (and names the same cache entry a source created with them
/// would). A load in flight ends `cancelled` before the answer, so no event of the older
/// query follows it. The new query loads at once, or after `debounceMilliseconds` with no
/// update since; a source never fetched only changes, and its first `fetchData` loads it.
enum UpdateSourceRequest: AnsweredAtOnce {
    static let name = "updateSource"
    static let section = "changing-the-query-updatesource"
    typealias Params = UpdateSourceParams
    typealias Result = SourceDescription

    static func handle(_ daemon: Daemon, _ params: UpdateSourceParams) throws -> SourceDescription {
        let source = try daemon.source(params.source)
        guard let remote = source as? RemoteCollection, var updated = daemon.sourceParams[remote.name] else {
            throw FieldError(
                field: "source", expected: "a remote or paginated source", got: JSON(source.name),
                message: "\"source\" must name a remote or paginated source to update; \"\(source.name)\" is \(source.kind)")
        }
        if let query = params.queryParameters { updated = updated.setting("queryParameters", to: query) }
        if let apiPath = params.apiPath { updated = updated.setting("apiPath", to: apiPath) }
        if let variables = params.graphqlVariables {
            guard let graphql = updated["graphql"] else {
                throw FieldError(
                    field: "graphql", expected: "no graphql for a source without one", got: [:],
                    message: "\"graphql.variables\" updates a GraphQL source; \"\(remote.name)\" has no graphql query")
            }
            updated = updated.setting("graphql", to: graphql.setting("variables", to: variables))
        }
        if let body = params.requestBody {
            let request = updated["request"] ?? .object([])
            updated = updated.setting("request", to: request.setting("body", to: body))
        }
        if let headers = params.headers {
            let remoteConfiguration = updated["remoteConfiguration"] ?? .object([])
            updated = updated.setting("remoteConfiguration", to: remoteConfiguration.setting("headers", to: headers))
        }
        if let actions = params.actions { updated = updated.setting("actions", to: actions) }
        var reader = try ObjectReader(updated, field: "", expected: "an object with named members")
        let created = try CreateSourceParams(&reader)
        let configuration: RemoteConfiguration
        switch created.spec.kind {
        case .remote(let decoded), .paginated(let decoded, _): configuration = decoded
        case .simple, .sectioned, .multi, .filtered: preconditionFailure("a remote source's params decode as a remote kind")
        }
        if params.changesActionsOnly {
            // The rows do not depend on the actions: nothing loads again.
            remote.replaceActions(with: configuration)
            daemon.sourceParams[remote.name] = updated
            return remote.describe()
        }
        let wasLoaded = remote.hasRequested
        remote.update(to: configuration, cacheKey: created.cacheKey, keepRows: params.keepRows)
        daemon.sourceParams[remote.name] = updated
        daemon.debounceTimers.disarm(remote.name)
        if wasLoaded {
            if params.debounceMilliseconds > 0 {
                daemon.debounceTimers.arm(remote.name, after: Double(params.debounceMilliseconds) / 1000)
            } else {
                remote.fetchData()
            }
        }
        daemon.logger.info(
            "updated source", metadata: ["name": "\(remote.name)", "debounceMilliseconds": "\(params.debounceMilliseconds)"])
        return remote.describe()
    }

    /// The debounce of the last update elapsed: its query loads now.
    static func debounceElapsed(_ daemon: Daemon, source name: String, generation: Int) {
        guard daemon.debounceTimers.isCurrent(name, generation: generation) else { return }
        daemon.debounceTimers.disarm(name)
        guard let source = try? daemon.registry.source(named: name) else { return }
        source.fetchData()
    }

    static let summary =
        "changes a remote or paginated source's query parameters, API path, headers, GraphQL variables or POST body in place"
    static let resultSchema: Schema = .ref("SourceDescription")
}

/// `{source, queryParameters?, apiPath?, headers?, graphql?, request?, actions?, keepRows?, debounceMilliseconds?}`. The
/// members are checked here with their own names; `createSource`'s decoding then checks them
/// against the rest of the source's params (an `apiPath` that leaves the base URL's host).
struct UpdateSourceParams: DeclaredParams {
    var source: String
    var queryParameters: JSON?
    var apiPath: JSON?
    var headers: JSON?
    var graphqlVariables: JSON?
    var requestBody: JSON?
    var actions: JSON?
    var keepRows: Bool
    var debounceMilliseconds: Int

    /// Only the actions change: the query stays, and so do the rows.
    var changesActionsOnly: Bool {
        actions != nil && queryParameters == nil && apiPath == nil && headers == nil && graphqlVariables == nil && requestBody == nil
    }

    static let declaration = ObjectDeclaration(
        .source(),
        .optionalIncludingNull(
            "queryParameters", RemoteConfigurationDecoding.queryParametersValue, doc: "replaces the configured query parameters"),
        .optionalIncludingNull("apiPath", Shape.string.map { _, value, _ in value }, doc: "replaces the API path"),
        .optionalIncludingNull("headers", RemoteConfigurationDecoding.headersValue, doc: "replaces remoteConfiguration.headers"),
        .optional(
            "graphql", graphqlUpdate.shape(expected: "an object {variables}"), doc: "{variables}: replaces a GraphQL source's variables"),
        .optional("request", requestUpdate.shape(expected: "an object {body}"), doc: "{body}: replaces a POST source's body"),
        .optional("actions", ActionDecoding.actionsValue, doc: "replaces the actions (alone, it loads nothing again)"),
        .flag("keepRows", default: true, doc: "the rows stay, stale, until the new query's first page replaces them in one didChange"),
        .optional(
            "debounceMilliseconds", .integer(in: 0...10_000), default: 0,
            doc: "load at once; else load when no update follows within this time"),
        as: { source, query, apiPath, headers, graphql, request, actions, keepRows, debounce in
            UpdateSourceParams(
                source: source, queryParameters: query, apiPath: apiPath, headers: headers, graphqlVariables: graphql,
                requestBody: request, actions: actions, keepRows: keepRows, debounceMilliseconds: debounce)
        })

    private static let graphqlUpdate = ObjectDeclaration(
        .required("variables", RequestBodyDecoding.objectShape, doc: "the query's variables, replacing the ones it has"), as: { $0 })

    private static let requestUpdate = ObjectDeclaration(
        .anyValue("body", doc: "the JSON body, replacing the one the source has"), as: { $0 })
}
