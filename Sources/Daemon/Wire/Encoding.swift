#if canImport(Glibc)
import Glibc
#endif
import DataSources
import JSONKit

// How the model's values look on the wire. This file, the methods' results (Methods/) and
// the notifications are the only places that build protocol JSON from them.

extension IndexPath: WireEncodable {
    var json: JSON { [JSON(section), JSON(item)] }

    /// A change set's list of paths, each as `[section, item]`, packed in one step (a page's
    /// change set lists a thousand).
    static func json(_ list: IndexPathList) -> JSON {
        var pairs: [(Int, Int, Int?)] = []
        pairs.reserveCapacity(list.count)
        for run in list.runs {
            for item in run.item..<(run.item + run.count) { pairs.append((run.section, item, nil)) }
        }
        return .integerTuples(pairs)
    }

    /// The same list with each run of two or more consecutive items of a section as one
    /// `[section, item, count]` (the `changeRanges` capability): a counted list taking its size
    /// inserts a million rows in one element. The list keeps its paths as those runs already.
    static func rangesJSON(_ list: IndexPathList) -> JSON {
        .integerTuples(list.runs.map { ($0.section, $0.item, $0.count > 1 ? $0.count : nil) })
    }
}

extension ChangeSet: WireEncodable {
    private static let from = JSON.MemberName("from"), to = JSON.MemberName("to")

    /// Packed, index paths and all: the main loop makes no jansson node of a page's thousand
    /// index paths; the writer builds the tree it encodes, in its scratch arena.
    var json: JSON { json(ranges: false) }

    /// `ranges`: runs of consecutive rows as `[section, item, count]` (`changeRanges`).
    func json(ranges: Bool) -> JSON {
        func paths(_ list: IndexPathList) -> JSON { ranges ? IndexPath.rangesJSON(list) : IndexPath.json(list) }
        return .packedObject([
            ("deletedSections", .array(deletedSections.map { JSON($0) })),
            ("insertedSections", .array(insertedSections.map { JSON($0) })),
            ("deleted", paths(deleted)),
            ("inserted", paths(inserted)),
            ("moved", .pairObjects(Self.from, Self.to, moved.map { ($0.from.section, $0.from.item, $0.to.section, $0.to.item) })),
            ("updated", paths(updated)),
        ])
    }
}

extension FetchError: WireEncodable {
    /// The error as the model describes it (`FetchError.fields`), which its error rows hold too.
    var json: JSON { fields }
}

extension LoadFailure: WireEncodable {
    var json: JSON {
        switch self {
        case .fetch(let error):
            return error.json
        case .child(let source, let failure):
            // The innermost source that failed is named; a sectioned source over a
            // sectioned source does not rename it.
            let inner = failure.json
            return inner["source"] == nil ? inner.setting("source", to: JSON(source)) : inner
        case .children(let message, let failures):
            return [
                "kind": "children",
                "message": JSON(message),
                "failures": .array(failures.map { ["source": JSON($0.source), "error": $0.failure.json] }),
            ]
        }
    }
}

extension SortDescriptor: WireEncodable {
    var json: JSON { ["keyPath": JSON(keyPath.description), "ascending": JSON(ascending)] }
}

extension PlaceholderStorageOptions: WireEncodable {
    var json: JSON { .array(Self.names.filter { contains($0.1) }.map { JSON($0.0) }) }
}

