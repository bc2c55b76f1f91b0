@testable import Daemon
@testable import DataSources
import JSONKit
import JSONRPC
import WireSchema
import Testing

/// Actions on rows: the optimistic change at once, one request at a time in order, and each
/// mutation committed, rolled back alone, or queued, with the rows that arrived meanwhile kept.
@Suite struct ActionTests {
    static let actions: JSON = [
        "rename": [
            "method": "PATCH", "path": "/items/{id}", "body": ["title": "{$values.title}"],
            "values": ["title": ["type": "string", "required": true]], "optimistic": "update",
        ],
        "delete": ["method": "DELETE", "path": "/items/{id}", "optimistic": "remove", "result": "none"],
        "add": [
            "method": "POST", "path": "/items", "body": ["title": "{$values.title}", "rank": "{$values.rank}"],
            "values": ["title": ["type": "string", "required": true], "rank": ["type": "integer"]], "optimistic": "insert",
        ],
    ]

    /// A paginated source of pages of two, with the actions above and its first page loaded.
    static func loaded(
        _ rows: [JSON] = [["id": 1, "title": "a"], ["id": 2, "title": "b"]]
    ) throws -> (
        PaginatedDataSource, FakeLoader, Recorder
    ) {
        let loader = FakeLoader()
        let params: JSON = [
            "name": "p", "kind": "paginated", "identityKey": "id", "remoteConfiguration": ["baseURL": "http://api.invalid"],
            "apiPath": "/items", "pageSize": 2, "actions": actions,
        ]
        guard case .paginated(let configuration, let paginator) = try SourceSpec.decoding(createSourceParams: params).kind else {
            throw FieldError(field: "kind", expected: "paginated", got: "other")
        }
        let source = PaginatedDataSource(
            name: "p", identity: Identity(key: JSONKeyPath("id")), configuration: configuration, paginator: paginator, loader: loader)
        let recorder = Recorder().observing(source)
        source.fetchData()
        loader.respond(0, json: .array(rows), headers: [("Link", "<http://api.invalid/items?page=2>; rel=\"next\"")])
        return (source, loader, recorder)
    }

    static func titles(_ source: DataSource) -> [String] {
        source.allObjects.compactMap { row in row["title"]?.stringValue ?? (row["$placeholder"] != nil ? nil : row.text()) }
    }

    /// The request is built and sent by work the loader runs later: after the optimistic
    /// change and the answer are written (the daemon's loader runs it once they are), so
    /// building it never delays the change on screen.
    @Test func theRequestIsMadeAfterTheChangeIsShown() throws {
        let (source, loader, recorder) = try Self.loaded()
        loader.defersWork = true
        let changesBefore = recorder.changes.count
        _ = try source.performAction("rename", identity: 1, values: ["title": "A"])
        #expect(recorder.changes.count == changesBefore + 1, "the change is shown")
        #expect(loader.pending.count == 1, "no request yet")
        #expect(loader.runDeferred())
        #expect(loader.pending.last?.request.url == "http://api.invalid/items/1")
    }

    @Test func anUpdateShowsAtOnceAndTheServersVersionReplacesItWhenCommitted() throws {
        let (source, loader, recorder) = try Self.loaded()
        let changesBefore = recorder.changes.count
        let id = try source.performAction("rename", identity: 1, values: ["title": "A"])
        #expect(id == "m1")
        #expect(Self.titles(source) == ["A", "b"], "shown before the server answers")
        #expect(recorder.changes.count == changesBefore + 1, "one didChange")
        #expect(recorder.changes.last?.changes.updated.count == 1)
        let sent = loader.pending[1].request
        #expect(sent.method == .patch && sent.url == "http://api.invalid/items/1")
        #expect(try JSON.parse(sent.body ?? []) == ["title": "A"])
        let key = try #require(loader.header("Idempotency-Key", of: 1))
        #expect(key.count == 36 && key.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12])
        #expect(source.pendingMutationIDs(of: ["id": 1]) == ["m1"])

        loader.respond(1, json: ["id": 1, "title": "A (saved)", "extra": true])
        #expect(Self.titles(source) == ["A (saved)", "b"], "the server's version")
        #expect(recorder.settlements.map(\.status) == [.committed])
        #expect(source.pendingMutations.isEmpty && source.pendingMutationIDs(of: ["id": 1]).isEmpty)
    }

