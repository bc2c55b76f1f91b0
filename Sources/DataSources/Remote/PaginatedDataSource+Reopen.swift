import JSONKit

/// Where a reopened list stands in reading its stored run: the entry, and the checks of the
/// pages read so far.
struct StoredRunReading {
    var entry: RemoteCollection.CachedEntry
    var checks: CacheRestore.Checks
}

/// A list reopened from the persisted cache shows its first screen in time independent of its
/// length: `fetchData` reads the entry's head and its first pages (at least
/// `rowsReadAtOnce` rows, or all), shows them, and asks the server for the first page; the
/// pages after are read in turns of `rowsReadPerTurn` rows, each a `didChange` that appends
/// them, with the requests that came meanwhile handled between turns. The first load cycle
/// never ends with pages left: its final event (the revalidation's answer) waits for the last
/// turn, so once it ends the rows are the whole stored run, as when it was read at once. A
/// cancel stops the reading; an action, or a new `fetchData`, reads the rest at once. Every page is checked as it is read
/// (`CacheRestore.Checks`); a damaged one drops the entry and ends the reading there, the rows
/// read so far staying, and the pages after it come from the server.
extension PaginatedDataSource {
    /// The first rows read before `fetchData` answers (whole pages: at least one).
    package static let rowsReadAtOnce = 1_000
    /// The rows each later turn reads (whole pages: at least one).
    package static let rowsReadPerTurn = 1_000

    /// Shows the stored run's first pages, if the cache holds a usable entry, and reads the
    /// rest in turns.
    func reopenFromCache() {
        guard let entry = cachedHead() else { return }
        if let problem = cache.problem(of: entry.head) { return dropCachedEntry(entry.key, problem) }
        var reading = StoredRunReading(entry: entry, checks: CacheRestore.Checks(head: entry.head, identity: identity))
        var pages: [CachedPages.Page] = []
        var rows = 0
        while !reading.checks.isComplete, pages.isEmpty || rows < Self.rowsReadAtOnce {
            switch readStoredPage(&reading) {
            case .page(let page):
                pages.append(page)
                rows += page.rows.count
            case .damaged(let problem):
                // The first screen shows an entry whole or not at all.
                return dropCachedEntry(entry.key, problem)
            case .gone:
                return
            }
        }
        if reading.checks.isComplete, let problem = cache.problem(atEndOf: reading.checks) {
            return dropCachedEntry(entry.key, problem)
        }
        warmOpenCosts.mark("pages")
        let cached = CachedPages(pages: pages, currentPage: entry.head.currentPage, duplicatesDropped: reading.checks.duplicatesDropped)
        let run = cache.restoredRun(from: cached, collectionURL: url(of: .collection(query: [])))
        let hashes = adopt(run, hashes: pages.map(\.hashes), duplicatesDropped: cached.duplicatesDropped)
        self.run.window.stored()
        storedPositions = cache.positions(of: self.run.window.pages)
        let rebased = rebaseObjects(in: 0..<objects.count, startsRun: true)
        compose(keptHead: 0, hashesAfterHead: rebased ? nil : hashes)
        warmOpenCosts.mark("changeset")
        showingCachedRows(storedAt: entry.storedAt)
        reportWarmOpen()
        guard !reading.checks.isComplete else { return }
        restoring = reading
        restoringGeneration &+= 1
        // Pending actions are rebased over every row they may touch before anything else.
        if !mutations.isEmpty { return finishRestoring() }
        scheduleRestoringTurn()
    }

    /// Reads every stored page left at once.
    func finishRestoring() {
        while restoring != nil { readStoredPages(rows: .max) }
    }

    /// Leaves the stored pages not yet read unread (the run they would follow is replaced)
    /// and ends the first cycle if it was waiting for them.
    func stopRestoring() {
        restoring = nil
        endCycleWaitingForRestoring()
    }