extension RemoteConfiguration {
    /// As `describeSource` shows it: secret header values and URL credentials redacted.
    var members: [(String, JSON)] {
        var remote: [(String, JSON)] = [
            ("baseURL", JSON(URLResolution.redacted(baseURL))),
            (
                "headers",
                .object(
                    headers.map { ($0.name, JSON(Self.isSecretHeader($0.name) ? "<redacted>" : $0.value)) }
                        + externalHeaders.map { ($0.name, $0.json) })
            ),
            ("timeoutSeconds", JSON(timeoutSeconds)),
        ]
        // Networks: shown when given; the proxy without its credentials.
        if !compression { remote.append(("compression", false)) }
        switch proxy {
        case .environment: break
        case .direct: remote.append(("proxy", .null))
        case .url(let url): remote.append(("proxy", JSON(URLResolution.redacted(url))))
        }
        var members: [(String, JSON)] = [
            ("remoteConfiguration", .object(remote)),
            ("apiPath", JSON(apiPath)),
            ("queryParameters", .object(queryParameters.map { ($0.name, JSON($0.value)) })),
            ("placeholderStorageOptions", placeholders.json),
            (
                "limits",
                [
                    "maxBodyBytes": JSON(maximumBodySize), "maxDepth": JSON(maximumDepth),
                    "maxObjectsPerPage": JSON(maximumObjectsPerPage),
                ]
            ),
        ]
        if let keyPath { members.append(("keyPath", JSON(keyPath.description))) }
        // Bodies as given, without the values of members named like secrets.
        if let graphql {
            var shown: [(String, JSON)] = [
                ("query", JSON(graphql.query)), ("variables", RemoteConfiguration.redactingSecretMembers(graphql.variables)),
                ("connection", JSON(graphql.connection.description)),
            ]
            let names = graphql.pageVariables
            if names != GraphQLQuery.PageVariables() {
                shown.append(
                    (
                        "pageVariables",
                        ["first": JSON(names.first), "after": JSON(names.after), "last": JSON(names.last), "before": JSON(names.before)]
                    ))
            }
            members.append(("graphql", .object(shown)))
        } else if method != .get || body != nil {
            var shown: [(String, JSON)] = [("method", JSON(method.rawValue))]
            if let body { shown.append(("body", RemoteConfiguration.redactingSecretMembers(body))) }
            members.append(("request", .object(shown)))
        }
        if !actions.isEmpty { members.append(("actions", .object(actions.map { ($0.name, $0.json) }))) }
        return members
    }
}

extension Action {
    /// As declared (`createSource`'s form), every default written out.
    var json: JSON {
        var members: [(String, JSON)] = []
        if let graphql {
            members.append(
                ("graphql", ["query": JSON(graphql.query), "variables": RemoteConfiguration.redactingSecretMembers(graphql.variables)]))
        } else {
            members += [("method", JSON(method.rawValue)), ("path", JSON(path.text))]
        }
        if let body { members.append(("body", RemoteConfiguration.redactingSecretMembers(body))) }
        if !headers.isEmpty {
            let shown = headers.map { ($0.name, RemoteConfiguration.isSecretHeader($0.name) ? JSON("<redacted>") : JSON($0.value.text)) }
            members.append(("headers", .object(shown)))
        }
        if !values.isEmpty {
            members.append(
                (
                    "values",
                    .object(values.map { ($0.name, ["type": JSON($0.value.kind.rawValue), "required": JSON($0.value.isRequired)]) })
                ))
        }
        let result: JSON =
            switch self.result {
            case .response: "response"
            case .none: "none"
            case .keyPath(let path): JSON(path.description)
            }
        members += [("optimistic", JSON(optimistic.rawValue)), ("result", result)]
        if !invalidates.isEmpty { members.append(("invalidates", .array(invalidates.map { JSON($0) }))) }
        members.append(("idempotencyKey", JSON(sendsIdempotencyKey)))
        return .object(members)
    }
}

extension Mutation {
    /// `describeSource.pendingMutations`' entry.
    var json: JSON {
        var members: [(String, JSON)] = [("mutation", JSON(id)), ("action", JSON(action.name))]
        if let identity { members.append(("identity", identity)) }
        members += [
            ("values", RemoteConfiguration.redactingSecretMembers(values)), ("status", JSON(state.rawValue)), ("attempts", JSON(attempts)),
        ]
        if let lastError { members.append(("lastError", lastError.json)) }
        return .object(members)
    }
}