    @Test func aRefusedUpdateIsUndoneAloneKeepingWhatArrivedAndTheOtherPendingChanges() throws {
        let (source, loader, recorder) = try Self.loaded()
        _ = try source.performAction("rename", identity: 1, values: ["title": "A"])
        _ = try source.performAction("rename", identity: 2, values: ["title": "B"])
        #expect(Self.titles(source) == ["A", "B"])
        #expect(loader.pending.count == 2, "one at a time: the second waits for the first")
        // The next page arrives while both are pending.
        #expect(source.fetchNextPage())
        #expect(loader.requestedURLs[2] == "http://api.invalid/items?page=2&page_size=2")
        loader.respond(2, json: [["id": 3, "title": "c"]])
        #expect(Self.titles(source) == ["A", "B", "c"])

        loader.respond(1, status: 422, json: ["detail": "title is taken"])
        #expect(Self.titles(source) == ["a", "B", "c"], "only the refused change is undone")
        let settled = try #require(recorder.settlements.first)
        #expect(settled.status == .rolledBack && settled.mutation == "m1")
        #expect(settled.error?.kind == .http && settled.error?.status == 422)
        #expect(settled.error?.serverMessage == "title is taken")
        #expect(recorder.changes.last?.changes.updated.count == 1, "the undo is one didChange of that row")
        #expect(loader.pending.count == 4, "then the second is sent")
        #expect(loader.pending[3].request.url == "http://api.invalid/items/2")
    }

    @Test func aPageArrivingUnderAPendingUpdateShowsIt_AndARollbackShowsTheServersNewVersion() throws {
        let (source, loader, _) = try Self.loaded()
        _ = try source.performAction("rename", identity: 1, values: ["title": "A"])
        source.fetchData()
        loader.respond(2, json: [["id": 1, "title": "a, edited elsewhere"], ["id": 2, "title": "b"]])
        #expect(Self.titles(source) == ["A", "b"], "the pending change stays over the server's row")
        loader.respond(1, status: 400, json: ["detail": "no"])
        #expect(Self.titles(source) == ["a, edited elsewhere", "b"], "rolled back to the server's latest version")
    }

    @Test func aRemoveHidesTheRowAndARollbackPutsItBackWhereItWas() throws {
        let (source, loader, recorder) = try Self.loaded([["id": 1, "title": "a"], ["id": 2, "title": "b"]])
        _ = try source.performAction("delete", identity: 1, values: [:])
        #expect(Self.titles(source) == ["b"])
        #expect(loader.pending[1].request.method == .delete && loader.pending[1].request.body == nil)
        loader.respond(1, status: 403, json: ["detail": "not yours"])
        #expect(Self.titles(source) == ["a", "b"])
        #expect(recorder.changes.last?.changes.inserted.count == 1)
        #expect(source.rowsKeptByPages == 2, "the page holds the row again")

        _ = try source.performAction("delete", identity: 2, values: [:])
        loader.respond(2, status: 204, json: .null)
        #expect(Self.titles(source) == ["a"])
        #expect(recorder.settlements.map(\.status) == [.rolledBack, .committed])
        #expect(source.rowsKeptByPages == 1)
    }

    @Test func anInsertShowsATemporaryRowThatTheServersRowReplaces() throws {
        let (source, loader, recorder) = try Self.loaded()
        _ = try source.performAction("add", identity: nil, values: ["title": "new"])
        #expect(source.allObjects.first == ["title": "new", "id": "pending:m1"])
        #expect(try JSON.parse(loader.pending[1].request.body ?? []) == ["title": "new"], "an optional value left out is left out")
        loader.respond(1, status: 201, json: ["id": 9, "title": "new"])
        #expect(source.allObjects.first == ["id": 9, "title": "new"])
        #expect(recorder.settlements.map(\.status) == [.committed])
    }

