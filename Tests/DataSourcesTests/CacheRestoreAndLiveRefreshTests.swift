@testable import DataSources
import JSONKit
import Testing

/// The cache as a run uses it, alone: runs in, entries out, and back.
@Suite struct CacheRestoreTests {
    static let identity = Identity(key: JSONKeyPath("id"))
    static func rows(_ ids: [Int]) -> [JSON] { ids.map { ["id": JSON($0)] } }
    static func loaded(_ request: PageRequest, _ count: Int, next: PageRequest?) -> LoadedPage {
        LoadedPage(
            request: request, validators: Validators(etag: "\"v\""), kept: count, received: count, next: next, metadata: PageMetadata())
    }
    static let restore = CacheRestore(paginator: PaginatorConfiguration(pageSize: 2), duplicatePolicy: .dropLater)
    static func problem(_ entry: CachedPages) -> String? {
        var entry = entry
        for index in entry.pages.indices { entry.pages[index].hashes = identity.hashes(of: entry.pages[index].rows) }
        return restore.problem(in: entry, identity: identity, ownOrigin: nil) { _, _ in nil }
    }

    static let limits = CachedPages.Limits(RemoteConfiguration(baseURL: "http://api.invalid", apiPath: "/items"))

    /// The entry a run stores, as a store holds it after writing it whole.
    static func stored(_ entry: EntryPages) -> StoredPages {
        StoredPages(payload: entry.head(), pages: (0..<entry.count).map(entry.page), storedAt: 1)
    }

    @Test func aRunStoredIsOneThatRestores() throws {
        let pages = [Self.loaded(.first, 2, next: .page(2)), Self.loaded(.page(2), 1, next: .page(3))]
        let written = try #require(
            Self.restore.entry(
                of: pages, objects: Self.rows([1, 2, 3]), unchanged: 0, currentPage: 2, duplicatesDropped: 0, maximumPages: 10))
        let entry = try CachedPages.decode(Self.stored(written), limits: Self.limits).get()
        #expect(entry.pages.map(\.rows) == [Self.rows([1, 2]), Self.rows([3])])
        #expect(entry.currentPage == 2)
        #expect(Self.problem(entry) == nil)
        let run = Self.restore.restoredRun(from: entry, collectionURL: "http://api.invalid/items")
        #expect(run.map(\.page) == pages)
    }

    /// Each page is made from its own rows alone, and a page after the unchanged ones is
    /// made without the ones before it being asked for.
    @Test func eachPageOfAStoredRunIsMadeAlone() throws {
        let pages = [
            Self.loaded(.first, 2, next: .page(2)), Self.loaded(.page(2), 2, next: .page(3)), Self.loaded(.page(3), 1, next: nil),
        ]
        let written = try #require(
            Self.restore.entry(
                of: pages, objects: Self.rows([1, 2, 3, 4, 5]), unchanged: 2, currentPage: 3, duplicatesDropped: 0, maximumPages: 10))
        #expect(written.count == 3 && written.unchanged == 2)
        let third = try CachedPages.decodePage(written.page(2), index: 2, limits: Self.limits).get()
        #expect(third.rows == Self.rows([5]) && third.request == .page(3))
        #expect(written.allChanged.unchanged == 0)
    }

    @Test func aRunFromTheMiddleOrLongerThanTheCacheIsNotStored() {
        let middle = [Self.loaded(.page(3), 2, next: nil)]
        #expect(
            Self.restore.entry(
                of: middle, objects: Self.rows([1, 2]), unchanged: 0, currentPage: 3, duplicatesDropped: 0, maximumPages: 10)
                == nil)
        let two = [Self.loaded(.first, 1, next: .page(2)), Self.loaded(.page(2), 1, next: nil)]
        #expect(
            Self.restore.entry(of: two, objects: Self.rows([1, 2]), unchanged: 0, currentPage: 2, duplicatesDropped: 0, maximumPages: 1)
                == nil)
    }

    @Test func anEntryThisSourceCouldNotHaveWrittenSaysWhy() {
        let skipping = CachedPages(
            pages: [
                CachedPages.Page(
                    request: .first, validators: Validators(), rows: Self.rows([1]), received: 1, next: .page(3), metadata: PageMetadata())
            ], currentPage: 1, duplicatesDropped: 0)
        #expect(Self.problem(skipping) == "pages[0].next must be {\"page\": 2}, got {\"page\": 3}")
        let repeated = CachedPages(
            pages: [
                CachedPages.Page(
                    request: .first, validators: Validators(), rows: Self.rows([1, 1]), received: 2, next: nil, metadata: PageMetadata())
            ], currentPage: 1, duplicatesDropped: 0)
        #expect(Self.problem(repeated) == "pages[0].rows[1] has an identity already loaded (duplicates are dropped)")
    }

    @Test func onlyNumberedPagesComeBackFromTheCache() {
        let copy = CachedPages.Page(
            request: .page(2), validators: Validators(etag: "\"v\""), rows: Self.rows([1]), received: 1, next: nil,
            metadata: PageMetadata())
        let held = [
            Self.loaded(.first, 1, next: .page(2)), Self.loaded(.page(2), 1, next: .page(3)),
            LoadedPage(request: .page(3), validators: Validators(), kept: 1, received: 1, next: nil, metadata: PageMetadata()),
        ]
        let positions = Self.restore.positions(of: held)
        #expect(positions == [.first: 0, .page(2): 1], "a page without validators cannot be asked for conditionally")
        var read: [Int] = []
        #expect(
            Self.restore.storedCopy(of: .page(2), positions: positions) {
                read.append($0)
                return copy
            }?.rows == Self.rows([1]))
        #expect(read == [1], "only the page asked for is read")
        #expect(
            Self.restore.storedCopy(of: .page(3), positions: positions) {
                read.append($0)
                return copy
            } == nil)
        #expect(Self.restore.storedCopy(of: .first, positions: positions) { _ in copy } == nil, "a copy of another page is not used")
        #expect(read == [1])
        var cursors = PaginatorConfiguration()
        cursors.strategy = .cursor(cursorKey: "c", cursorPath: nil, fromLastObject: nil, hasMorePath: nil)
        #expect(
            CacheRestore(paginator: cursors, duplicatePolicy: .dropLater).positions(of: held).isEmpty,
            "no page of a strategy whose pages the cache cannot name comes back")
    }
}