extension ExternalHeader {
    /// As given: where the value comes from, never the value.
    var json: JSON {
        var members: [(String, JSON)]
        switch source {
        case .environment(let variable): members = [("env", JSON(variable))]
        case .file(let given, _): members = [("file", JSON(given))]
        }
        if !prefix.isEmpty { members.append(("prefix", JSON(prefix))) }
        return .object(members)
    }
}

extension RateLimitStatus: WireEncodable {
    var json: JSON {
        var members: [(String, JSON)] = []
        if let limit { members.append(("limit", JSON(limit))) }
        if let remaining { members.append(("remaining", JSON(remaining))) }
        if let resetAt { members.append(("resetAt", JSON(Timestamp.iso8601(resetAt)))) }
        return .object(members)
    }
}

extension PaginatorConfiguration {
    var members: [(String, JSON)] {
        var members: [(String, JSON)] = [
            (
                "paginatorKeys",
                [
                    "pageSize": JSON(keys.pageSize), "currentPage": JSON(keys.currentPage),
                    "numberOfPages": JSON(keys.numberOfPages), "numberOfTotalObjects": JSON(keys.numberOfTotalObjects),
                ]
            ),
            ("requestKeys", ["currentPage": JSON(pageQueryKey), "pageSize": JSON(pageSizeQueryKey)]),
            ("firstPage", JSON(firstPage)),
        ]
        switch initialPosition {
        case .page(let page)?: members.append(("initialPage", JSON(page)))
        case .offset(let offset)?: members.append(("initialOffset", JSON(offset)))
        case .cursor(let cursor)?: members.append(("initialCursor", JSON(cursor)))
        case nil: break
        }
        if let metadataKeyPath { members.append(("metadataKeyPath", JSON(metadataKeyPath.description))) }
        members.append(("pagination", paginationJSON))
        members.append(("prefetchDistance", JSON(prefetchDistance)))
        if let window {
            var limits: [(String, JSON)] = []
            if let pages = window.maximumPages { limits.append(("maxPages", JSON(pages))) }
            if let objects = window.maximumObjects { limits.append(("maxObjects", JSON(objects))) }
            members.append(("window", .object(limits)))
        }
        // `placeholders` is describeSource's own member, with the mode asked for in it.
        if let jumpThreshold { members.append(("jumpThreshold", JSON(jumpThreshold))) }
        return members
    }

    /// `pagination` as given, with every default filled in.
    private var paginationJSON: JSON {
        var members: [(String, JSON)] = [("strategy", JSON(strategy.name))]
        switch strategy {
        case .pageNumber, .linkHeader:
            break
        case .offset(let offsetKey, let limitKey, let nextOffsetPath):
            members += [("offsetKey", JSON(offsetKey)), ("limitKey", JSON(limitKey))]
            if let nextOffsetPath { members.append(("nextOffsetPath", JSON(nextOffsetPath.description))) }
        case .cursor(let cursorKey, let cursorPath, let fromLastObject, let hasMorePath):
            members.append(("cursorKey", JSON(cursorKey)))
            if let cursorPath { members.append(("cursorPath", JSON(cursorPath.description))) }
            if let fromLastObject { members.append(("cursorFromLastObject", JSON(fromLastObject.description))) }
            if let hasMorePath { members.append(("hasMorePath", JSON(hasMorePath.description))) }
            if let previousCursorPath { members.append(("prevCursorPath", JSON(previousCursorPath.description))) }
        case .nextURL(let path, let hasMorePath):
            members.append(("nextURLPath", JSON(path.description)))
            if let hasMorePath { members.append(("hasMorePath", JSON(hasMorePath.description))) }
            if let previousURLPath { members.append(("previousURLPath", JSON(previousURLPath.description))) }
        }
        if let totalPath { members.append(("totalPath", JSON(totalPath.description))) }
        if let totalHeader { members.append(("totalHeader", JSON(totalHeader))) }
        if let metadataHeader { members.append(("metadataHeader", JSON(metadataHeader))) }
        members += [
            ("maxPages", JSON(maximumPages)),
            ("maxPagesWithoutNewObjects", JSON(stalledPagesLimit)),
            ("endOnNotFound", JSON(endOnNotFound)),
            ("allowCrossOrigin", JSON(allowCrossOrigin)),
            ("duplicates", JSON(duplicates.rawValue)),
            ("retryAfter", ["maxRetries": JSON(retryAfterRetries), "maxDelaySeconds": JSON(retryAfterMaximumSeconds)]),
        ]
        return .object(members)
    }
}