    @Test func aNetworkFailureOr503QueuesTheMutationAndTheRetryCarriesTheSameIdempotencyKey() throws {
        let (source, loader, recorder) = try Self.loaded()
        _ = try source.performAction("rename", identity: 2, values: ["title": "B"])
        let key = loader.header("Idempotency-Key", of: 1)
        loader.fail(1, FetchError(kind: .transport, message: "connection reset"))
        #expect(recorder.settlements.map(\.status) == [.queued])
        #expect(Self.titles(source) == ["a", "B"], "a queued change stays shown")
        #expect(loader.pending.count == 3 && loader.pending[2].request.delaySeconds == 1)
        #expect(loader.header("Idempotency-Key", of: 2) == key)
        loader.respond(2, status: 503, json: ["detail": "busy"], headers: [("Retry-After", "7")])
        #expect(loader.pending[3].request.delaySeconds == 7, "Retry-After says when")
        loader.respond(3, json: ["id": 2, "title": "B"])
        #expect(recorder.settlements.map(\.status) == [.queued, .queued, .committed])
        #expect(source.pendingMutations.isEmpty)
    }

    @Test func anActionsSecretHeaderStaysOutOfTheErrorAndARowValueCannotAddAHeader() throws {
        let loader = FakeLoader()
        let params: JSON = [
            "name": "r", "kind": "remote", "identityKey": "id", "remoteConfiguration": ["baseURL": "http://api.invalid"],
            "apiPath": "/items",
            "actions": [
                "touch": [
                    "method": "POST", "path": "/items/{id}/touch", "optimistic": "none",
                    "headers": ["X-Api-Key": "s3cret-key", "If-Match": "{etag}"],
                ]
            ],
        ]
        guard case .remote(let configuration) = try SourceSpec.decoding(createSourceParams: params).kind else { return }
        let source = RemoteDataSource(name: "r", identity: Identity(key: JSONKeyPath("id")), configuration: configuration, loader: loader)
        let recorder = Recorder().observing(source)
        source.fetchData()
        loader.respond(0, json: [["id": 1, "etag": "v1"], ["id": 2, "etag": "v1\r\nX-Evil: 1"]])
        _ = try source.performAction("touch", identity: 1, values: [:])
        #expect(loader.header("X-Api-Key", of: 1) == "s3cret-key" && loader.header("If-Match", of: 1) == "v1")
        loader.respond(1, status: 400, json: ["detail": "bad key s3cret-key"])
        let error = try #require(recorder.settlements.first?.error)
        #expect(error.serverMessage?.contains("s3cret-key") == false && error.body?.contains("s3cret-key") == false, "\(error)")
        _ = try source.performAction("touch", identity: 2, values: [:])
        #expect(loader.pending.count == 2, "nothing sent")
        #expect(recorder.settlements.last?.status == .rolledBack)
        #expect(recorder.settlements.last?.error?.message.contains("holds a control character") == true)
    }

    @Test func a409IsAConflictAndIsRolledBack() throws {
        let (source, loader, recorder) = try Self.loaded()
        _ = try source.performAction("rename", identity: 1, values: ["title": "A"])
        loader.respond(1, status: 409, json: ["message": "changed since you read it"])
        #expect(recorder.settlements.first?.error?.kind == .conflict)
        #expect(recorder.settlements.first?.error?.serverMessage == "changed since you read it")
        #expect(Self.titles(source) == ["a", "b"])
    }

    @Test func aQueuedMutationCanBeCancelled_OneOnItsWayCannot() throws {
        let (source, loader, recorder) = try Self.loaded()
        _ = try source.performAction("rename", identity: 1, values: ["title": "A"])
        #expect(throws: Refusal.mutationInFlight(id: "m1")) { try source.cancelMutation("m1") }
        loader.fail(1, FetchError(kind: .timeout, message: "timed out"))
        try source.cancelMutation("m1")
        #expect(loader.pending[2].cancelled)
        #expect(Self.titles(source) == ["a", "b"])
        #expect(recorder.settlements.map(\.status) == [.queued, .rolledBack])
        #expect(recorder.settlements.last?.error?.kind == .cancelled)
        #expect(throws: Refusal.noSuchMutation(id: "m1", pending: [])) { try source.cancelMutation("m1") }
    }

