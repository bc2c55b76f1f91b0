/// The pages of the run held, where they sit in the whole list, and the window that bounds
/// them: past `window.maxPages` or `window.maxObjects`, whole pages go, the one farther from
/// the row last displayed or read first.
///
/// Pages arriving and rows displayed are events; `nextDrop` answers the page to drop (the
/// owner removes its rows, then asks again) until the window holds.
struct PageWindow {
    /// What the owner removes: the first or the last page held.
    enum Drop: Equatable {
        case first(LoadedPage)
        /// `nowLast`: the page that ends the run after it.
        case last(LoadedPage, nowLast: LoadedPage)

        /// The end of the run the page leaves: the one paging back (or on) reaches it again from.
        var end: LoadDirection {
            if case .first = self { return .prepend }
            return .append
        }

        /// The objects the page's rows are, among `objectCount` held.
        func rows(among objectCount: Int) -> Range<Int> {
            switch self {
            case .first(let page): 0..<page.kept
            case .last(let page, _): objectCount - page.kept..<objectCount
            }
        }
    }

    let limits: PaginatorConfiguration.Window?
    /// Each page of the run held, in order.
    private(set) var pages: [LoadedPage] = []
    /// Objects the server sent for the pages held (duplicates included): with `start`, where
    /// the loaded rows end, which totals are compared with.
    private(set) var objectsReceived = 0
    /// Where the first page held starts in the whole list, when its request says (a page
    /// number with a page size, an offset); 0 otherwise.
    private(set) var start = 0
    /// Whether `start` is where the run starts in the whole list: from the first page, a page
    /// number with a page size, an offset, or a server that names no page before it.
    private(set) var startKnown = false
    /// Pages dropped in this run (`describeSource.pagesDropped`).
    private(set) var pagesDropped = 0
    /// The row last displayed or read: the window keeps the pages around it. In the loaded
    /// rows' coordinates without counted placeholders, the whole list's with them.
    private(set) var focus: Int?
    /// How many of the first pages held are, rows and all, as the persisted cache last stored
    /// them (`stored()`): saving the run again writes only the pages after them.
    private(set) var unchangedSinceStored = 0

    init(limits: PaginatorConfiguration.Window?) {
        self.limits = limits
    }

    /// The rows the pages account for (equal to the objects held).
    var rowsKept: Int { pages.reduce(0) { $0.addingClamped($1.kept) } }

    // MARK: Events

    /// A run's first page arrived, starting at `start` in the whole list.
    mutating func startRun(at start: Int, known: Bool) {
        pages = []
        unchangedSinceStored = 0
        objectsReceived = 0
        pagesDropped = 0
        self.start = start
        startKnown = known
    }

    /// A new query: nothing held is where it was.
    mutating func forget() {
        pages = []
        unchangedSinceStored = 0
        start = 0
        startKnown = false
        focus = nil
        pagesDropped = 0
    }

    /// Objects that arrived for the page after the last held, before it is held
    /// (`appended(_:)` counts them no more).
    func endOfRun(receiving count: Int) -> Int { start.addingClamped(objectsReceived.addingClamped(count)) }

    /// A page after the last held arrived.
    mutating func appended(_ page: LoadedPage) {
        pages.append(page)
        objectsReceived = objectsReceived.addingClamped(page.received)
    }

    /// The page before the first held arrived. Its request says where it starts (else the
    /// run starts that many objects earlier); a page with none before it starts the list.
    mutating func prepended(_ page: LoadedPage, position: Int?, startsList: Bool) {
        objectsReceived = objectsReceived.addingClamped(page.received)
        start = position ?? max(0, start - page.received)
        if startsList {
            startKnown = true
            start = 0
        } else if position == nil {
            startKnown = false
        }
        pages.insert(page, at: 0)
        unchangedSinceStored = 0
    }

    /// A run taken up whole (restored, or walked again by a refresh), from `start`.
    mutating func adopt(_ pages: [LoadedPage], start: Int) {
        self.pages = pages
        objectsReceived = pages.reduce(0) { $0.addingClamped($1.received) }
        self.start = start
        unchangedSinceStored = 0
    }

    /// The persisted cache now holds the pages held, as they are.
    mutating func stored() { unchangedSinceStored = pages.count }

    /// A row displayed or read.
    mutating func focus(on item: Int) { focus = item }

    /// The object at `index` went (an action's optimistic remove): the page holding it keeps
    /// one row fewer, and received as many from the server as before.
    mutating func objectRemoved(at index: Int) {
        var end = 0
        for page in pages.indices {
            end = end.addingClamped(pages[page].kept)
            if index < end, pages[page].kept > 0 {
                unchangedSinceStored = min(unchangedSinceStored, page)
                return pages[page].kept -= 1
            }
        }
    }

    /// An object went in at `index` (an optimistic insert, a rollback): the page it falls in
    /// (the last, at the end) holds it.
    mutating func objectInserted(at index: Int) {
        guard !pages.isEmpty else { return }
        var end = 0
        for page in pages.indices {
            end = end.addingClamped(pages[page].kept)
            if index <= end {
                unchangedSinceStored = min(unchangedSinceStored, page)
                return pages[page].kept += 1
            }
        }
        unchangedSinceStored = min(unchangedSinceStored, pages.count - 1)
        pages[pages.count - 1].kept += 1
    }

    /// A refresh confirmed the page at `index` with new validators.
    mutating func revalidated(_ index: Int, _ validators: Validators) {
        guard pages[index].validators != validators else { return }
        pages[index].validators = validators
        unchangedSinceStored = min(unchangedSinceStored, index)
    }

    /// The server confirmed the first page (a `304`).
    mutating func firstPageConfirmed(headers response: DecodedResponse) {
        guard !pages.isEmpty else { return }
        let validators = Validators(headers: response, keeping: pages[0].validators)
        guard validators != pages[0].validators else { return }
        pages[0].validators = validators
        unchangedSinceStored = 0
    }

    /// The page to drop while the window is exceeded by `objectCount` rows held, never the last
    /// page held; nil once it holds. The page farther from `focus` goes (without one: the end
    /// away from the page that just `arrived`). `counted`: the rows keep their places in the
    /// whole list (counted placeholders), so a page dropped at the top moves no row up.
    mutating func nextDrop(objectCount: Int, counted: Bool, arrived: LoadDirection) -> Drop? {
        guard let limits, pages.count > 1, limits.isExceeded(pages: pages.count, objects: objectCount) else { return nil }
        let dropTop: Bool
        if let focus = focus.map({ counted ? $0 - start : $0 }) {
            let topEnd = pages[0].kept
            let bottomStart = objectCount - pages[pages.count - 1].kept
            // Distance from the row in focus to the nearest row of each end page.
            let toTop = max(0, focus - (topEnd - 1))
            let toBottom = max(0, bottomStart - focus)
            dropTop = toTop > toBottom || (toTop == toBottom && arrived != .prepend)
        } else {
            dropTop = arrived != .prepend
        }
        pagesDropped += 1
        if dropTop {
            let page = pages.removeFirst()
            unchangedSinceStored = 0
            if !counted, let item = focus { focus = max(0, item - page.kept) }
            objectsReceived = max(0, objectsReceived - page.received)
            start = start.addingClamped(page.received)
            return .first(page)
        }
        let page = pages.removeLast()
        unchangedSinceStored = min(unchangedSinceStored, pages.count)
        objectsReceived = max(0, objectsReceived - page.received)
        return .last(page, nowLast: pages[pages.count - 1])
    }
}
