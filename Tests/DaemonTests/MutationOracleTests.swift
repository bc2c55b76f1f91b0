@testable import Daemon
@testable import DataSources
import JSONKit
import Testing

/// Random sequences of actions, server answers (commits, refusals, network failures before
/// and after the server applied the change), reloads, live refreshes, restarts on the
/// persisted cache, pages, cancellations and edits made elsewhere, against a simulated server. After every step the rows shown must be the rows the source last heard
/// from the server with the pending mutations applied in the order made, and every change set
/// must replay onto a copy of the rows; at the end, the server has applied each committed
/// mutation exactly once (a retry carries the same Idempotency-Key).
@Suite struct MutationOracleTests {
    typealias Seeded = PagingOracleTests.Seeded

    /// The server: rows by identity in order, and the answers it gave by Idempotency-Key.
    struct Server {
        var rows: [(id: Int, row: JSON)] = []
        var nextID = 100
        var applied: [String: Int] = [:]
        var answers: [String: (status: Int, body: JSON)] = [:]

        func index(of id: Int) -> Int? { rows.firstIndex { $0.id == id } }

        /// Rows 1...count, titled "t1", "t2"...
        mutating func seed(rows count: Int) {
            for id in 1...count { rows.append((id, ["id": JSON(id), "title": JSON("t\(id)")])) }
        }

        /// Applies `request` once per key: a retry of a request it applied gets the same answer.
        mutating func apply(_ request: RemoteRequest, key: String) -> (status: Int, body: JSON) {
            if let answer = answers[key] { return answer }
            applied[key, default: 0] += 1
            let path = request.url.split(separator: "/").last.map(String.init) ?? ""
            let answer: (Int, JSON)
            switch request.method {
            case .patch:
                guard let id = Int(path), let at = index(of: id), let body = try? JSON.parse(request.body ?? []) else {
                    answer = (404, ["detail": "Not found."])
                    break
                }
                rows[at].row = MutationLedger.merging(body, into: rows[at].row)
                answer = (200, rows[at].row)
            case .delete:
                guard let id = Int(path), let at = index(of: id) else {
                    answer = (404, ["detail": "Not found."])
                    break
                }
                rows.remove(at: at)
                answer = (204, .null)
            case .post:
                let body = (try? JSON.parse(request.body ?? [])) ?? [:]
                let row = MutationLedger.merging(body, into: ["id": JSON(nextID)])
                rows.append((nextID, row))
                nextID += 1
                answer = (201, row)
            default:
                answer = (405, ["detail": "Method not allowed."])
            }
            answers[key] = answer
            return answer
        }
    }

    /// What the source should show: the rows it last heard from the server (a reload's, each
    /// changed by a commit since), with the pending mutations applied in order.
    struct Model {
        var heard: [Int: JSON] = [:]
        /// The rows the persisted cache holds: those of the last load answered with no
        /// mutation pending.
        var stored: [Int: JSON] = [:]
        var pending: [(id: String, action: String, identity: JSON?, values: JSON)] = []

        func shown() -> [JSON] {
            var rows = heard.mapValues { $0 }.reduce(into: [String: JSON]()) { $0["\($1.key)"] = $1.value }
            for mutation in pending {
                switch mutation.action {
                case "rename":
                    let key = mutation.identity!.text()
                    if let row = rows[key] { rows[key] = MutationLedger.merging(mutation.values, into: row) }
                case "delete":
                    rows[mutation.identity!.text()] = nil
                default:
                    rows[mutation.identity!.text()] = MutationLedger.merging(mutation.values, into: ["id": mutation.identity!])
                }
            }
            return Self.ordered(Array(rows.values))
        }

        /// Rows in the order of their identities' text: compared as JSON values (members in any order).
        static func ordered(_ rows: [JSON]) -> [JSON] {
            rows.sorted { ($0["id"]?.text() ?? $0.text()) < ($1["id"]?.text() ?? $1.text()) }
        }
    }