    @Test func callsThatDoNotFitAreRefusedAndChangeNothing() throws {
        let (source, loader, recorder) = try Self.loaded()
        let changes = recorder.changes.count
        #expect(throws: Refusal.noSuchAction(name: "close", declared: ["rename", "delete", "add"])) {
            try source.performAction("close", identity: 1, values: [:])
        }
        #expect(throws: Refusal.identityNeeded(action: "rename", optimistic: "update")) {
            try source.performAction("rename", identity: nil, values: ["title": "x"])
        }
        #expect(throws: Refusal.noRowWithIdentity(7)) { try source.performAction("rename", identity: 7, values: ["title": "x"]) }
        #expect(throws: Refusal.valueRefused(name: "title", type: "string", got: 5)) {
            try source.performAction("rename", identity: 1, values: ["title": 5])
        }
        #expect(throws: Refusal.valueRefused(name: "title", type: "string", got: nil)) {
            try source.performAction("rename", identity: 1, values: [:])
        }
        #expect(throws: Refusal.valueNotDeclared(name: "color", declared: ["title"])) {
            try source.performAction("rename", identity: 1, values: ["title": "x", "color": "red"])
        }
        #expect(recorder.changes.count == changes && loader.pending.count == 1 && Self.titles(source) == ["a", "b"])
    }

    @Test func declarationsThatCannotWorkAreRefusedAtCreation() throws {
        func refusal(_ actions: JSON, identityKey: JSON = "id", mapping: JSON? = nil) -> String? {
            var params: JSON = [
                "name": "p", "kind": "remote", "identityKey": identityKey, "remoteConfiguration": ["baseURL": "http://api.invalid"],
                "apiPath": "/items", "actions": actions,
            ]
            if let mapping { params = params.setting("mapping", to: mapping) }
            do {
                _ = try SourceSpec.decoding(createSourceParams: params)
                return nil
            } catch let error as ResponseError {
                let message = error.message.hasPrefix("Invalid params: ") ? String(error.message.dropFirst(16)) : error.message
                return "\(error.data?["field"]?.stringValue ?? "?"): \(message)"
            } catch {
                return "\(error)"
            }
        }
        #expect(
            refusal(["x": ["method": "PATCH", "path": "/items/{id}", "body": ["a": "{$values.a}"], "optimistic": "update"]])
                == "actions.x.values: \"actions.x\" uses {$values.a}, which its \"values\" do not declare")
        #expect(
            refusal(["x": ["method": "DELETE", "path": "/items/{id}", "body": [:], "optimistic": "remove"]])
                == "actions.x.body: \"actions.x.body\": a DELETE is sent without a body")
        #expect(refusal(["x": ["method": "GET", "path": "/a", "optimistic": "none"]])?.hasPrefix("actions.x.method:") == true)
        #expect(refusal(["x": ["method": "POST", "path": "/items/{id", "optimistic": "none"]])?.contains("a \"{\" is not closed") == true)
        #expect(
            refusal(["x": ["method": "PATCH", "path": "/items/{slug}", "optimistic": "update"]], mapping: ["id": "id", "title": "name"])?
                .hasPrefix("actions.x: \"actions.x\" uses {slug}, which no mapped row has (the mapping makes id, title)") == true)
        #expect(
            refusal(["x": ["method": "PATCH", "path": "/items/{id}", "optimistic": "update"]], identityKey: .null)?.hasPrefix(
                "identityKey:") == true)
        #expect(refusal(["x": ["method": "POST", "path": "/items", "optimistic": "insert"]]) == nil)
    }
    @Test func aReloadKeepsPendingRemovesHiddenAndPendingInsertsFirst() throws {
        let (source, loader, _) = try Self.loaded([["id": 1, "title": "a"], ["id": 2, "title": "b"]])
        _ = try source.performAction("delete", identity: 2, values: [:])
        #expect(loader.pending.count == 2)
        _ = try source.performAction("add", identity: nil, values: ["title": "new"])
        #expect(Self.titles(source) == ["new", "a"])
        source.fetchData()
        loader.respond(2, json: [["id": 1, "title": "a"], ["id": 2, "title": "b"], ["id": 5, "title": "e"]])
        #expect(Self.titles(source) == ["new", "a", "e"], "the server still has 2: hidden; the insert stays first")
        #expect(source.rowsKeptByPages == 3, "the pages account for the rows shown")
        loader.respond(1, status: 404, json: ["detail": "Not found."])
        #expect(Self.titles(source) == ["new", "a", "b", "e"], "the refused remove brings the server's row back where it was")
        #expect(loader.pending.count == 4 && loader.pending[3].request.method == .post, "then the insert is sent")
    }

    @Test func aRemoteSourceShowsAndUndoesItsChangesToo() throws {
        let loader = FakeLoader()
        let params: JSON = [
            "name": "r", "kind": "remote", "identityKey": "id", "remoteConfiguration": ["baseURL": "http://api.invalid"],
            "apiPath": "/items", "actions": Self.actions,
        ]
        guard case .remote(let configuration) = try SourceSpec.decoding(createSourceParams: params).kind else {
            throw FieldError(field: "kind", expected: "remote", got: "other")
        }
        let source = RemoteDataSource(name: "r", identity: Identity(key: JSONKeyPath("id")), configuration: configuration, loader: loader)
        let recorder = Recorder().observing(source)
        source.fetchData()
        loader.respond(0, json: [["id": 1, "title": "a"]])
        _ = try source.performAction("delete", identity: 1, values: [:])
        #expect(source.allObjects == [Placeholder.noResultsRow], "the last row gone: no results")
        loader.respond(1, status: 403, json: ["detail": "not yours"])
        #expect(Self.titles(source) == ["a"])
        _ = try source.performAction("rename", identity: 1, values: ["title": "A"])
        source.fetchData()
        loader.respond(3, json: [["id": 1, "title": "a2"], ["id": 2, "title": "b"]])
        #expect(Self.titles(source) == ["A", "b"], "a reload shows the pending change over the server's rows")
        loader.respond(2, json: ["id": 1, "title": "A"])
        #expect(Self.titles(source) == ["A", "b"])
        #expect(recorder.settlements.map(\.status) == [.rolledBack, .committed])
    }
    /// A source with the cache on, over `store`, and its actions.
    static func cached(_ store: MemoryPageStore) throws -> (PaginatedDataSource, FakeLoader, Recorder) {
        let loader = FakeLoader()
        let params: JSON = [
            "name": "p", "kind": "paginated", "identityKey": "id", "remoteConfiguration": ["baseURL": "http://api.invalid"],
            "apiPath": "/items", "pageSize": 2, "actions": actions, "cache": ["enabled": true],
        ]
        guard case .paginated(let configuration, let paginator) = try SourceSpec.decoding(createSourceParams: params).kind else {
            throw FieldError(field: "kind", expected: "paginated", got: "other")
        }
        let source = PaginatedDataSource(
            name: "p", identity: Identity(key: JSONKeyPath("id")), configuration: configuration, paginator: paginator, loader: loader)
        let recorder = Recorder().observing(source)
        source.attachCache(store, key: CacheAndRefreshTests.key)
        return (source, loader, recorder)
    }

    @Test func queuedMutationsOutliveTheDaemonInItsCacheAndTheNextOneSendsThem() throws {
        let store = MemoryPageStore()
        let (first, before, _) = try Self.cached(store)
        first.fetchData()
        before.respond(0, json: [["id": 1, "title": "a"], ["id": 2, "title": "b"]])
        _ = try first.performAction("rename", identity: 1, values: ["title": "A"])
        _ = try first.performAction("delete", identity: 2, values: [:])
        let key = try #require(before.header("Idempotency-Key", of: 1))
        before.fail(1, FetchError(kind: .transport, message: "network is unreachable"))
        #expect(store.entries.count == 2, "the pages, and the pending actions beside them")
        #expect(
            store.notEvictable.map(\.label) == [CacheAndRefreshTests.key.label + " (pending actions)"],
            "the pending actions, and only they, are kept however full the cache is")

        // The next daemon, on the same file: the rows as the server sent them, under the changes.
        let (second, after, recorder) = try Self.cached(store)
        #expect(second.pendingMutations.map(\.id) == ["m1", "m2"])
        #expect(after.pending.first?.request.method == .patch, "sent at once")
        #expect(after.header("Idempotency-Key", of: 0) == key, "with the key it had")
        second.fetchData()
        #expect(Self.titles(second) == ["A"], "the rename shown, the removed row hidden")
        after.respond(0, json: ["id": 1, "title": "A"])
        let delete = try #require(after.pending.lastIndex { $0.request.method == .delete })
        after.respond(delete, status: 204, json: .null)
        #expect(recorder.settlements.map(\.status) == [.committed, .committed])
        #expect(second.pendingMutations.isEmpty)
        #expect(store.entries.count == 1, "the pending actions' entry is gone once none is left")
        #expect(try second.performAction("rename", identity: 1, values: ["title": "again"]) == "m3")
    }

    /// An action changes a row of a page the cache already holds: once it settles, the next
    /// save writes every page again (not only the new one), so the cache holds the row as the
    /// server gave it back.
    @Test func aPageAnActionChangedIsStoredAgainWithTheNextPage() throws {
        let store = MemoryPageStore()
        let (source, loader, _) = try Self.cached(store)
        source.fetchData()
        loader.respond(
            0, json: [["id": 1, "title": "a"], ["id": 2, "title": "b"]],
            headers: [("Link", "<http://api.invalid/items?page=2>; rel=\"next\"")])
        #expect(store.pagesWritten == 1)
        _ = try source.performAction("rename", identity: 1, values: ["title": "A"])
        loader.respond(1, json: ["id": 1, "title": "A!"])
        #expect(source.pendingMutations.isEmpty)
        #expect(source.fetchNextPage())
        loader.respond(2, json: [["id": 3, "title": "c"]])
        #expect(store.pagesWritten == 3, "both pages written again")
        #expect(store.pages(CacheAndRefreshTests.key)?.pages.flatMap(\.rows).compactMap { $0["title"]?.stringValue } == ["A!", "b", "c"])
    }

    @Test func aPendingActionsEntryThatIsNotOneIsDroppedWithAWarning() throws {
        let store = MemoryPageStore()
        let key = PageCacheKey(
            material: CacheAndRefreshTests.key.material + "\npending actions", label: CacheAndRefreshTests.key.label + " (pending actions)")
        for payload in [
            #"{"format":"datasourced-pending-actions","version":1,"mutations":[{"id":"m1","action":"close","values":{},"idempotencyKey":"k","attempts":0}]}"#,
            #"{"format":"datasourced-pending-actions","version":1,"mutations":[{"id":"m01","action":"delete","identity":1,"values":{},"idempotencyKey":"k","attempts":0}]}"#,
            #"{"format":"datasourced-pending-actions","version":1,"mutations":[{"id":"m1","action":"rename","identity":1,"values":{"title":5},"idempotencyKey":"k","attempts":0}]}"#,
            #"{"format":"datasourced-pending-actions","version":1,"mutations":[{"id":"m1","action":"delete","identity":1,"values":{},"idempotencyKey":"k\r\nX: 1","attempts":0}]}"#,
            "not json", String(repeating: "[", count: 200) + String(repeating: "]", count: 200),
        ] {
            store.entries[key] = StoredPages(payload: Array(payload.utf8), storedAt: 0)
            let loader = FakeLoader()
            let params: JSON = [
                "name": "p", "kind": "paginated", "identityKey": "id", "remoteConfiguration": ["baseURL": "http://api.invalid"],
                "apiPath": "/items", "actions": Self.actions, "cache": ["enabled": true],
            ]
            guard case .paginated(let configuration, let paginator) = try SourceSpec.decoding(createSourceParams: params).kind else {
                return
            }
            let source = PaginatedDataSource(
                name: "p", identity: Identity(key: JSONKeyPath("id")), configuration: configuration, paginator: paginator, loader: loader)
            var warnings: [String] = []
            source.attachCache(store, key: CacheAndRefreshTests.key, warn: { warnings.append($0) })
            #expect(source.pendingMutations.isEmpty && loader.pending.isEmpty, "\(payload.prefix(60))")
            #expect(warnings.first?.hasPrefix("dropped the pending actions kept for") == true, "\(payload.prefix(60))")
            #expect(store.entries[key] == nil)
        }
    }
}

