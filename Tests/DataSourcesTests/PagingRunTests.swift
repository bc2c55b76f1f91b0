@testable import DataSources
import JSONKit
import Testing

/// A run's bookkeeping alone: pages arriving and dropped in, rows to hold and failures out.
@Suite struct PagingRunTests {
    static let identity = Identity(key: JSONKeyPath("id"))
    static func response(_ ids: [Int]) -> DecodedResponse { DecodedResponse(objects: ids.map { ["id": JSON($0)] }, document: nil) }
    static let links = LinkContext(requestURL: "http://api.invalid/items", ownOrigin: nil, errorURL: nil)

    @Test func pagesArriveWithTheirDuplicatesDroppedAndTheRunKnowsWhereItStands() {
        var run = PagingRun(paginator: PaginatorConfiguration(pageSize: 2), identity: Self.identity)
        let first = run.nextPageArrived(.first, response: Self.response([1, 2]), fromCache: nil, startsRun: true, links: Self.links)
        #expect(first.kept.count == 2)
        #expect(first.failure == nil)
        let second = run.nextPageArrived(.page(2), response: Self.response([2, 3]), fromCache: nil, startsRun: false, links: Self.links)
        #expect(second.kept == Self.response([3]).objects)
        #expect(second.hashes == Self.identity.hashes(of: Self.response([3]).objects))
        #expect(run.currentPage == 2)
        #expect(run.plan.next == .page(3))
        #expect(run.window.pages.map(\.kept) == [2, 1])
        #expect(run.duplicates.dropped == 1)
    }

    @Test func aDroppedLastPageIsTheNextPageAgainAndTheRunStandsAtThePageBefore() {
        var paginator = PaginatorConfiguration(pageSize: 2)
        paginator.window = .init(maximumPages: 2)
        var run = PagingRun(paginator: paginator, identity: Self.identity)
        _ = run.nextPageArrived(.page(3), response: Self.response([5, 6]), fromCache: nil, startsRun: true, links: Self.links)
        _ = run.nextPageArrived(.page(4), response: Self.response([7, 8]), fromCache: nil, startsRun: false, links: Self.links)
        _ = run.previousPageArrived(.page(2), response: Self.response([3, 4]), fromCache: nil, links: Self.links)
        #expect(run.window.start == 2)
        guard case .last(let dropped, _) = run.nextDrop(objectCount: 6, counted: false, arrived: .prepend) else {
            return #expect(Bool(false))
        }
        #expect(dropped.request == .page(4))
        #expect(run.plan.next == .page(4))
        #expect(run.currentPage == 3)
        #expect(run.nextDrop(objectCount: 4, counted: false, arrived: .prepend) == nil)
    }

    @Test func anAdoptedRunIsHeldWhole() {
        var run = PagingRun(paginator: PaginatorConfiguration(pageSize: 2), identity: Self.identity)
        let pages: [(page: LoadedPage, rows: [JSON])] = [
            (
                LoadedPage(request: .first, validators: Validators(), kept: 2, received: 2, next: .page(2), metadata: PageMetadata()),
                Self.response([1, 2]).objects
            )
        ]
        let adopted = run.adopt(pages, hashes: nil, duplicatesDropped: nil)
        #expect(adopted.rows.count == 2)
        #expect(run.plan.next == .page(2))
        #expect(run.currentPage == 1)
        run.forget()
        #expect(run.plan.next == nil)
        #expect(run.window.pages.isEmpty)
    }
}
