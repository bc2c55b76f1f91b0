import Basics
import JSONKit

/// An edit of `objects` at one index, for the rows shown and the pages that hold them.
enum ObjectEdit {
    /// `sameIdentity`: the row keeps its identity (an update), so it changes in place.
    case replaced(Int, JSON, sameIdentity: Bool)
    case removed(Int)
    case inserted(Int, JSON)
}

/// Actions on rows (`performAction`): the optimistic change shown at once, one request at a
/// time in the order made, and each settled as the server answers: committed (its version of
/// the row replaces the optimistic one), rolled back (that mutation alone undone), or queued
/// (sent again after a wait).
extension RemoteCollection {
    /// Calls `name` on the row `identityValue` with `values`; answers the mutation's ID. The
    /// optimistic change is shown (a `didChange`) before the request is made.
    package func performAction(_ name: String, identity identityValue: JSON?, values: JSON) throws(Refusal) -> String {
        guard let action = configuration.actions.first(where: { $0.name == name }) else {
            throw .noSuchAction(name: name, declared: configuration.actions.map(\.name))
        }
        if let refusal = action.refusal(of: values) { throw refusal }
        holdEveryRow()
        guard mutations.pending.count < MutationLedger.maximumPending else {
            throw .tooManyPendingMutations(limit: MutationLedger.maximumPending)
        }
        var index: Int?
        if action.optimistic.needsRow || identityValue != nil {
            guard let identityValue else { throw .identityNeeded(action: name, optimistic: action.optimistic.rawValue) }
            guard let found = objectIndex(of: identityValue) else { throw .noRowWithIdentity(identityValue) }
            index = found
        }
        let id = mutations.nextID()
        var mutation = Mutation(
            id: id, action: action, identity: identityValue, values: values,
            idempotencyKey: MutationLedger.idempotencyKey())
        switch (action.optimistic, index) {
        case (.update, let index?):
            let row = objects[index]
            mutations.add(mutation, base: row)
            let changed = MutationLedger.merging(values, into: row)
            objects[index] = changed
            showEdit(.replaced(index, changed, sameIdentity: true))
        case (.remove, let index?):
            mutations.add(mutation, base: objects[index], removedAt: (index, index > 0 ? identity.of(objects[index - 1]) : nil))
            objects.remove(at: index)
            keepPagesInStep(with: .removed(index))
            showEdit(.removed(index))
        case (.insert, _):
            var row = MutationLedger.merging(values, into: [:])
            var temporary = identity.key.flatMap { row.value(at: $0) }
            if temporary == nil || temporary?.isNull == true, let key = identity.key {
                temporary = JSON("pending:\(id)")
                row = row.setting(key.components[...], to: temporary!)
            }
            mutation = Mutation(
                id: id, action: action, identity: temporary ?? identity.of(row), values: values,
                idempotencyKey: mutation.idempotencyKey)
            mutations.add(mutation, base: row)
            objects.insert(row, at: 0)
            keepPagesInStep(with: .inserted(0, row))
            showEdit(.inserted(0, row))
        default:
            mutations.add(mutation, base: index.map { objects[$0] })
        }
        storePendingMutations()
        // The request is made once the optimistic change and the answer are written: building
        // it (templates, credentials, the URL) would otherwise stand between the person and
        // the change on screen.
        if !loader.later({ [weak self] in self?.sendNextMutation() }) { sendNextMutation() }
        return id
    }

    /// Rolls back a mutation not yet answered: one queued (waiting to be sent again) or
    /// waiting for those made before it. One on its first way to the server is refused.
    package func cancelMutation(_ id: String) throws(Refusal) {
        guard let index = mutations.index(of: id) else {
            throw .noSuchMutation(id: id, pending: mutations.pending.map(\.id))
        }
        if mutations.pending[index].state == .inFlight { throw .mutationInFlight(id: id) }
        mutationHandles.removeValue(forKey: id)?.cancel()
        rollBack(id, FetchError(kind: .cancelled, message: "cancelled by cancelMutation"))
        sendNextMutation()
    }