/// A GraphQL source's actions: mutations POSTed to its URL with their variables filled.
@Suite struct GraphQLActionTests {
    static let mutation = "mutation($id: ID!, $title: String!) { updateBook(id: $id, title: $title) { book { id title } } }"

    static func loaded() throws -> (PaginatedDataSource, FakeLoader, Recorder) {
        let loader = FakeLoader()
        let params: JSON = [
            "name": "g", "kind": "paginated", "identityKey": "id", "remoteConfiguration": ["baseURL": "http://api.invalid"],
            "apiPath": "/graphql", "pageSize": 2,
            "graphql": [
                "query":
                    "query($first: Int, $after: String) { books(first: $first, after: $after) { pageInfo { hasNextPage endCursor } edges { node { id title } } } }",
                "connection": "books",
            ],
            "actions": [
                "rename": [
                    "graphql": ["query": JSON(mutation), "variables": ["id": "{id}", "title": "{$values.title}"]],
                    "values": ["title": ["type": "string", "required": true]], "optimistic": "update", "result": "data.updateBook.book",
                ]
            ],
        ]
        guard case .paginated(let configuration, let paginator) = try SourceSpec.decoding(createSourceParams: params).kind else {
            throw FieldError(field: "kind", expected: "paginated", got: "other")
        }
        let source = PaginatedDataSource(
            name: "g", identity: Identity(key: JSONKeyPath("id")), configuration: configuration, paginator: paginator, loader: loader)
        let recorder = Recorder().observing(source)
        source.fetchData()
        loader.respond(
            0,
            json: [
                "data": [
                    "books": [
                        "pageInfo": ["hasNextPage": false, "endCursor": "c2"],
                        "edges": [["node": ["id": 1, "title": "a"]], ["node": ["id": 2, "title": "b"]]],
                    ]
                ]
            ])
        return (source, loader, recorder)
    }