    /// One run: the source's requests, the server, the model, and what was committed.
    final class Run {
        let seed: Int
        /// The daemon's loader; a restart makes a new one (the old one's requests are lost).
        var loader = FakeLoader()
        var server = Server()
        var model = Model()
        var answered = 0
        var made = 0
        var committedKeys: Set<String> = []
        var keyOfMutation: [String: String] = [:]
        /// Answers a GET: the server's rows for its URL, which the model hears.
        let answerLoad: (Run, Int, RemoteRequest) -> Void

        init(seed: Int, answerLoad: @escaping (Run, Int, RemoteRequest) -> Void) {
            self.seed = seed
            self.answerLoad = answerLoad
        }

        /// Answers the first request not answered yet: a load as `answerLoad` does, a
        /// mutation by `outcome` (0: the network fails before the server sees it; 1: the
        /// server applies it and the connection drops; 2: refused; else applied and answered).
        func answerNext(_ outcome: Int) {
            guard answered < loader.pending.count else { return }
            let index = answered
            answered += 1
            // A cancelled mutation's request (or a load's) is answered by no one.
            guard !loader.pending[index].cancelled else { return }
            let request = loader.pending[index].request
            guard request.method != .get else { return answerLoad(self, index, request) }
            let key = loader.header("Idempotency-Key", of: index) ?? ""
            guard let mutation = model.pending.first(where: { keyOfMutation[$0.id] == key }) else {
                Issue.record("seed \(seed): a request for no pending mutation: \(request.method) \(request.url)")
                return
            }
            // A server that applied a key answers its retries as it did then, refusing none.
            switch server.answers[key] != nil && outcome == 2 ? 3 : outcome {
            case 0:
                loader.fail(index, FetchError(kind: .transport, message: "connection refused"))
            case 1:
                _ = server.apply(request, key: key)
                loader.fail(index, FetchError(kind: .transport, message: "connection reset"))
            case 2:
                loader.respond(index, status: 422, json: ["detail": "no"])
                model.pending.removeAll { $0.id == mutation.id }
            default:
                let answer = server.apply(request, key: key)
                loader.respond(index, status: answer.status, json: answer.body)
                model.pending.removeAll { $0.id == mutation.id }
                if (200...299).contains(answer.status) {
                    committedKeys.insert(key)
                    heardCommit(of: mutation.action, identity: mutation.identity, answer: answer.body)
                }
            }
        }

        /// What the source hears from a commit: the server's row in place of the one it held
        /// (a row it does not hold, on a page not loaded since a reload, stays unheard), a
        /// removed row gone, an inserted row under its new identity.
        private func heardCommit(of action: String, identity: JSON?, answer: JSON) {
            switch action {
            case "rename":
                if let id = identity?.integerValue, model.heard[id] != nil { model.heard[id] = answer }
            case "delete":
                if let id = identity?.integerValue { model.heard[id] = nil }
            default:
                // A reload may have brought the row already (a retry's answer is the first
                // one, replayed): the row shown stays the one heard last.
                if let id = answer["id"]?.integerValue, model.heard[id] == nil { model.heard[id] = answer }
            }
        }

        /// Performs a random action on a random row shown (or an add).
        func act(_ source: RemoteCollection, step: Int, using random: inout Seeded) throws {
            let shown = source.allObjects.filter { $0["id"]?.integerValue != nil }
            let action = ["rename", "delete", "add"][Int.random(in: 0..<3, using: &random)]
            let target: JSON? = action == "add" || shown.isEmpty ? .none : .some(shown[Int.random(in: 0..<shown.count, using: &random)])
            if action != "add", target == nil { return }
            let values: JSON = action == "delete" ? [:] : ["title": JSON("s\(seed)-\(step)")]
            let id = try source.performAction(action, identity: target?["id"], values: values)
            made += 1
            #expect(id == "m\(made)")
            let identity = action == "add" ? JSON("pending:\(id)") : target?["id"]
            model.pending.append((id, action, identity, values))
            keyOfMutation[id] = source.pendingMutations.first { $0.id == id }?.idempotencyKey
        }