/// A live list's refresh alone: responses in, the next request or the end out.
@Suite struct LiveRefreshTests {
    static func rows(_ ids: [Int]) -> [JSON] { ids.map { ["id": JSON($0)] } }
    static let held = [
        LoadedPage(request: .first, validators: Validators(etag: "\"1\""), kept: 2, received: 2, next: .page(2), metadata: PageMetadata()),
        LoadedPage(request: .page(2), validators: Validators(etag: "\"2\""), kept: 1, received: 1, next: nil, metadata: PageMetadata()),
    ]
    static let plan = RequestPlan(paginator: PaginatorConfiguration(pageSize: 2))
    static let links = LinkContext(requestURL: "http://api.invalid/items", ownOrigin: nil, errorURL: nil)

    @Test func everyPageConfirmedIsUnchanged() {
        var refresh = LiveRefresh()
        guard case .request(.first, let validators) = refresh.start(held: Self.held) else { return #expect(Bool(false)) }
        #expect(validators?.etag == "\"1\"", "asked conditionally")
        let notModified = DecodedResponse(objects: [], document: nil, status: 304)
        guard case .request(.page(2), _) = refresh.notModified(notModified, held: Self.held, objects: Self.rows([1, 2, 3]), errorURL: nil)
        else { return #expect(Bool(false)) }
        guard case .finish = refresh.notModified(notModified, held: Self.held, objects: Self.rows([1, 2, 3]), errorURL: nil) else {
            return #expect(Bool(false))
        }
        #expect(refresh.unchanged(held: Self.held))
        #expect(refresh.walked.map(\.rows) == [Self.rows([1, 2]), Self.rows([3])])
    }

    @Test func aChangedPageIsReadAndTheWalkFollowsItsNextRequest() {
        var refresh = LiveRefresh()
        _ = refresh.start(held: Self.held)
        let changed = DecodedResponse(objects: Self.rows([1, 9]), document: nil)
        guard case .request(.page(2), _) = refresh.arrived(changed, plan: Self.plan, links: Self.links, runStart: 0, held: Self.held)
        else { return #expect(Bool(false)) }
        let last = DecodedResponse(objects: Self.rows([3]), document: nil)
        guard case .finish = refresh.arrived(last, plan: Self.plan, links: Self.links, runStart: 0, held: Self.held) else {
            return #expect(Bool(false))
        }
        #expect(!refresh.unchanged(held: Self.held))
        #expect(refresh.walked.map(\.page.request) == [.first, .page(2)])
    }

    @Test func a304ToAPageNotHeldThereIsAFailure() {
        var refresh = LiveRefresh()
        _ = refresh.start(held: Self.held)
        // The first page now names another next page than the one held.
        let moved = DecodedResponse(objects: Self.rows([1, 2]), document: nil)
        var plan = PaginatorConfiguration(pageSize: 2)
        plan.strategy = .cursor(cursorKey: "c", cursorPath: JSONKeyPath("next"), fromLastObject: nil, hasMorePath: nil)
        let movedDocument = DecodedResponse(objects: moved.objects, document: ["next": "z"])
        guard
            case .request(.cursor("z"), let validators) = refresh.arrived(
                movedDocument, plan: RequestPlan(paginator: plan), links: Self.links, runStart: 0, held: Self.held)
        else { return #expect(Bool(false)) }
        #expect(validators == nil, "not the page held there: asked unconditionally")
        guard
            case .fail(let error) = refresh.notModified(
                DecodedResponse(objects: [], document: nil, status: 304), held: Self.held, objects: [], errorURL: nil)
        else { return #expect(Bool(false)) }
        #expect(error.status == 304)
    }

    @Test func anAnswerIsReadAsWhatItIs() {
        var refresh = LiveRefresh()
        _ = refresh.start(held: Self.held)
        let notModified = DecodedResponse(objects: [], document: nil, status: 304)
        guard
            case .request(.page(2), _) = refresh.answered(
                .success(notModified), plan: Self.plan, links: Self.links, runStart: 0, held: Self.held, objects: Self.rows([1, 2, 3]))
        else { return #expect(Bool(false)) }
        #expect(refresh.walked.map(\.rows) == [Self.rows([1, 2])], "a 304 keeps the rows held")
        let lost = FetchError(kind: .transport, message: "connection reset")
        guard
            case .fail(let error) = refresh.answered(
                .failure(lost), plan: Self.plan, links: Self.links, runStart: 0, held: Self.held, objects: Self.rows([1, 2, 3]))
        else { return #expect(Bool(false)) }
        #expect(error.message == "connection reset")
        #expect(refresh.unchanged(held: Self.held) == false, "the walk did not reach every page")
    }
}