    @Test func aMutationIsPostedWithItsVariablesAndItsResultReplacesTheRow() throws {
        let (source, loader, recorder) = try Self.loaded()
        _ = try source.performAction("rename", identity: 1, values: ["title": "A"])
        #expect(ActionTests.titles(source) == ["A", "b"])
        let sent = loader.pending[1].request
        #expect(sent.method == .post && sent.url == "http://api.invalid/graphql")
        #expect(try JSON.parse(sent.body ?? []) == ["query": JSON(Self.mutation), "variables": ["id": 1, "title": "A"]])
        loader.respond(1, json: ["data": ["updateBook": ["book": ["id": 1, "title": "A (saved)"]]]])
        #expect(ActionTests.titles(source) == ["A (saved)", "b"])
        #expect(recorder.settlements.map(\.status) == [.committed])
    }

    @Test func errorsWithNoResultRollBackAsKindGraphQL_ARateLimitQueues() throws {
        let (source, loader, recorder) = try Self.loaded()
        _ = try source.performAction("rename", identity: 2, values: ["title": ""])
        loader.respond(
            1, json: ["errors": [["message": "title must not be blank", "path": ["updateBook"]]], "data": ["updateBook": .null]])
        #expect(ActionTests.titles(source) == ["a", "b"])
        let settled = try #require(recorder.settlements.first)
        #expect(settled.status == .rolledBack && settled.error?.kind == .graphql)
        #expect(settled.error?.serverMessage == "title must not be blank")
        _ = try source.performAction("rename", identity: 1, values: ["title": "A"])
        loader.respond(2, json: ["errors": [["message": "API rate limit exceeded", "type": "RATE_LIMITED"]]])
        #expect(recorder.settlements.last?.status == .queued, "a rate limit is waited out, not rolled back")
        #expect(ActionTests.titles(source) == ["A", "b"])
    }