        /// Cancels a random pending mutation; one in flight is refused and stays.
        func cancel(_ source: RemoteCollection, using random: inout Seeded) {
            guard !model.pending.isEmpty else { return }
            let id = model.pending[Int.random(in: 0..<model.pending.count, using: &random)].id
            do {
                try source.cancelMutation(id)
                model.pending.removeAll { $0.id == id }
            } catch {
                #expect(error == .mutationInFlight(id: id), "seed \(seed): \(error)")
            }
        }

        /// Changes a row on the server alone: seen when a page or a reload brings it.
        func editElsewhere(step: Int, using random: inout Seeded) {
            guard !server.rows.isEmpty else { return }
            let at = Int.random(in: 0..<server.rows.count, using: &random)
            server.rows[at].row = server.rows[at].row.setting("title", to: JSON("elsewhere-\(step)"))
        }

        /// Whether the source shows the model's rows and pending mutations (recorded if not).
        func check(_ source: RemoteCollection, step: Int) -> Bool {
            let shown = Model.ordered(source.allObjects.filter { Placeholder.kind(of: $0) == nil })
            guard shown == model.shown() else {
                Issue.record("seed \(seed) step \(step): shown \(shown), expected \(model.shown())")
                return false
            }
            #expect(source.pendingMutations.map(\.id) == model.pending.map(\.id), "seed \(seed) step \(step)")
            return true
        }

        /// Answers everything left, each committed, and checks each commit reached the server once.
        func settle(_ source: RemoteCollection, _ mirror: PagingOracleTests.Mirror, _ recorder: Recorder) {
            settle(source, mirrors: [mirror], recorders: [recorder])
        }