    /// Sends the first cycle's final event, held while stored pages were left to read.
    private func endCycleWaitingForRestoring() {
        guard restoring == nil, let ended = cycleEndAfterRestoring else { return }
        cycleEndAfterRestoring = nil
        emit(ended)
    }

    private func scheduleRestoringTurn() {
        let generation = restoringGeneration
        let deferred = loader.later { [weak self] in
            guard let self, self.restoring != nil, self.restoringGeneration == generation else { return }
            self.readStoredPages(rows: Self.rowsReadPerTurn, yielding: true)
            if self.restoring != nil { self.scheduleRestoringTurn() }
        }
        if !deferred { finishRestoring() }
    }

    private enum StoredPageRead {
        case page(CachedPages.Page)
        case damaged(String)
        /// The entry changed since it was read (another daemon sharing the file).
        case gone
    }

    /// The next page of `reading`'s run, read and checked.
    private func readStoredPage(_ reading: inout StoredRunReading) -> StoredPageRead {
        switch cachedPage(reading.checks.count, of: reading.entry) {
        case .page(let page):
            let problem = cache.problem(of: page, &reading.checks, ownOrigin: configuration.ownOrigin) {
                self.mappedRowsProblem($0, field: $1)
            }
            return problem.map(StoredPageRead.damaged) ?? .page(page)
        case .damaged(let problem):
            return .damaged(problem)
        case .gone:
            return .gone
        }
    }

    /// Reads the next stored pages, at least `budget` rows of them (or all that are left), and
    /// appends their rows in one change. `yielding`: after the first page, a request waiting
    /// ends the turn (the next turn goes on).
    private func readStoredPages(rows budget: Int, yielding: Bool = false) {
        guard var reading = restoring else { return }
        // Held here alone while it reads: its identities are added to, not copied, each turn.
        restoring = nil
        var pages: [CachedPages.Page] = []
        var rows = 0
        var ended = false
        reading: while !reading.checks.isComplete, pages.isEmpty || (rows < budget && !(yielding && loader.eventsWaiting)) {
            switch readStoredPage(&reading) {
            case .page(let page):
                pages.append(page)
                rows += page.rows.count
            case .damaged(let problem):
                dropCachedEntry(
                    reading.entry.key, problem, then: "the \(reading.checks.count) pages before it stay, and the rest are fetched again")
                ended = true
                break reading
            case .gone:
                cacheTrace(
                    "the entry for \(reading.entry.key.label) (source \"\(name)\") changed while it was read; the pages after the first \(reading.checks.count) are fetched again"
                )
                ended = true
                break reading
            }
        }
        if !ended, reading.checks.isComplete, let problem = cache.problem(atEndOf: reading.checks) {
            // Every page read holds together; what the head says of them does not.
            dropCachedEntry(reading.entry.key, problem, then: "its rows stay, and it is stored again as the list loads")
            ended = true
        }
        restoring = ended || reading.checks.isComplete ? nil : reading
        // The rows first, then the cycle's end if it waited for them.
        defer { endCycleWaitingForRestoring() }
        guard !pages.isEmpty else { return }
        let cached = CachedPages(pages: pages, currentPage: reading.entry.head.currentPage, duplicatesDropped: 0)
        let keptHead = objects.count
        let pagesHeld = run.window.pages.count
        let restored = run.adoptFollowing(
            cache.restoredRun(from: cached, collectionURL: url(of: .collection(query: []))), hashes: pages.map(\.hashes),
            duplicatesDropped: reading.checks.duplicatesDropped)
        objects.append(contentsOf: restored.rows)
        if !ended {
            run.window.stored()
            storedPositions.merge(cache.positions(of: run.window.pages, from: pagesHeld)) { $1 }
        }
        let rebased = rebaseObjects(in: keptHead..<objects.count, startsRun: false)
        compose(keptHead: keptHead, hashesAfterHead: rebased ? nil : restored.hashes)
    }
}