extension PageRequest: WireEncodable {}

extension LoadState: WireEncodable {
    /// `{"state": "idle" | "loading" | "endReached"}`, or `{"state": "error", "error": {...}}`.
    var json: JSON {
        guard case .error(let error) = self else { return ["state": JSON(name)] }
        return ["state": "error", "error": error.json]
    }
}

extension LoadStates: WireEncodable {
    var json: JSON { ["refresh": refresh.json, "prepend": prepend.json, "append": append.json] }
}

extension SourceDescription: WireEncodable {
    var json: JSON {
        var members: [(String, JSON)] = [
            ("name", JSON(name)),
            ("kind", JSON(kind)),
            ("numberOfSections", JSON(counts.count)),
            ("sectionTitles", .array(sectionTitles)),
            ("counts", .array(counts.map { JSON($0) })),
            ("isFetching", JSON(isFetching)),
            ("revision", JSON(revision)),
        ]
        if let identityKey { members.append(("identityKey", JSON(identityKey.description))) }
        if !children.isEmpty { members.append(("children", .array(children.map { JSON($0) }))) }
        switch state {
        case .simple:
            break
        case .sectioned(let source, let sectioningKey, let sortDescriptors):
            members += [
                ("source", JSON(source)), ("sectioningKey", JSON(sectioningKey.description)), ("sortDescriptors", sortDescriptors.json),
            ]
        case .multi(let sources, let preserveSections):
            members += [("sources", .array(sources.map { JSON($0) })), ("preserveSections", JSON(preserveSections))]
        case .filtered(let source, let filter, let match, let fill):
            members += [("source", JSON(source)), ("filter", filter?.json ?? .null), ("match", match?.json ?? .null)]
            if let fill { members.append(("fill", JSON(fill))) }
        case .remote(let remote):
            members += Self.members(of: remote)
        case .paginated(let remote, let paging):
            members += Self.members(of: remote) + paging.paginator.members
            members += [
                ("pageSize", paging.pageSize.json),
                ("currentPage", paging.currentPage.json),
                ("numberOfPages", paging.numberOfPages.json),
                ("numberOfTotalResults", paging.numberOfTotalResults.json),
                ("hasMorePages", JSON(paging.hasMorePages)),
                ("numberOfObjects", JSON(paging.numberOfObjects)),
                ("nextPage", paging.next.json),
                ("previousPage", paging.previous.json),
                ("pagesLoaded", JSON(paging.pagesLoaded)),
                ("duplicatesDropped", JSON(paging.duplicatesDropped)),
                ("loadStates", paging.loadStates.json),
            ]
            if paging.paginator.window != nil { members.append(("pagesDropped", JSON(paging.pagesDropped))) }
            var placeholders: [(String, JSON)] = [
                ("requested", JSON(paging.paginator.placeholderMode.rawValue)), ("inForce", JSON(paging.placeholders.inForce.rawValue)),
            ]
            if let refusal = paging.placeholders.refusal { placeholders.append(("reason", JSON(refusal))) }
            var reasons: [(String, JSON)] = []
            if let refusal = paging.capabilities.pageBackwards { reasons.append(("pageBackwards", JSON(refusal))) }
            if let refusal = paging.capabilities.jump { reasons.append(("jump", JSON(refusal))) }
            members += [
                ("placeholders", .object(placeholders)),
                (
                    "capabilities",
                    .object([
                        ("pageBackwards", JSON(paging.capabilities.pageBackwards == nil)), ("jump", JSON(paging.capabilities.jump == nil)),
                        ("countedPlaceholders", JSON(paging.placeholders.inForce == .counted)), ("reasons", .object(reasons)),
                    ])
                ),
                ("jumps", JSON(paging.jumps)),
            ]
        }
        return .object(members)
    }