    @Test func aGraphQLActionTakesNoMethodPathOrBody() throws {
        func refusal(_ action: JSON) -> String? {
            let params: JSON = [
                "name": "g", "kind": "remote", "identityKey": "id", "remoteConfiguration": ["baseURL": "http://api.invalid"],
                "apiPath": "/graphql", "actions": ["x": action],
            ]
            do {
                _ = try SourceSpec.decoding(createSourceParams: params)
                return nil
            } catch let error as ResponseError {
                return error.data?["field"]?.stringValue
            } catch {
                return "\(error)"
            }
        }
        #expect(refusal(["graphql": ["query": "mutation { x }"], "path": "/x", "optimistic": "none"]) == "actions.x.path")
        #expect(refusal(["graphql": ["query": "mutation { x }"], "method": "PATCH", "optimistic": "none"]) == "actions.x.method")
        #expect(refusal(["graphql": ["query": "mutation { x }"], "body": [:], "optimistic": "none"]) == "actions.x.body")
        #expect(refusal(["path": "/x", "optimistic": "none"]) == "actions.x.method")
        #expect(refusal(["method": "POST", "optimistic": "none"]) == "actions.x.path")
        #expect(
            refusal(["graphql": ["query": "mutation { x(a: $a) }", "variables": ["a": "{$values.a}"]], "optimistic": "none"])
                == "actions.x.values")
        #expect(refusal(["graphql": ["query": "mutation { x }"], "optimistic": "none"]) == nil)
    }
}