    /// The pending mutations of the row shown with `row`'s identity, oldest first.
    package func pendingMutationIDs(of row: JSON) -> [String] {
        guard !mutations.isEmpty, identity.key != nil, !row.hasMember(Placeholder.memberName) else { return [] }
        return mutations.pendingIDs(of: identity.of(row))
    }

    package var pendingMutations: [Mutation] { mutations.pending }

    /// Where the object with this identity is among `objects`.
    func objectIndex(of identityValue: JSON) -> Int? {
        if let key = identity.key, let path = indexPath(for: JSON.object([]).setting(key.components[...], to: identityValue)),
            path.section == 0
        {
            let index = path.item - objectsStartInLayout
            if objects.indices.contains(index), identity.of(objects[index]) == identityValue { return index }
        }
        return objects.firstIndex { identity.of($0) == identityValue }
    }

    // MARK: Pages that arrive under pending mutations

    /// The objects in `range` (just arrived from the server) with the pending mutations
    /// applied on top: updated rows take their changes, removed rows go; with `startsRun`
    /// (the list replaced), the rows pending inserts add go first. False when nothing changed.
    @discardableResult
    func rebaseObjects(in range: Range<Int>, startsRun: Bool) -> Bool {
        guard !mutations.isEmpty, identity.key != nil else { return false }
        if startsRun { mutations.listReplaced() }
        var changed = false
        for index in range.reversed() {
            let identityValue = identity.of(objects[index])
            guard mutations.changes(identityValue) else { continue }
            guard let shown = mutations.arrived(objects[index], identity: identityValue) else {
                mutations.hid(identityValue, at: index, after: index > 0 ? identity.of(objects[index - 1]) : nil)
                objects.remove(at: index)
                keepPagesInStep(with: .removed(index))
                changed = true
                continue
            }
            if shown != objects[index] {
                objects[index] = shown
                changed = true
            }
        }
        if startsRun {
            for (offset, inserted) in mutations.insertedRows.enumerated() {
                objects.insert(inserted.row, at: offset)
                keepPagesInStep(with: .inserted(offset, inserted.row))
                changed = true
            }
        }
        return changed
    }

    /// The rows of a page that arrives before the ones held (not yet in `objects`), with the
    /// pending mutations applied; `removed` says how many a pending remove hides.
    func rebased(_ rows: [JSON]) -> (rows: [JSON], removed: Int) {
        guard !mutations.isEmpty, identity.key != nil else { return (rows, 0) }
        var kept: [JSON] = []
        for row in rows {
            let identityValue = identity.of(row)
            if let shown = mutations.arrived(row, identity: identityValue) { kept.append(shown) }
        }
        return (kept, rows.count - kept.count)
    }

    // MARK: Sending, one at a time

    /// Sends the oldest pending mutation, unless it is on its way: mutations reach the server
    /// in the order made, so each one's `{keyPath}` and the rows it changes are as it expects.
    func sendNextMutation() {
        guard let head = mutations.pending.first, head.state != .inFlight, mutationHandles[head.id] == nil else { return }
        let delay =
            head.state == .queued ? MutationLedger.retryDelay(attempts: head.attempts, retryAfter: head.lastError?.retryAfterSeconds) : 0
        let action = head.action
        let row = head.identity.flatMap { identityValue in
            mutations.base(of: identityValue) ?? objectIndex(of: identityValue).map { objects[$0] }
        }
        let request: RemoteRequest
        switch actionRequest(head, row: action.optimistic == .insert ? nil : row, delaySeconds: delay) {
        case .success(let made): request = made
        case .failure(let error):
            // Nothing was sent: the change cannot be made as declared.
            rollBack(head.id, error)
            return sendNextMutation()
        }
        if head.state == .waiting { mutations.update(head.id) { $0.state = .inFlight } }
        let id = head.id, configuration = self.configuration, secrets = request.secretValues
        let errorURL = URLResolution.redacted(request.url)
        mutationHandles[id] = loader.load(
            request,
            decode: { response in
                Self.decodeActionResponse(response, action: action, configuration: configuration, url: errorURL, secrets: secrets)
            },
            completion: { [weak self] result in
                guard let self, self.mutationHandles.removeValue(forKey: id) != nil else { return }
                self.settle(id, result)
                self.sendNextMutation()
            })
    }

