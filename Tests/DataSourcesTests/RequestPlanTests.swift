@testable import DataSources
import JSONKit
import Testing

/// The request plan alone: arrivals in, the next and previous requests and loop failures out.
@Suite struct RequestPlanTests {
    static func rows(_ ids: [Int]) -> [JSON] { ids.map { ["id": JSON($0)] } }
    static func response(_ ids: [Int], document: JSON? = nil, headers: [(name: String, value: String)] = []) -> DecodedResponse {
        DecodedResponse(objects: rows(ids), document: document, headers: headers)
    }
    static let links = LinkContext(
        requestURL: "http://api.invalid/items", ownOrigin: URLResolution.origin(of: "http://api.invalid/items"),
        errorURL: "http://api.invalid/items")

    static func plan(_ configure: (inout PaginatorConfiguration) -> Void = { _ in }) -> RequestPlan {
        var paginator = PaginatorConfiguration(pageSize: 2)
        configure(&paginator)
        return RequestPlan(paginator: paginator)
    }

    @Test func pageNumbersFollowOneAnotherUntilAnEmptyPage() {
        var plan = Self.plan()
        #expect(
            plan.nextPageArrived(
                .first, response: Self.response([1, 2]), metadata: PageMetadata(), kept: 2, receivedInRun: 2, startsRun: true,
                links: Self.links) == nil)
        #expect(plan.next == .page(2))
        #expect(plan.previous == nil, "nothing is before the first page")
        #expect(plan.guardNext(pagesHeld: 1, errorURL: nil) == nil)
        #expect(
            plan.nextPageArrived(
                .page(2), response: Self.response([]), metadata: PageMetadata(), kept: 0, receivedInRun: 2, startsRun: false,
                links: Self.links) == nil)
        #expect(plan.next == nil)
        #expect(plan.pagesLoaded == 2)
    }

    @Test func aRunFromAPageInTheMiddleKnowsThePageBefore() {
        var plan = Self.plan()
        _ = plan.nextPageArrived(
            .page(5), response: Self.response([9, 10]), metadata: PageMetadata(), kept: 2, receivedInRun: 10, startsRun: true,
            links: Self.links)
        #expect(plan.previous == .page(4))
        #expect(plan.next == .page(6))
        var fromSecond = Self.plan()
        _ = fromSecond.nextPageArrived(
            .page(2), response: Self.response([3, 4]), metadata: PageMetadata(), kept: 2, receivedInRun: 4, startsRun: true,
            links: Self.links)
        #expect(fromSecond.previous == .first, "the page before page 2 is the first page")
    }

    @Test func aRepeatedCursorIsALoopThatEndsTheNextRequest() {
        var plan = Self.plan {
            $0.strategy = .cursor(cursorKey: "cursor", cursorPath: JSONKeyPath("next"), fromLastObject: nil, hasMorePath: nil)
        }
        _ = plan.nextPageArrived(
            .first, response: Self.response([1, 2], document: ["next": "a"]), metadata: PageMetadata(), kept: 2, receivedInRun: 2,
            startsRun: true, links: Self.links)
        #expect(plan.next == .cursor("a"))
        #expect(plan.guardNext(pagesHeld: 1, errorURL: nil) == nil)
        _ = plan.nextPageArrived(
            .cursor("a"), response: Self.response([3, 4], document: ["next": "a"]), metadata: PageMetadata(), kept: 2,
            receivedInRun: 4, startsRun: false, links: Self.links)
        let failure = plan.guardNext(pagesHeld: 2, errorURL: "u")
        #expect(failure?.kind == .loop)
        #expect(failure?.loopReason == "cursor")
        #expect(failure?.pagesLoaded == 2)
        #expect(plan.next == nil)
    }

    @Test func pagesWithoutNewObjectsStopTheRun() {
        var plan = Self.plan { $0.stalledPagesLimit = 2 }
        _ = plan.nextPageArrived(
            .first, response: Self.response([1, 2]), metadata: PageMetadata(), kept: 2, receivedInRun: 2, startsRun: true,
            links: Self.links)
        _ = plan.nextPageArrived(
            .page(2), response: Self.response([1, 2]), metadata: PageMetadata(), kept: 0, receivedInRun: 4, startsRun: false,
            links: Self.links)
        #expect(plan.guardNext(pagesHeld: 2, errorURL: nil) == nil, "one stalled page is allowed")
        _ = plan.nextPageArrived(
            .page(3), response: Self.response([1, 2]), metadata: PageMetadata(), kept: 0, receivedInRun: 6, startsRun: false,
            links: Self.links)
        #expect(plan.guardNext(pagesHeld: 3, errorURL: nil)?.loopReason == "noNewObjects")
    }

    @Test func maxPagesCountsPagesHeldWithAWindowAndLoadedWithout() {
        var withoutWindow = Self.plan { $0.maximumPages = 2 }
        var withWindow = Self.plan {
            $0.maximumPages = 2
            $0.window = .init(maximumPages: 1)
        }
        for (page, id) in [(PageRequest.first, 1), (.page(2), 3)] {
            for index in [0, 1] {
                _ =
                    index == 0
                    ? withoutWindow.nextPageArrived(
                        page, response: Self.response([id]), metadata: PageMetadata(), kept: 1, receivedInRun: id,
                        startsRun: page == .first, links: Self.links)
                    : withWindow.nextPageArrived(
                        page, response: Self.response([id]), metadata: PageMetadata(), kept: 1, receivedInRun: id,
                        startsRun: page == .first, links: Self.links)
            }
        }
        #expect(withoutWindow.guardNext(pagesHeld: 1, errorURL: nil)?.loopReason == "maxPages")
        #expect(withWindow.guardNext(pagesHeld: 1, errorURL: nil) == nil, "the window holds one page of the two loaded")
    }

    @Test func aDroppedPageIsAskedForAgainWithoutALoop() {
        var plan = Self.plan()
        _ = plan.nextPageArrived(
            .first, response: Self.response([1, 2]), metadata: PageMetadata(), kept: 2, receivedInRun: 2, startsRun: true,
            links: Self.links)
        _ = plan.nextPageArrived(
            .page(2), response: Self.response([3, 4]), metadata: PageMetadata(), kept: 2, receivedInRun: 4, startsRun: false,
            links: Self.links)
        let first = LoadedPage(request: .first, validators: Validators(), kept: 2, received: 2, next: .page(2), metadata: PageMetadata())
        plan.droppedFirstPage(first)
        #expect(plan.previous == .first)
        #expect(plan.previousPageArrived(.first, response: Self.response([1, 2]), links: Self.links) == nil)
        #expect(plan.previous == nil)
        #expect(plan.guardPrevious(pagesHeld: 2, errorURL: nil) == nil)
    }

    @Test func aNextURLThatLeavesTheOriginIsRefused() {
        var plan = Self.plan { $0.strategy = .nextURL(path: JSONKeyPath("next"), hasMorePath: nil) }
        let failure = plan.nextPageArrived(
            .first, response: Self.response([1], document: ["next": "http://elsewhere.invalid/items?page=2"]),
            metadata: PageMetadata(), kept: 1, receivedInRun: 1, startsRun: true, links: Self.links)
        #expect(failure?.kind == .crossOrigin)
        #expect(plan.next == nil)
        var relative = Self.plan { $0.strategy = .nextURL(path: JSONKeyPath("next"), hasMorePath: nil) }
        #expect(
            relative.nextPageArrived(
                .first, response: Self.response([1], document: ["next": "?page=2"]), metadata: PageMetadata(), kept: 1,
                receivedInRun: 1, startsRun: true, links: Self.links) == nil)
        #expect(relative.next == .url("http://api.invalid/items?page=2"))
    }

    @Test func adoptingARunStopsANextRequestItAlreadyMade() {
        var plan = Self.plan()
        let pages = [
            LoadedPage(request: .first, validators: Validators(), kept: 1, received: 1, next: .page(2), metadata: PageMetadata()),
            LoadedPage(request: .page(2), validators: Validators(), kept: 1, received: 1, next: .first, metadata: PageMetadata()),
        ]
        plan.adopt(pages)
        #expect(plan.pagesLoaded == 2)
        #expect(plan.next == nil, "the first page again would be a loop")
        plan.adopt(Array(pages.prefix(1)))
        #expect(plan.next == .page(2))
    }

    @Test func anInitialPagePastTheEndIsOutOfRange() {
        let plan = Self.plan()
        let beyond = plan.beyondEnd(
            .page(9), response: Self.response([]), metadata: PageMetadata(numberOfPages: 3), jumpingTo: nil, errorURL: nil)
        #expect(beyond?.kind == .outOfRange)
        #expect(beyond?.message.hasPrefix("initialPage 9 is past the last page") == true)
        let jump = plan.beyondEnd(.offset(40), response: Self.response([]), metadata: PageMetadata(), jumpingTo: 41, errorURL: nil)
        #expect(jump?.message == "the jump to row 41 (offset 40) is past the end of the list: its page is empty")
        #expect(plan.beyondEnd(.first, response: Self.response([]), metadata: PageMetadata(), jumpingTo: nil, errorURL: nil) == nil)
    }

    @Test func requestsAskForTheirPageByStrategy() {
        let numbers = PaginatorConfiguration(pageSize: 2)
        guard case .collection(let query, _) = numbers.target(of: .page(3)) else { return #expect(Bool(false)) }
        #expect(query.map { "\($0.name)=\($0.value)" } == ["page=3", "page_size=2"])
        #expect(numbers.startPosition(of: .page(3), metadata: PageMetadata()) == 4)
        #expect(numbers.positionIsKnown(of: .page(3), metadata: PageMetadata()))
        #expect(!PaginatorConfiguration().positionIsKnown(of: .page(3), metadata: PageMetadata()), "no page size")
        #expect(numbers.currentPage(after: .first, pagesLoaded: 7) == 1)
        #expect(PageRequest.cursor("abc").loopToken == "cursor:abc")
    }

    @Test func pageValuesGoInTheBodyAtTheirKeyPathsWithTheirJSONTypes() {
        var notion = PaginatorConfiguration(pageSizeQueryKey: "page_size", pageSize: 50)
        notion.strategy = .cursor(cursorKey: "start_cursor", cursorPath: JSONKeyPath("next_cursor"), fromLastObject: nil, hasMorePath: nil)
        notion.requestIn = .body
        guard case .collection(let query, let body) = notion.target(of: .cursor("c2")) else { return #expect(Bool(false)) }
        #expect(query.isEmpty)
        #expect(body.map { "\($0.path)=\($0.value.text())" } == ["start_cursor=\"c2\"", "page_size=50"])

        var offsets = PaginatorConfiguration(pageSize: 10)
        offsets.strategy = .offset(offsetKey: "from", limitKey: "size", nextOffsetPath: nil)
        offsets.requestIn = .body
        guard case .collection(_, let values) = offsets.target(of: .offset(20)) else { return #expect(Bool(false)) }
        #expect(values.map { "\($0.path)=\($0.value.text())" } == ["from=20", "size=10"], "integers stay integers")
    }

    @Test func aCursorFromTheLastObjectKeepsItsJSONTypeInABody() {
        var plan = Self.plan {
            $0.strategy = .cursor(cursorKey: "search_after", cursorPath: nil, fromLastObject: JSONKeyPath("sort"), hasMorePath: nil)
            $0.requestIn = .body
        }
        let page = DecodedResponse(objects: [["id": 1, "sort": [1999, "a"]], ["id": 2, "sort": [2000, "b"]]], document: [:])
        #expect(
            plan.nextPageArrived(
                .first, response: page, metadata: PageMetadata(), kept: 2, receivedInRun: 2, startsRun: true, links: Self.links)
                == nil)
        guard let next = plan.next, case .collection(_, let body) = plan.paginator.target(of: next) else { return #expect(Bool(false)) }
        #expect(body.first?.value == [2000, "b"])
        // In a query the same cursor would end paging: an array is no query value.
        var inQuery = Self.plan {
            $0.strategy = .cursor(cursorKey: "search_after", cursorPath: nil, fromLastObject: JSONKeyPath("sort"), hasMorePath: nil)
        }
        _ = inQuery.nextPageArrived(
            .first, response: page, metadata: PageMetadata(), kept: 2, receivedInRun: 2, startsRun: true, links: Self.links)
        #expect(inQuery.next == nil)
    }

    @Test func aPageBeforeIsAskedForByItsOwnNamesWhenTheyAreGiven() throws {
        var plan = Self.plan {
            $0.strategy = .cursor(
                cursorKey: "variables.after", cursorPath: JSONKeyPath("data.c.pageInfo.endCursor"), fromLastObject: nil,
                hasMorePath: JSONKeyPath("data.c.pageInfo.hasNextPage"))
            $0.pageSizeQueryKey = "variables.first"
            $0.previousCursorPath = JSONKeyPath("data.c.pageInfo.startCursor")
            $0.previousHasMorePath = JSONKeyPath("data.c.pageInfo.hasPreviousPage")
            $0.previousCursorKey = "variables.before"
            $0.previousPageSizeKey = "variables.last"
            $0.requestIn = .body
            $0.initialPosition = .cursor("m")
        }
        let info: JSON = [
            "data": ["c": ["pageInfo": ["endCursor": "e", "hasNextPage": true, "startCursor": "s", "hasPreviousPage": true]]]
        ]
        _ = plan.nextPageArrived(
            .cursor("m"), response: Self.response([5, 6], document: info), metadata: PageMetadata(), kept: 2,
            receivedInRun: 2, startsRun: true, links: Self.links)
        #expect(plan.next == .cursor("e"))
        #expect(plan.previous == .before("s"))
        guard case .collection(_, let body) = plan.paginator.target(of: .before("s")) else { return #expect(Bool(false)) }
        #expect(body.map { "\($0.path)=\($0.value.text())" } == ["variables.before=\"s\"", "variables.last=2"])
        guard case .collection(_, let forward) = plan.paginator.target(of: .cursor("e")) else { return #expect(Bool(false)) }
        #expect(forward.map { "\($0.path)=\($0.value.text())" } == ["variables.after=\"e\"", "variables.first=2"])
        let first: JSON = ["data": ["c": ["pageInfo": ["startCursor": "a", "hasPreviousPage": false]]]]
        #expect(try plan.previousPage(before: .before("s"), response: Self.response([1], document: first), links: Self.links).get() == nil)
    }
}
