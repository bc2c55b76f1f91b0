@testable import DataSources
import JSONKit
import Testing

/// Counted placeholders alone: runs in, what to do to the rows out.
@Suite struct CountedPlaceholdersMachineTests {
    static let identity = Identity(key: JSONKeyPath("id"))
    static func rows(_ ids: [Int]) -> [JSON] { ids.map { ["id": JSON($0)] } }
    static var counted: PaginatorConfiguration {
        var paginator = PaginatorConfiguration(pageSize: 2)
        paginator.placeholderMode = .counted
        return paginator
    }
    static func run(start: Int = 0, objects: Int, total: Int? = 10, pages: Int? = nil, hasMore: Bool = true) -> CountedPlaceholders.Run {
        CountedPlaceholders.Run(
            loadedOnce: true, start: start, startKnown: true, objectCount: objects,
            metadata: PageMetadata(numberOfPages: pages, numberOfTotalResults: total), pageSize: 2, hasMorePages: hasMore,
            appendFailed: false, maximumRows: CountedPlaceholders.maximumRows)
    }

    @Test func theFirstRunReplacesEveryRowThenRowsAreOverwrittenInPlace() {
        var machine = CountedPlaceholders(paginator: Self.counted)
        guard
            case .replaceAll(let rows, let hashes) = machine.compose(
                Self.run(objects: 2), objects: Self.rows([1, 2]), identity: Self.identity, unloadedHash: 7)
        else { return #expect(Bool(false)) }
        #expect(rows.count == 10)
        #expect(hashes.count == 10)
        #expect(hashes[9] == 7)
        #expect(machine.shown == 0..<2)
        guard
            case .overwrite(let count, let overwrites) = machine.compose(
                Self.run(start: 4, objects: 2), objects: Self.rows([5, 6]), identity: Self.identity, unloadedHash: 7)
        else { return #expect(Bool(false)) }
        #expect(count == 10)
        #expect(overwrites.map(\.item) == [0, 1, 4, 5], "the rows that were loaded become unloaded, the new ones are written")
        #expect(machine.shown == 4..<6)
    }

    @Test func withoutATotalTheListIsNotCountedAndSaysWhy() {
        var machine = CountedPlaceholders(paginator: Self.counted)
        guard
            case .trailing = machine.compose(
                Self.run(objects: 2, total: nil), objects: Self.rows([1, 2]), identity: Self.identity, unloadedHash: 0)
        else { return #expect(Bool(false)) }
        #expect(machine.refusal?.hasPrefix("no total") == true)
        _ = machine.compose(Self.run(objects: 2), objects: Self.rows([1, 2]), identity: Self.identity, unloadedHash: 0)
        #expect(machine.refusal == nil)
        guard
            case .uncount = machine.compose(
                Self.run(objects: 2, total: nil), objects: Self.rows([1, 2]), identity: Self.identity, unloadedHash: 0)
        else { return #expect(Bool(false)) }
        #expect(machine.shown == nil)
    }

    @Test func aPageCountEstimatesTheSizeUntilTheLastPageArrives() {
        var machine = CountedPlaceholders(paginator: Self.counted)
        guard
            case .replaceAll(let rows, _) = machine.compose(
                Self.run(objects: 2, total: nil, pages: 3), objects: Self.rows([1, 2]), identity: Self.identity, unloadedHash: 0)
        else { return #expect(Bool(false)) }
        #expect(rows.count == 6)
        guard
            case .overwrite(let count, _) = machine.compose(
                Self.run(objects: 5, total: nil, pages: 3, hasMore: false), objects: Self.rows([1, 2, 3, 4, 5]), identity: Self.identity,
                unloadedHash: 0)
        else { return #expect(Bool(false)) }
        #expect(count == 5, "the short last page ends the list")
    }

    @Test func aClientWithoutRangesIsShownFewerRows() {
        var machine = CountedPlaceholders(paginator: Self.counted)
        var run = Self.run(objects: 2, total: 1000)
        run.maximumRows = 100
        guard case .trailing = machine.compose(run, objects: Self.rows([1, 2]), identity: Self.identity, unloadedHash: 0) else {
            return #expect(Bool(false))
        }
        #expect(machine.refusal?.contains("changeRanges") == true)
    }

    @Test func notAskedForIsTrailingWithoutARefusal() {
        var machine = CountedPlaceholders(paginator: PaginatorConfiguration(pageSize: 2))
        guard case .trailing = machine.compose(Self.run(objects: 2), objects: Self.rows([1, 2]), identity: Self.identity, unloadedHash: 0)
        else { return #expect(Bool(false)) }
        #expect(machine.refusal == nil)
    }
}

/// Jumps alone: displays in, the load to start out.
@Suite struct JumpsMachineTests {
    static let sizes = Jumps.Sizes(metadataPageSize: nil, firstPageReceived: 2)
    static var paginator: PaginatorConfiguration {
        var paginator = PaginatorConfiguration(pageSize: 2)
        paginator.placeholderMode = .counted
        return paginator
    }

    @Test func aListNotCountedPrefetchesNearItsEndsOnly() {
        var paginator = PaginatorConfiguration(pageSize: 2)
        paginator.prefetchDistance = 2
        let jumps = Jumps(paginator: paginator)
        #expect(jumps.nearEnds(displayed: 7, lastItem: 9) == .nearEnds(next: true, previous: false))
        #expect(jumps.nearEnds(displayed: 6, lastItem: 9) == .nearEnds(next: false, previous: false))
        #expect(jumps.nearEnds(displayed: 1, lastItem: 9) == .nearEnds(next: false, previous: true))
        #expect(jumps.nearEnds(displayed: 1, lastItem: 2) == .nearEnds(next: true, previous: true), "a short list: both")
        #expect(jumps.nearEnds(displayed: 10, lastItem: 9) == .none, "past the last row")
        #expect(jumps.nearEnds(displayed: Int.min, lastItem: 9) == .nearEnds(next: false, previous: false), "no overflow")
    }

    @Test func aFarRowIsAJumpToItsPageOnce() {
        var jumps = Jumps(paginator: Self.paginator)
        jumps.displayed(51)
        let action = jumps.pageTowardsDisplayedRow(run: 0..<2, isFetching: false, sizes: Self.sizes)
        #expect(action == .jump(to: 51, .page(26)))
        jumps.jumping(to: 51)
        jumps.displayed(50)
        #expect(jumps.pageTowardsDisplayedRow(run: 0..<2, isFetching: true, sizes: Self.sizes) == .none, "row 50 is on the page loading")
        #expect(jumps.made == 1)
        jumps.landed()
        #expect(jumps.pending == nil)
    }

    @Test func aNearRowPagesTowardsItAndALoadedOneNearTheEndLoadsTheNext() {
        var jumps = Jumps(paginator: Self.paginator)
        jumps.displayed(3)
        #expect(jumps.pageTowardsDisplayedRow(run: 0..<2, isFetching: false, sizes: Self.sizes) == .fetchNext)
        #expect(jumps.pageTowardsDisplayedRow(run: 0..<2, isFetching: true, sizes: Self.sizes) == .none, "paging waits for the load")
        jumps.displayed(1)
        #expect(jumps.pageTowardsDisplayedRow(run: 0..<2, isFetching: false, sizes: Self.sizes) == .nearEnds(next: true, previous: false))
        jumps.displayed(5)
        #expect(jumps.pageTowardsDisplayedRow(run: 6..<8, isFetching: false, sizes: Self.sizes) == .fetchPrevious)
    }

    @Test func aWalkThatDoesNotReachItsRowJumps() {
        var jumps = Jumps(paginator: Self.paginator)
        jumps.displayed(4)
        for _ in 0..<PaginatorConfiguration.maximumPagesWalked {
            #expect(jumps.pageTowardsDisplayedRow(run: 0..<2, isFetching: false, sizes: Self.sizes) == .fetchNext)
        }
        #expect(jumps.pageTowardsDisplayedRow(run: 0..<2, isFetching: false, sizes: Self.sizes) == .jump(to: 4, .page(3)))
        #expect(jumps.pageTowardsDisplayedRow(run: 0..<2, isFetching: false, sizes: Self.sizes) == .none, "once")
    }

    @Test func withoutAPageSizeAFarRowIsRefused() {
        var paginator = Self.paginator
        paginator.pageSize = nil
        let jumps = Jumps(paginator: paginator)
        let sizes = Jumps.Sizes(metadataPageSize: nil, firstPageReceived: 2)
        #expect(jumps.refusal(sizes)?.hasPrefix("the page size is unknown") == true)
        #expect(jumps.displayRefusal(of: 100, run: 0..<2, sizes: sizes)?.hasPrefix("row 100 is not loaded and lies 99 rows") == true)
        #expect(jumps.displayRefusal(of: 3, run: 0..<2, sizes: sizes) == nil, "within the threshold")
        #expect(Jumps(paginator: PaginatorConfiguration(pageSize: 2)).refusal(sizes)?.contains("counted") == true)
    }

    @Test func offsetsJumpByOffset() {
        var paginator = Self.paginator
        paginator.strategy = .offset(offsetKey: "offset", limitKey: "limit", nextOffsetPath: nil)
        let jumps = Jumps(paginator: paginator)
        #expect(jumps.page(of: 9, sizes: Self.sizes) == .offset(8))
        #expect(jumps.page(of: 1, sizes: Self.sizes) == .first)
        #expect(Jumps.distance(of: 9, from: 0..<2) == 8)
    }
}