        /// The same across the sources of a run that restarted: each restart's observers.
        func settle(_ source: RemoteCollection, mirrors: [PagingOracleTests.Mirror], recorders: [Recorder]) {
            var rounds = 0
            while answered < loader.pending.count, rounds < 500 {
                answerNext(3)
                rounds += 1
            }
            #expect(source.pendingMutations.isEmpty, "seed \(seed): all settled")
            for mirror in mirrors { #expect(mirror.problems.isEmpty, "seed \(seed): \(mirror.problems.prefix(3))") }
            for key in committedKeys { #expect(server.applied[key] == 1, "seed \(seed): applied exactly once") }
            #expect(server.applied.values.allSatisfy { $0 == 1 })
            let committed = recorders.reduce(0) { $0 + $1.settlements.filter { $0.status == .committed }.count }
            #expect(committed == committedKeys.count, "seed \(seed)")
        }
    }

    /// Over a remote source with the persisted cache on: besides the steps above, live
    /// refreshes and restarts. A restart is a daemon killed and started on the same cache: the
    /// requests in flight are lost, the new source shows the rows of the last load stored with
    /// the pending mutations kept beside them, and sends those again with their keys.
    @Test(arguments: seeds(300))
    func theRowsShownAreTheServersUnderThePendingMutations(seed: Int) throws {
        var random = Seeded(state: UInt64(seed))
        let run = Run(seed: seed) { run, index, _ in
            run.model.heard = Dictionary(uniqueKeysWithValues: run.server.rows.map { ($0.id, $0.row) })
            // The cache keeps what the server sent, so not while changes are pending.
            if run.model.pending.isEmpty { run.model.stored = run.model.heard }
            run.loader.respond(index, json: .array(run.server.rows.map(\.row)))
        }
        let params: JSON = [
            "name": "r", "kind": "remote", "identityKey": "id", "remoteConfiguration": ["baseURL": "http://api.invalid"],
            "apiPath": "/items", "placeholderStorageOptions": [], "actions": ActionTests.actions, "cache": ["enabled": true],
        ]
        guard case .remote(let configuration) = try SourceSpec.decoding(createSourceParams: params).kind else { return }
        let store = MemoryPageStore()
        var mirrors: [PagingOracleTests.Mirror] = [], recorders: [Recorder] = []
        func start() -> RemoteDataSource {
            let source = RemoteDataSource(
                name: "r", identity: Identity(key: JSONKeyPath("id")), configuration: configuration, loader: run.loader)
            let mirror = PagingOracleTests.Mirror()
            source.addObserver(mirror)
            mirrors.append(mirror)
            recorders.append(Recorder().observing(source))
            source.attachCache(store, key: CacheAndRefreshTests.key)
            return source
        }
        var source = start()
        run.server.seed(rows: Int.random(in: 3...8, using: &random))

        source.fetchData()
        run.answerNext(3)
        for step in 0..<60 {
            switch Int.random(in: 0..<12, using: &random) {
            case 0...3: try run.act(source, step: step, using: &random)
            case 4...7: run.answerNext(Int.random(in: 0..<6, using: &random))
            case 8: if !source.isFetching { source.fetchData() }
            case 9: _ = source.refresh { _ in }
            case 10:
                // Killed and started again on the same cache file.
                run.loader = FakeLoader()
                run.answered = 0
                // IDs go on after the pending ones the cache keeps (the others' are free again).
                run.made = run.model.pending.compactMap { Int($0.id.dropFirst()) }.max() ?? 0
                source = start()
                run.model.heard = run.model.stored
                source.fetchData()
            default: run.editElsewhere(step: step, using: &random)
            }
            guard run.check(source, step: step) else { return }
        }
        run.settle(source, mirrors: mirrors, recorders: recorders)
    }

    /// The same over a paginated source (pages of three, by a cursor after the last id, so
    /// that rows added and removed on the server shift no page): pages arrive between the
    /// actions, a reload starts again from the first page, and pending mutations are
    /// cancelled. A page's row the source already holds (a row added by an action, then
    /// brought by a page) is a duplicate, dropped: the row heard first stays.
    @Test(arguments: seeds(300))
    func pagesArriveUnderThePendingMutations(seed: Int) throws {
        var random = Seeded(state: UInt64(seed))
        let run = Run(seed: seed) { run, index, request in
            let after = request.url.components(separatedBy: "after=").dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) }
            let rest = run.server.rows.filter { after == nil || $0.id > after! }
            let page = Array(rest.prefix(3))
            if after == nil { run.model.heard = [:] }
            for (id, row) in page where run.model.heard[id] == nil { run.model.heard[id] = row }
            let next: JSON = rest.count > 3 ? JSON("\(page.last!.id)") : .null
            run.loader.respond(index, json: ["items": .array(page.map(\.row)), "next": next])
        }
        let params: JSON = [
            "name": "p", "kind": "paginated", "identityKey": "id", "remoteConfiguration": ["baseURL": "http://api.invalid"],
            "apiPath": "/items", "keyPath": "items", "pageSize": 3, "placeholderStorageOptions": [],
            "pagination": ["strategy": "cursor", "cursorKey": "after", "cursorPath": "next"], "actions": ActionTests.actions,
        ]
        guard case .paginated(let configuration, let paginator) = try SourceSpec.decoding(createSourceParams: params).kind else {
            return
        }
        let source = PaginatedDataSource(
            name: "p", identity: Identity(key: JSONKeyPath("id")), configuration: configuration, paginator: paginator,
            loader: run.loader)
        let mirror = PagingOracleTests.Mirror()
        source.addObserver(mirror)
        let recorder = Recorder().observing(source)
        run.server.seed(rows: Int.random(in: 4...14, using: &random))

        source.fetchData()
        run.answerNext(3)
        for step in 0..<80 {
            switch Int.random(in: 0..<12, using: &random) {
            case 0...3: try run.act(source, step: step, using: &random)
            case 4...7: run.answerNext(Int.random(in: 0..<6, using: &random))
            case 8: if !source.isFetching { _ = source.fetchNextPage() }
            case 9: if !source.isFetching, Int.random(in: 0..<3, using: &random) == 0 { source.fetchData() }
            case 10: run.cancel(source, using: &random)
            default: run.editElsewhere(step: step, using: &random)
            }
            guard run.check(source, step: step) else { return }
        }
        run.settle(source, mirror, recorder)
    }
}
