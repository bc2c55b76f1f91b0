import JSONKit

/// What remote and paginated sources share: Instant Cocoa's collection fetcher. One
/// request at a time; each carries a generation number, and a completion whose
/// generation is no longer current (cancelled or superseded) is dropped unseen.
package class RemoteCollection: DataSource {
    /// Changed in place only by `update(to:cacheKey:keepRows:)` (its query, path and headers).
    package private(set) var configuration: RemoteConfiguration
    let loader: RemoteLoading
    private var inFlight: FetchHandle?
    private var generation = 0
    /// The data rows loaded so far, placeholders excluded.
    var objects: [JSON] = []
    var lastError: FetchError?
    /// `describeSource.lastWarning`: a GraphQL response's errors beside its rows.
    var lastWarning: FetchError?
    var lastURL: String?
    /// Which values read from the environment or files may go where (the daemon's allowances);
    /// nil: each may go to the source's own origin.
    package var credentialPolicy: (any CredentialPolicy)?
    /// The actions called and not yet settled (`RemoteCollection+Actions.swift`).
    var mutations = MutationLedger() {
        // Actions change rows in place: the pages a paging run thinks unchanged since the
        // cache last stored them may not be.
        didSet { if !mutations.isEmpty { actionsChangedRowsSinceStored = true } }
    }
    /// Rows changed by actions since the persisted cache was last written.
    private(set) var actionsChangedRowsSinceStored = false
    /// The request of each mutation on its way (or waiting out its retry's delay).
    var mutationHandles: [String: FetchHandle] = [:]
    init(
        name: String, identity: Identity, configuration: RemoteConfiguration, loader: RemoteLoading
    ) {
        self.configuration = configuration
        self.loader = loader
        super.init(name: name, identity: identity)
        setRows([])
    }

    var placeholders: PlaceholderStorageOptions { configuration.placeholders }

    func setRows(_ rows: [JSON]) {
        replaceLayout(Layout(sections: [RowArray(rows)], titles: [""]))
    }

    /// The same with the rows' identity hashes known.
    func setRows(_ rows: [JSON], hashes: [Int]) {
        replaceLayout(Layout(sections: [RowArray(rows)], titles: [""]), hashes: [RowArray(hashes)])
    }

    /// Keeps the first `head` rows (the caller knows they are unchanged) and replaces the
    /// rest with `tail`, without copying or comparing the rows kept. `hashes`: the tail's
    /// identity hashes, when the caller has them.
    func setRows(keeping head: Int, tail: [JSON], hashes: [Int]? = nil) {
        replaceTail(from: head, with: tail, hashes: hashes)
    }

    /// What to request: the configured collection with `query` merged over the configured
    /// parameters and `body` values set in the configured body (a POST's), or a URL the
    /// server gave (a next link), which keeps its own parameters and gains the configured
    /// ones it lacks.
    enum RequestTarget {
        case collection(query: [(name: String, value: String)], body: [(path: JSONKeyPath, value: JSON)] = [])
        case url(String)
    }

    /// The URL a target stands for.
    func url(of target: RequestTarget) -> String {
        switch target {
        case .collection(let extraQuery, _):
            var query = configuration.queryParameters.filter { given in !extraQuery.contains { $0.name == given.name } }
            query += extraQuery
            return URLResolution.requestURL(baseURL: configuration.baseURL, apiPath: configuration.apiPath, query: query)
        case .url(let url):
            // A URL on another origin (allowed to leave) gets no secret query parameter: secrets
            // go to the source's own origin only.
            let query =
                URLResolution.origin(of: url) == configuration.ownOrigin
                ? configuration.queryParameters
                : configuration.queryParameters.filter { !RemoteConfiguration.isSecretQueryParameter($0.name) }
            return URLResolution.addingMissingQuery(query, to: url)
        }
    }

    /// GETs `target` (after `delaySeconds`), and hands the decoded response to `completion`.
    /// With `validators` the GET is conditional, and a `304` comes back as a response with
    /// status 304, no objects and nothing parsed.
    ///
    /// Header values from the environment or files are read here, for this request: one that
    /// cannot be read fails it at once (kind `transport`), before anything is sent.
    func request(
        _ target: RequestTarget = .collection(query: []), delaySeconds: Double = 0, validators: Validators? = nil,
        completion: @escaping (Result<DecodedResponse, FetchError>) -> Void
    ) {
        generation &+= 1
        let current = generation
        let url = url(of: target)
        lastURL = URLResolution.redacted(url)
        let redactedURL = URLResolution.redacted(url)
        let credentials: RequestCredentials
        switch configuration.credentials(for: url, policy: credentialPolicy) {
        case .success(let read):
            credentials = read
        case .failure(var error):
            error.url = redactedURL
            completion(.failure(error))
            return
        }
        let conditional = validators.map { !$0.isEmpty } ?? false
        var request = RemoteRequest(
            url: url, headers: credentials.headers + (validators?.conditionalHeaders ?? []),
            timeoutSeconds: configuration.timeoutSeconds,
            maximumBodySize: configuration.maximumBodySize, delaySeconds: delaySeconds)
        request.tls = configuration.tls
        request.compression = configuration.compression
        request.proxy = configuration.proxy
        request.secretValues = credentials.secrets
        request.originBoundHeaders = credentials.originBound
        if let body = configuration.bodyTemplate {
            request.method = .post
            if case .collection(_, let values) = target {
                request.body = configuration.encodedBody(setting: values)
            } else {
                request.body = body.encoded()
            }
        }
        let configuration = self.configuration
        let secrets = credentials.secrets, metadataHeader = self.metadataHeader, identity = self.identity
        inFlight = loader.load(
            request,
            decode: { response in
                // Hashed here too, off the main loop: a large page's rows cost the main loop
                // their placing, not their hashing.
                let decoded = ResponseDecoding.decode(
                    response, configuration: configuration, url: redactedURL, conditional: conditional,
                    secrets: secrets
                ).map { $0.hashed(by: identity) }
                guard let metadataHeader else { return decoded }
                return decoded.flatMap {
                    ResponseDecoding.readingMetadata(
                        fromHeader: metadataHeader, of: $0, maximumDepth: configuration.maximumDepth, url: redactedURL)
                }
            },
            completion: { [weak self] result in
                guard let self, self.generation == current else { return }
                self.inFlight = nil
                // What this response is stored under: the values its request was sent with.
                self.responseCredentials = credentials.cacheMaterial
                switch result {
                case .success(let response):
                    self.rateLimit = response.rateLimit ?? self.rateLimit
                    if let warning = response.warning { self.lastWarning = warning }
                case .failure(let error): self.rateLimit = error.rateLimit ?? self.rateLimit
                }
                completion(result)
            })
    }

    /// A response header holding the page metadata as JSON (paginated sources).
    var metadataHeader: String? { nil }

    /// What the last response's headers said of the rate limit (`describeSource`'s `rateLimit`).
    private(set) var rateLimit: RateLimitStatus?

    /// Drops the request in flight: its completion, if it ever comes, changes nothing.
    func abandonRequest() {
        generation &+= 1
        inFlight?.cancel()
        inFlight = nil
    }

    /// Ends a cycle in flight as cancelled (the seed's contract: one final event per fetch).
    func endCycleAsCancelled(_ message: String) {
        abandonRequest()
        emit(.failedWithError(.cancelled(message, url: lastURL)))
    }

    var remoteState: SourceDescription.RemoteState {
        SourceDescription.RemoteState(
            configuration: configuration, lastURL: lastURL, lastError: lastError, lastWarning: lastWarning,
            cache: SourceDescription.CacheState(
                settings: configuration.cache, isAvailable: isCacheAvailable,
                isStale: isStale, cachedAt: cachedAt),
            refresh: refreshSchedule, rateLimit: rateLimit, pendingMutations: mutations.pending)
    }

    // MARK: A new query (updateSource)

    /// `updateSource`: `configuration` differs from the current one in its query parameters,
    /// API path or headers only. A load in flight ends `cancelled` (by updateSource), and its
    /// response, if it ever comes, changes nothing; the next `fetchData` loads the new query
    /// (from its page in the persisted cache first, when there is one: `cacheKey` names it).
    /// With `keepRows` the rows shown stay, marked stale, until the new query's first page
    /// replaces them in one change set; without, they go at once.
    package func update(to configuration: RemoteConfiguration, cacheKey: PageCacheKey?, keepRows: Bool) {
        stopRefresh()
        if isFetching { cancelFetch(reason: .updateSource) }
        self.configuration = configuration
        if let cacheKey, let (store, _) = pageCache { pageCache = (store, cacheKey) }
        lastError = nil
        startNewQuery(keepingRows: keepRows && !objects.isEmpty)
        if keepRows, !objects.isEmpty {
            if !isStale || cachedAt != nil {
                isStale = true
                cachedAt = nil
                emit(.didChangeFreshness(stale: true, cachedAt: nil))
            }
        } else {
            confirmed()
        }
    }

    /// `updateSource {actions}`: a configuration that differs only in its actions, taken as it
    /// is (the rows do not depend on them: nothing loads again). Pending mutations keep the
    /// actions they were made with.
    package func replaceActions(with configuration: RemoteConfiguration) {
        self.configuration = configuration
    }

    /// Forgets what belonged to the previous query (validators, paging state); drops the
    /// rows unless `keepingRows`.
    func startNewQuery(keepingRows: Bool) {}

    /// Whether a fetch has asked the server for anything yet.
    package var hasRequested: Bool { lastURL != nil }

    /// Whether the rows shown are the previous query's, kept by `updateSource` until the new
    /// one's first page: stale, and not from the persisted cache.
    var showsPreviousQuery: Bool { isStale && cachedAt == nil }

    // MARK: The persisted cache

    private var pageCache: (store: PageCacheStore, key: PageCacheKey)?
    /// Says that an entry was dropped, and why (the daemon logs it on stderr).
    private var cacheWarning: (String) -> Void = { _ in }

    /// Keeps this source's pages in `store` under `key`, when its configuration opts in.
    /// `warn` hears of each entry dropped as unusable (damaged, edited, another format).
    package func attachCache(_ store: PageCacheStore, key: PageCacheKey, warn: @escaping (String) -> Void = { _ in }) {
        guard configuration.cache.enabled else { return }
        pageCache = (store, key)
        cacheWarning = warn
        restorePendingMutations()
    }

    /// Where the pending mutations are kept beside the pages (the configuration's key: the
    /// same list, whichever credentials its requests carry).
    private var pendingMutationsKey: PageCacheKey? {
        pageCache.map { PageCacheKey(material: $0.key.material + "\npending actions", label: $0.key.label + " (pending actions)") }
    }

    /// Writes the pending mutations (or removes the entry once none is left), when the cache is on.
    func storePendingMutations() {
        guard let (store, _) = pageCache, let key = pendingMutationsKey else { return }
        guard !mutations.isEmpty else { return store.remove(key) }
        let payload = PendingMutationsEntry.encoded(mutations)
        store.write(key, storedAt: WallClock.secondsSince1970(), evictable: false, payload: { payload })
    }

    /// The mutations a daemon before this one left pending in the cache: pending again, their
    /// changes shown when the rows come, and sent. An entry that cannot be taken up is dropped
    /// with a warning, as a damaged page entry is.
    private func restorePendingMutations() {
        guard let (store, _) = pageCache, let key = pendingMutationsKey, mutations.isEmpty, let stored = store.read(key) else { return }
        switch PendingMutationsEntry.decoded(stored.payload, actions: configuration.actions, maximumDepth: configuration.maximumDepth) {
        case .success(let restored):
            mutations.restore(restored)
            sendNextMutation()
        case .failure(let problem):
            store.remove(key)
            cacheWarning("dropped the pending actions kept for \(key.label) (source \"\(name)\"): \(problem.reason)")
        }
    }

    /// The values read from the environment or files that the last response's request was sent
    /// with (nil when the source reads none): part of the key its pages are stored under.
    private(set) var responseCredentials: String?

    /// The entry's key for the values `credentials` (the configuration's key when nil): two
    /// tokens never share cached rows.
    private func cacheKey(_ key: PageCacheKey, credentials: String?) -> PageCacheKey {
        guard let credentials else { return key }
        return PageCacheKey(material: key.material + "\ncredentials " + credentials, label: key.label)
    }

    var isCacheAvailable: Bool { pageCache?.store.isAvailable ?? false }

    /// True while the rows shown came from the persisted cache and no response has confirmed
    /// or replaced them yet.
    package private(set) var isStale = false
    /// When the cached rows shown were stored or last confirmed (seconds since 1970), while stale.
    package private(set) var cachedAt: Double?

    /// The cached entry, unless there is none or it is older than `maxAgeSeconds`. An entry
    /// that is not one this source could have written (damaged, edited, another format:
    /// `CachedPages.decode`, then `cacheProblem(in:)`) is removed, with a warning naming its
    /// label: the list is then fetched from the server as if there had been none.
    func cachedPages() -> (pages: CachedPages, storedAt: Double)? {
        readCacheEntry({ $0.read($1) }, storedAt: \.storedAt, phase: "read") { stored, _ in
            switch CachedPages.decode(stored, limits: CachedPages.Limits(configuration)) {
            case .success(var pages):
                warmOpenCosts.mark("decode")
                // Hashed once, all pages together (a long list on every core).
                let hashes = identity.hashes(of: pages.pages.flatMap(\.rows))
                var start = 0
                for index in pages.pages.indices {
                    let count = pages.pages[index].rows.count
                    pages.pages[index].hashes = Array(hashes[start..<start + count])
                    start += count
                }
                warmOpenCosts.mark("identities")
                if let problem = cacheProblem(in: pages) { return .failure(CachedPages.Problem(reason: problem)) }
                warmOpenCosts.mark("checks")
                return .success((pages, stored.storedAt))
            case .failure(let failure):
                return .failure(failure)
            }
        }
    }

    /// An entry read page by page as a list reopens (`cachedHead()`, then `cachedPage(_:of:)`).
    struct CachedEntry {
        let key: PageCacheKey
        let head: CachedPages.Head
        /// When the entry was stored or last confirmed: a page read later must be of the same entry.
        var storedAt: Double
    }

    /// The head of the cached entry, to read its pages one by one: nil when there is none, it is
    /// older than `maxAgeSeconds`, or its head is damaged (it is then removed, with a warning,
    /// as `cachedPages()` removes a damaged entry).
    func cachedHead() -> CachedEntry? {
        readCacheEntry({ $0.readHead($1) }, storedAt: \.storedAt, phase: "head") { stored, key in
            CachedPages.decodeHead(stored.payload, limits: CachedPages.Limits(configuration)).map {
                CachedEntry(key: key, head: $0, storedAt: stored.storedAt)
            }
        }
    }

    /// What `read` finds under the key of the credentials the next request sends (read now),
    /// taken up by `take` unless it is older than `maxAgeSeconds`. An entry whose time stored is
    /// not a time, or that `take` refuses, is dropped with a warning.
    private func readCacheEntry<Stored, Taken>(
        _ read: (PageCacheStore, PageCacheKey) -> Stored?, storedAt: (Stored) -> Double, phase: String,
        take: (Stored, PageCacheKey) -> Result<Taken, CachedPages.Problem>
    ) -> Taken? {
        guard let (store, configurationKey) = pageCache else { return nil }
        let credentials = configuration.externalCacheMaterial()
        if !configuration.externalHeaders.isEmpty, credentials == nil { return nil }
        let key = cacheKey(configurationKey, credentials: credentials)
        warmOpenCosts = WarmOpenCosts()
        guard let stored = read(store, key) else { return nil }
        warmOpenCosts.mark(phase)
        let time = storedAt(stored)
        let problem: String
        if !time.isFinite || time < 0 {
            problem = "its time stored is \(time), not a time since 1970"
        } else {
            if let maximumAge = configuration.cache.maximumAgeSeconds, WallClock.secondsSince1970() - time > maximumAge { return nil }
            switch take(stored, key) {
            case .success(let taken): return taken
            case .failure(let failure): problem = failure.reason
            }
        }
        dropCachedEntry(key, problem)
        return nil
    }

    /// What reading page `index` of `entry` gave.
    enum CachedPageRead {
        case page(CachedPages.Page)
        /// The entry is no longer the one stored at `entry.storedAt` (replaced, confirmed or
        /// removed by another daemon sharing the file), or lacks the page.
        case gone
        case damaged(String)
    }

    /// Page `index` of `entry`, decoded, its rows' identity hashes worked out.
    func cachedPage(_ index: Int, of entry: CachedEntry) -> CachedPageRead {
        guard let (store, _) = pageCache else { return .gone }
        guard let bytes = store.readPage(entry.key, at: index, storedAt: entry.storedAt) else {
            // The same entry without a page its head counts is damaged; another is not ours to judge.
            guard let head = store.readHead(entry.key), head.storedAt == entry.storedAt else { return .gone }
            return .damaged("its head says \(entry.head.pageCount) pages, and page \(index) is not stored")
        }
        switch CachedPages.decodePage(bytes, index: index, limits: CachedPages.Limits(configuration)) {
        case .success(var page):
            page.hashes = identity.hashes(of: page.rows)
            return .page(page)
        case .failure(let failure):
            return .damaged(failure.reason)
        }
    }

    /// Logs `message` at debug level, where the cache logs.
    func cacheTrace(_ message: @autoclosure () -> String) {
        pageCache?.store.trace(message())
    }

    /// Removes the entry under `key`, warning why (`problem`) and what follows (`then`).
    func dropCachedEntry(_ key: PageCacheKey, _ problem: String, then: String = "the list is fetched again") {
        pageCache?.store.remove(key)
        cacheWarning("dropped the cache entry for \(key.label) (source \"\(name)\"): \(problem); \(then)")
    }

    /// Page `index` of the entry this source last stored, read alone, when it decodes and its
    /// rows are ones the mapping could have made; nil otherwise (the page is asked for
    /// unconditionally then, and a whole read of the entry deals with any damage).
    func cachedPage(at index: Int) -> CachedPages.Page? {
        guard let (store, key) = pageCache,
            let bytes = store.readPage(cacheKey(key, credentials: responseCredentials), at: index),
            case .success(let page) = CachedPages.decodePage(bytes, index: index, limits: CachedPages.Limits(configuration)),
            mappedRowsProblem(page.rows, field: "pages[\(index)].rows") == nil
        else { return nil }
        return page
    }

    /// Why `cached` is not an entry this source could have written (pages that do not follow
    /// one another, a request of another strategy, a count that does not add up, a next URL
    /// that leaves the origin), or nil. `CachedPages.decode` has checked kinds and ranges.
    func cacheProblem(in cached: CachedPages) -> String? { nil }

    /// Why a cached page's rows could not have come from the mapping, or nil: a mapped object
    /// has only the mapping's fields (elements that are not objects pass through unmapped).
    func mappedRowsProblem(_ rows: [JSON], field: String) -> String? {
        guard let mapping = configuration.mapping else { return nil }
        let names = Set(mapping.fields.map(\.name))
        for (index, row) in rows.enumerated() {
            if let stray = row.objectMembers?.first(where: { !names.contains($0.key) }) {
                return "\(field)[\(index)] has a member \"\(stray.key.prefix(80))\" the mapping does not make"
            }
        }
        return nil
    }

    /// The phases of the warm open under way (`cachedPages()` starts it).
    var warmOpenCosts = WarmOpenCosts()

    /// Logs where the warm open's time went (at debug level, through the store).
    func reportWarmOpen() {
        guard let (store, key) = pageCache else { return }
        store.trace("warm open of \(key.label) (source \"\(name)\"), microseconds: \(warmOpenCosts.line)")
    }

    /// Stores `entry`, its unchanged pages kept as stored unless actions changed rows since;
    /// false when nothing is written.
    @discardableResult
    func storeInCache(_ entry: EntryPages) -> Bool {
        // The cache keeps what the server sent: not while optimistic changes are shown.
        guard let (store, key) = pageCache, mutations.isEmpty else { return false }
        let entry = actionsChangedRowsSinceStored ? entry.allChanged : entry
        actionsChangedRowsSinceStored = false
        store.write(cacheKey(key, credentials: responseCredentials), storedAt: WallClock.secondsSince1970(), entry: entry)
        return true
    }

    /// The server confirmed what is stored (a `304`).
    func touchCache() {
        guard let (store, key) = pageCache else { return }
        let now = WallClock.secondsSince1970()
        store.touch(cacheKey(key, credentials: responseCredentials), storedAt: now)
        cacheTouched(at: now)
    }

    /// The entry this source stores was confirmed at `storedAt` (its time stored is that now).
    func cacheTouched(at storedAt: Double) {}

    /// Brings every row this source will show for its run into `objects` (a reopened list
    /// reads its stored pages in turns): an action looks rows up by identity among them all.
    func holdEveryRow() {}

    func showingCachedRows(storedAt: Double) {
        isStale = true
        cachedAt = storedAt
        emit(.didChangeFreshness(stale: true, cachedAt: storedAt))
    }

    /// A response confirmed or replaced the rows shown.
    func confirmed() {
        guard isStale else { return }
        isStale = false
        cachedAt = nil
        emit(.didChangeFreshness(stale: false, cachedAt: nil))
    }

    // MARK: Live lists

    private var refreshCompletion: ((RefreshOutcome) -> Void)?

    /// A live list's schedule, kept here for `describeSource` by whoever runs the refreshes
    /// (the daemon); nil: not live.
    package var refreshSchedule: RefreshSchedule?

    /// Whether a refresh's requests are in flight.
    package var isRefreshing: Bool { refreshCompletion != nil }

    /// Revalidates the loaded rows without a load cycle: `completion` says whether anything
    /// changed (the changes went out as `didChange`s). Refused (false) while a load or a
    /// refresh is in flight, or before anything was loaded.
    @discardableResult
    package func refresh(completion: @escaping (RefreshOutcome) -> Void) -> Bool { false }

    func beginRefresh(_ completion: @escaping (RefreshOutcome) -> Void) {
        refreshCompletion = completion
    }

    func endRefresh(_ outcome: RefreshOutcome) {
        let completion = refreshCompletion
        refreshCompletion = nil
        completion?(outcome)
    }

    // MARK: Edits of single rows (actions)

    /// Where `objects[0]` is among the rows shown.
    var objectsStartInLayout: Int { 0 }

    /// Shows an edit already made to `objects`: the row changed in place, one `didChange`.
    func showEdit(_ edit: ObjectEdit) {
        switch edit {
        case .replaced(let index, let row, true): replaceRows([index: row])
        case .replaced(let index, let row, false): replaceRowChangingIdentity(at: index, with: row)
        case .removed(let index): removeRows(index..<index + 1)
        case .inserted(let index, let row): insertRows([row], at: index)
        }
    }

    /// Keeps what accounts for the objects (a paginated source's pages) in step with an edit.
    func keepPagesInStep(with edit: ObjectEdit) {}

    /// A load the client asked for goes first: a refresh in flight is dropped.
    package func stopRefresh() {
        guard isRefreshing else { return }
        abandonRequest()
        endRefresh(.superseded)
    }
}

/// When a live list refreshes next, and how the last refreshes went.
package struct RefreshSchedule: Sendable {
    package var intervalSeconds: Double
    /// Seconds since 1970.
    package var nextRefreshAt: Double?
    package var consecutiveFailures = 0
    package var lastError: FetchError?

    package init(intervalSeconds: Double) {
        self.intervalSeconds = intervalSeconds
    }
}

/// How a refresh ended.
package enum RefreshOutcome: Sendable {
    /// Every page was confirmed (`304`) or came back the same: nothing was sent.
    case unchanged
    /// The rows changed; the `didChange`s are out.
    case changed
    /// A request failed; the rows are as they were.
    case failed(FetchError)
    /// A load the client asked for started first.
    case superseded
}