    /// The request of `mutation`: its path, body and headers filled from the row and the
    /// values, with the source's headers and credentials; refused when it would leave the
    /// source's origin (a row's value cannot send the source's credentials elsewhere).
    private func actionRequest(_ mutation: Mutation, row: JSON?, delaySeconds: Double) -> Result<RemoteRequest, FetchError> {
        let action = mutation.action
        func failure(_ words: String) -> Result<RemoteRequest, FetchError> {
            .failure(FetchError(kind: .mapping, message: "action \"\(action.name)\": \(words)"))
        }
        let path: String
        switch action.path.rendered(row: row, values: mutation.values, escape: Self.pathSegment) {
        case .success(let rendered): path = action.graphql == nil ? rendered : configuration.apiPath
        case .failure(let missing): return failure(missing.words)
        }
        let url = URLResolution.requestURL(baseURL: configuration.baseURL, apiPath: path, query: [])
        guard let origin = URLResolution.origin(of: url), origin == configuration.ownOrigin else {
            var error = FetchError(
                kind: .crossOrigin, message: "action \"\(action.name)\": its path leads away from the source's origin")
            error.url = URLResolution.redacted(url)
            return .failure(error)
        }
        var body: [UInt8]?
        if let graphql = action.graphql {
            switch Template.renderedBody(graphql.variables, row: row, values: mutation.values) {
            case .success(let variables): body = JSON.object([("query", JSON(graphql.query)), ("variables", variables)]).encoded()
            case .failure(let missing): return failure(missing.words)
            }
        } else if let template = action.body {
            switch Template.renderedBody(template, row: row, values: mutation.values) {
            case .success(let rendered): body = rendered.encoded()
            case .failure(let missing): return failure(missing.words)
            }
        }
        var headers: [(name: String, value: String)] = []
        for (name, template) in action.headers {
            switch template.rendered(row: row, values: mutation.values) {
            case .success(let value):
                // A row's value cannot add a header of its own (CR, LF) to the request.
                guard value.utf8.allSatisfy({ $0 == 9 || ($0 >= 32 && $0 != 127) }) else {
                    return failure("the value of header \(name) holds a control character")
                }
                headers.append((name, value))
            case .failure(let missing): return failure(missing.words)
            }
        }
        if action.sendsIdempotencyKey { headers.append(("Idempotency-Key", mutation.idempotencyKey)) }
        let credentials: RequestCredentials
        switch configuration.credentials(for: url, policy: credentialPolicy) {
        case .success(let read): credentials = read
        case .failure(var error):
            error.url = URLResolution.redacted(url)
            return .failure(error)
        }
        var request = RemoteRequest(
            url: url, headers: credentials.headers + headers, timeoutSeconds: configuration.timeoutSeconds,
            maximumBodySize: configuration.maximumBodySize, delaySeconds: delaySeconds)
        request.method = action.method.httpMethod
        request.body = body
        request.tls = configuration.tls
        request.compression = configuration.compression
        request.proxy = configuration.proxy
        // An action's own header named like a secret is kept out of errors and recordings too.
        request.secretValues = credentials.secrets + headers.filter { RemoteConfiguration.isSecretHeader($0.name) }.map(\.value)
        request.originBoundHeaders = credentials.originBound
        return .success(request)
    }