    private static func members(of remote: RemoteState) -> [(String, JSON)] {
        var members = remote.configuration.members
        if let lastURL = remote.lastURL { members.append(("lastURL", JSON(lastURL))) }
        if let lastError = remote.lastError { members.append(("lastError", lastError.json)) }
        if let lastWarning = remote.lastWarning { members.append(("lastWarning", lastWarning.json)) }
        if let rateLimit = remote.rateLimit { members.append(("rateLimit", rateLimit.json)) }
        if !remote.pendingMutations.isEmpty { members.append(("pendingMutations", .array(remote.pendingMutations.map(\.json)))) }
        // Members of opt-in features appear when they are on.
        if remote.cache.settings.enabled {
            var cache: [(String, JSON)] = [("enabled", true)]
            if let maximumAge = remote.cache.settings.maximumAgeSeconds { cache.append(("maxAgeSeconds", JSON(maximumAge))) }
            cache += [("maxPages", JSON(remote.cache.settings.maximumPages)), ("available", JSON(remote.cache.isAvailable))]
            members += [("cache", .object(cache)), ("stale", JSON(remote.cache.isStale))]
            if let cachedAt = remote.cache.cachedAt { members.append(("cachedAt", JSON(Timestamp.iso8601(cachedAt)))) }
        } else if remote.cache.isStale {
            // The previous query's rows, kept by updateSource until the new query's first page.
            members.append(("stale", true))
        }
        if let schedule = remote.refresh {
            var refresh: [(String, JSON)] = [("intervalSeconds", JSON(schedule.intervalSeconds))]
            if let next = schedule.nextRefreshAt { refresh.append(("nextRefreshAt", JSON(Timestamp.iso8601(next)))) }
            refresh.append(("consecutiveFailures", JSON(schedule.consecutiveFailures)))
            if let error = schedule.lastError { refresh.append(("lastError", error.json)) }
            members += [("refreshIntervalSeconds", JSON(schedule.intervalSeconds)), ("refresh", .object(refresh))]
        }
        return members
    }
}

extension Predicate: WireEncodable {
    /// As `createSource` and `setFilter` take it.
    var json: JSON {
        switch self {
        case .comparison(let keyPath, let op, let operand):
            ["keyPath": JSON(keyPath.description), "op": JSON(op.rawValue), "value": operand.value]
        case .and(let predicates): ["and": .array(predicates.map(\.json))]
        case .or(let predicates): ["or": .array(predicates.map(\.json))]
        case .not(let predicate): ["not": predicate.json]
        }
    }
}

extension MatchQuery: WireEncodable {
    var json: JSON { ["query": JSON(query), "keyPaths": .array(keyPaths.map { JSON($0.description) })] }
}

/// `withMatches`: how a row matches its filtered source's query, `{score, keyPath,
/// positions}` (positions: indexes of Unicode scalars in the string at keyPath), or null
/// (a source that is not filtered or has no query, a placeholder).
enum MatchEncoding {
    static func json(of object: JSON, in source: DataSource) -> JSON {
        guard let filtered = source as? FilteredDataSource, let found = filtered.matchPositions(of: object) else { return .null }
        return [
            "score": JSON(found.score), "keyPath": JSON(found.keyPath.description), "positions": .array(found.positions.map { JSON($0) }),
        ]
    }
}