/// `updateSource {actions}` over the wire: the actions change, the rows and the query do not.
@Suite struct ActionUpdateWireTests {
    @Test func updateSourceWithActionsAloneReplacesThemAndLoadsNothingAgain() throws {
        let rows: JSON = [["id": 1, "title": "a"]]
        let fetcher = ScriptedFetcher([
            "http://api.invalid/items": .success(
                RemoteResponse(
                    url: "http://api.invalid/items", status: 200, headers: [("Content-Type", "application/json")], body: rows.encoded()))
        ])
        let client = WireClient(fetcher: fetcher)
        _ = client.request("initialize", [:])
        let created = client.request(
            "createSource",
            [
                "name": "r", "kind": "remote", "identityKey": "id", "remoteConfiguration": ["baseURL": "http://api.invalid"],
                "apiPath": "/items", "actions": ActionTests.actions,
            ])
        #expect(created["result"]?["actions"]?.objectMembers?.map(\.key) == ["rename", "delete", "add"])
        #expect(client.request("fetchData", ["source": "r", "wait": true])["result"]?["outcome"] == "finished")
        let updated = client.request(
            "updateSource", ["source": "r", "actions": ["close": ["method": "PATCH", "path": "/items/{id}", "optimistic": "none"]]])
        #expect(updated["result"]?["actions"]?.objectMembers?.map(\.key) == ["close"])
        #expect(fetcher.requested == ["http://api.invalid/items"], "nothing loaded again")
        #expect(client.request("allObjects", ["source": "r"])["result"] == rows)
        let refused = client.request("performAction", ["source": "r", "action": "rename", "identity": 1, "values": ["title": "x"]])
        #expect(refused["error"]?["data"]?["field"] == "action")
        #expect(refused["error"]?["data"]?["actions"] == ["close"])
        let bad = client.request("updateSource", ["source": "r", "actions": ["x": ["method": "GET", "path": "/", "optimistic": "none"]]])
        #expect(bad["error"]?["data"]?["field"] == "actions.x.method")
    }
}