    /// A value in a path: percent-encoded whole, so it stays one segment (`/`, `?` and `#`
    /// encoded), and `.` and `..` do not walk the path.
    static func pathSegment(_ value: String) -> String {
        let encoded = URLResolution.percentEncoded(value)
        return encoded == "." || encoded == ".." ? String(repeating: "%2E", count: encoded.count) : encoded
    }

    /// The server's answer: its version of the object (`result`), mapped as the rows are.
    private static func decodeActionResponse(
        _ response: RemoteResponse, action: Action, configuration: RemoteConfiguration, url: String, secrets: [String]
    ) -> Result<DecodedResponse, FetchError> {
        let document: JSON?
        switch ResponseDecoding.document(response, maximumDepth: configuration.maximumDepth, secrets: secrets) {
        case .success(let decoded): document = decoded
        case .failure(var error):
            if let status = error.status, status == 409 || status == 412 {
                error = error.withKind(.conflict)
            }
            return .failure(error)
        }
        // A GraphQL mutation refused answers 200 with `errors` and nothing where its result is.
        if action.graphql != nil, let document, let errors = GraphQLDecoding.errorList(in: document, secrets: secrets) {
            let answered: JSON? =
                switch action.result {
                case .keyPath(let path): document.value(at: path).flatMap { $0.isNull ? nil : $0 }
                case .response, .none: nil
                }
            if answered == nil { return .failure(GraphQLDecoding.failure(errors, response: response)) }
        }
        var objects: [JSON] = []
        let found: JSON? =
            switch action.result {
            case .none: nil
            case .response: document
            case .keyPath(let path): document?.value(at: path)
            }
        if let found, found.isObject {
            switch configuration.mapping.map({ $0.map(found) }) ?? .success(found) {
            case .success(let mapped): objects = [mapped]
            // The server took the change; a version it sends that the mapping cannot read
            // leaves the optimistic row in place.
            case .failure: break
            }
        }
        return .success(DecodedResponse(objects: objects, document: nil, status: response.status, headers: response.headers))
    }

    // MARK: Settling

    private func settle(_ id: String, _ result: Result<DecodedResponse, FetchError>) {
        switch result {
        case .success(let response): commit(id, serverRow: response.objects.first)
        case .failure(let error) where Self.isTransient(error):
            guard let mutation = mutations.pending.first(where: { $0.id == id }) else { return }
            mutations.update(id) {
                $0.state = .queued
                $0.attempts += 1
                $0.lastError = error
                $0.retryAt =
                    WallClock.secondsSince1970() + MutationLedger.retryDelay(attempts: $0.attempts, retryAfter: error.retryAfterSeconds)
            }
            storePendingMutations()
            emit(
                .didSettleMutation(
                    MutationSettlement(mutation: id, action: mutation.action.name, status: .queued, error: error, invalidates: [])))
        case .failure(let error):
            rollBack(id, error)
        }
    }

    /// A network failure, a timeout, or 408, 429 or 5xx: the server may take it later.
    static func isTransient(_ error: FetchError) -> Bool {
        if error.rateLimited { return true }
        switch error.kind {
        case .transport, .timeout, .tls, .proxy: return true
        case .http:
            guard let status = error.status else { return false }
            return status == 408 || status == 429 || (500...599).contains(status)
        default: return false
        }
    }

