@testable import DataSources
import JSONKit
import Testing

/// The window alone: pages arriving and rows in focus in, the pages to drop out.
@Suite struct PageWindowTests {
    static func page(_ request: PageRequest, _ count: Int) -> LoadedPage {
        LoadedPage(request: request, validators: Validators(), kept: count, received: count, next: nil, metadata: PageMetadata())
    }

    /// A window of `limits` holding pages 1...`count`, two rows each.
    static func window(_ limits: PaginatorConfiguration.Window?, pages count: Int) -> PageWindow {
        var window = PageWindow(limits: limits)
        window.startRun(at: 0, known: true)
        for number in 1...count { window.appended(Self.page(number == 1 ? .first : .page(number), 2)) }
        return window
    }

    @Test func withoutALimitNothingIsDropped() {
        var window = Self.window(nil, pages: 5)
        #expect(window.nextDrop(objectCount: 10, counted: false, arrived: .append) == nil)
        #expect(window.rowsKept == 10)
        #expect(window.objectsReceived == 10)
    }

    @Test func pagingOnDropsTheFirstPagesAndTheRunStartsLater() {
        var window = Self.window(.init(maximumPages: 2), pages: 4)
        #expect(window.nextDrop(objectCount: 8, counted: false, arrived: .append) == .first(Self.page(.first, 2)))
        #expect(window.nextDrop(objectCount: 6, counted: false, arrived: .append) == .first(Self.page(.page(2), 2)))
        #expect(window.nextDrop(objectCount: 4, counted: false, arrived: .append) == nil)
        #expect(window.start == 4)
        #expect(window.objectsReceived == 4)
        #expect(window.pagesDropped == 2)
    }

    @Test func pagingBackDropsTheLastPage() {
        var window = Self.window(.init(maximumPages: 2), pages: 3)
        #expect(
            window.nextDrop(objectCount: 6, counted: false, arrived: .prepend)
                == .last(Self.page(.page(3), 2), nowLast: Self.page(.page(2), 2)))
        #expect(window.start == 0)
    }

    @Test func aDropSaysWhichObjectsGoAndWhichEndMoves() {
        var window = Self.window(.init(maximumPages: 2), pages: 3)
        let first = window.nextDrop(objectCount: 6, counted: false, arrived: .append)
        #expect(first?.rows(among: 6) == 0..<2)
        #expect(first?.end == .prepend)
        window = Self.window(.init(maximumPages: 2), pages: 3)
        let last = window.nextDrop(objectCount: 6, counted: false, arrived: .prepend)
        #expect(last?.rows(among: 6) == 4..<6)
        #expect(last?.end == .append)
    }

    @Test func theRowInFocusKeepsItsPage() {
        var window = Self.window(.init(maximumObjects: 4), pages: 3)
        window.focus(on: 0)
        // Appending would drop the first page; the row in focus is on it, so the last goes.
        guard case .last(let dropped, _) = window.nextDrop(objectCount: 6, counted: false, arrived: .append) else {
            return #expect(Bool(false))
        }
        #expect(dropped.request == .page(3))
        var far = Self.window(.init(maximumObjects: 4), pages: 3)
        far.focus(on: 5)
        #expect(far.nextDrop(objectCount: 6, counted: false, arrived: .prepend) == .first(Self.page(.first, 2)))
        #expect(far.focus == 3, "the rows moved up by the page dropped")
    }

    @Test func aCountedListsFocusIsInTheWholeListAndStays() {
        var window = PageWindow(limits: .init(maximumPages: 1))
        window.startRun(at: 10, known: true)
        window.appended(Self.page(.offset(10), 2))
        window.appended(Self.page(.offset(12), 2))
        window.focus(on: 13)
        #expect(window.nextDrop(objectCount: 4, counted: true, arrived: .prepend) == .first(Self.page(.offset(10), 2)))
        #expect(window.focus == 13, "a counted list's rows keep their places")
        #expect(window.start == 12)
    }

    @Test func theLastPageHeldIsNeverDropped() {
        var window = Self.window(.init(maximumObjects: 1), pages: 1)
        #expect(window.nextDrop(objectCount: 2, counted: false, arrived: .append) == nil)
    }

    @Test func aPagePrependedMovesTheStartAndAPageWithNoneBeforeStartsTheList() {
        var window = PageWindow(limits: nil)
        window.startRun(at: 0, known: false)
        window.appended(Self.page(.cursor("c"), 2))
        window.prepended(Self.page(.cursor("b"), 2), position: nil, startsList: false)
        #expect(!window.startKnown)
        window.prepended(Self.page(.cursor("a"), 2), position: nil, startsList: true)
        #expect(window.startKnown)
        #expect(window.start == 0)
        #expect(window.pages.map(\.request) == [.cursor("a"), .cursor("b"), .cursor("c")])
        #expect(window.endOfRun(receiving: 2) == 8)
    }
}

/// Duplicates alone: pages in, the rows kept and the count dropped out.
@Suite struct DuplicateFilterTests {
    static let identity = Identity(key: JSONKeyPath("id"))
    static func rows(_ ids: [Int]) -> [JSON] { ids.map { ["id": JSON($0)] } }

    @Test func aLaterDuplicateIsDroppedAndCounted() {
        var filter = DuplicateFilter(policy: .dropLater, identity: Self.identity)
        let first = filter.keep(Self.rows([1, 2]), hashes: Self.identity.hashes(of: Self.rows([1, 2])))
        #expect(first.rows.count == 2)
        let second = filter.keep(Self.rows([2, 3]), hashes: Self.identity.hashes(of: Self.rows([2, 3])))
        #expect(second.rows == Self.rows([3]))
        #expect(second.hashes == Self.identity.hashes(of: Self.rows([3])))
        #expect(filter.dropped == 1)
        #expect(filter.keep(Self.rows([3, 4])) == Self.rows([4]))
        #expect(filter.dropped == 2)
        filter.startRun()
        #expect(filter.keep(Self.rows([1])) == Self.rows([1]))
        #expect(filter.dropped == 0)
    }

    @Test func keepingKeepsEveryRow() {
        var filter = DuplicateFilter(policy: .keep, identity: Self.identity)
        _ = filter.keep(Self.rows([1, 2]))
        #expect(filter.keep(Self.rows([2, 3])) == Self.rows([2, 3]))
        #expect(filter.dropped == 0)
    }

    @Test func aRowTheWindowDroppedIsNoDuplicateWhenItComesBack() {
        var filter = DuplicateFilter(policy: .dropLater, identity: Self.identity)
        _ = filter.keep(Self.rows([1, 2, 3]))
        filter.holdOnly(Self.rows([3]))
        #expect(filter.keep(Self.rows([1, 3])) == Self.rows([1]))
    }

    @Test func anAdoptedRunDropsItsDuplicatesAgainUnlessTheCountIsGiven() {
        var filter = DuplicateFilter(policy: .dropLater, identity: Self.identity)
        let pages = [Self.rows([1, 2]), Self.rows([2, 3])]
        let adopted = filter.adopt(pages, hashes: pages.map(Self.identity.hashes(of:)))
        #expect(adopted.pages == [Self.rows([1, 2]), Self.rows([3])])
        #expect(adopted.hashes == Self.identity.hashes(of: Self.rows([1, 2, 3])))
        #expect(filter.dropped == 1)
        _ = filter.adopt(pages, dropped: 5)
        #expect(filter.dropped == 5)
        #expect(filter.keep(Self.rows([3])).isEmpty, "the adopted rows are held")
    }
}