    private func commit(_ id: String, serverRow: JSON?) {
        guard let mutation = mutations.pending.first(where: { $0.id == id }) else { return }
        let action = mutation.action
        if let identityValue = mutation.identity {
            if let serverRow, action.result != .none, action.optimistic != .insert {
                mutations.setBase(serverRow, of: identityValue)
            } else if action.optimistic == .update, let base = mutations.base(of: identityValue) {
                // The change is the server's now: a rollback of a later one keeps it.
                mutations.setBase(MutationLedger.merging(mutation.values, into: base), of: identityValue)
            }
        }
        let base = mutation.identity.flatMap { mutations.base(of: $0) }
        mutations.remove(id)
        storePendingMutations()
        if let identityValue = mutation.identity, let index = objectIndex(of: identityValue) {
            switch action.optimistic {
            case .update, .none:
                if let base, let shown = mutations.shown(base, identity: identityValue), shown != objects[index] {
                    objects[index] = shown
                    showEdit(.replaced(index, shown, sameIdentity: identity.of(shown) == identityValue))
                }
            case .insert:
                guard let serverRow, action.result != .none else { break }
                replaceInsertedRow(at: index, with: serverRow)
            case .remove:
                break
            }
        }
        emit(
            .didSettleMutation(
                MutationSettlement(mutation: id, action: action.name, status: .committed, error: nil, invalidates: action.invalidates)))
    }

    /// The server's row for a committed insert takes the temporary row's place, as a row
    /// arriving from the server: under the pending mutations of its identity. When the list
    /// shows that row already (a reload brought it while the insert's answer was lost and
    /// retried), or a pending remove hides it, the temporary row goes instead.
    private func replaceInsertedRow(at index: Int, with serverRow: JSON) {
        let serverIdentity = identity.of(serverRow)
        let existing = objectIndex(of: serverIdentity)
        guard existing == nil || existing == index, let shown = mutations.arrived(serverRow, identity: serverIdentity) else {
            if existing == nil {
                mutations.hid(serverIdentity, at: index, after: index > 0 ? identity.of(objects[index - 1]) : nil)
            }
            objects.remove(at: index)
            keepPagesInStep(with: .removed(index))
            return showEdit(.removed(index))
        }
        guard shown != objects[index] else { return }
        let sameIdentity = identity.of(objects[index]) == serverIdentity
        objects[index] = shown
        keepPagesInStep(with: .replaced(index, shown, sameIdentity: sameIdentity))
        showEdit(.replaced(index, shown, sameIdentity: sameIdentity))
    }

    /// Undoes `id` alone: its row shows the server's version with the other pending
    /// mutations still applied; rows that arrived meanwhile stay.
    func rollBack(_ id: String, _ error: FetchError) {
        guard let mutation = mutations.pending.first(where: { $0.id == id }) else { return }
        let identityValue = mutation.identity
        let base = identityValue.flatMap { mutations.base(of: $0) }
        let removedPlace = identityValue.flatMap { mutations.removedPlace(of: $0) }
        let held = identityValue.map { mutations.holds($0) } ?? false
        mutations.remove(id)
        storePendingMutations()
        if let identityValue {
            let index = objectIndex(of: identityValue)
            switch (mutation.action.optimistic, index) {
            case (.update, let index?):
                let shown = base.flatMap { mutations.shown($0, identity: identityValue) } ?? base ?? objects[index]
                if shown != objects[index] {
                    objects[index] = shown
                    showEdit(.replaced(index, shown, sameIdentity: true))
                }
            case (.remove, nil):
                if held, let base, let shown = mutations.shown(base, identity: identityValue) {
                    let afterRow = removedPlace?.after.flatMap { objectIndex(of: $0) }.map { $0 + 1 }
                    let at = min(afterRow ?? removedPlace?.index ?? 0, objects.count)
                    objects.insert(shown, at: at)
                    keepPagesInStep(with: .inserted(at, shown))
                    showEdit(.inserted(at, shown))
                }
            case (.insert, let index?):
                objects.remove(at: index)
                keepPagesInStep(with: .removed(index))
                showEdit(.removed(index))
            default:
                break
            }
        }
        emit(
            .didSettleMutation(
                MutationSettlement(mutation: id, action: mutation.action.name, status: .rolledBack, error: error, invalidates: [])))
    }
}

extension Action.Method {
    var httpMethod: HTTPMethod {
        switch self {
        case .post: .post
        case .put: .put
        case .patch: .patch
        case .delete: .delete
        }
    }
}
