/// Index paths in the order they were added, kept as runs of consecutive items of one
/// section: what a change set lists. A filter that drops 900,000 of a million rows in 80,000
/// runs keeps 80,000 runs, and a counted list that takes its size at once inserts one run of
/// a million rows, where a list of paths would hold 16 bytes a row.
///
/// Adding a path right after the last run's end (same section, next item) extends that run;
/// any other path starts a new one. Runs are therefore the same for the same paths in the same
/// order, and lists compare by their runs.
package struct IndexPathList: Sendable, Equatable, ExpressibleByArrayLiteral, BidirectionalCollection, CustomStringConvertible {
    /// `count` rows from `item` of `section`.
    package struct Run: Sendable, Equatable {
        package var section: Int
        package var item: Int
        package var count: Int
    }

    package private(set) var runs: [Run] = []
    /// How many paths: the runs' counts added up (kept, so that counting costs nothing).
    package private(set) var count = 0

    package init() {}

    package init(arrayLiteral paths: IndexPath...) { append(contentsOf: paths) }

    package init(_ paths: some Sequence<IndexPath>) { append(contentsOf: paths) }

    package var isEmpty: Bool { runs.isEmpty }

    package mutating func append(_ path: IndexPath) { append(section: path.section, items: path.item..<(path.item &+ 1)) }

    /// Appends the paths of `items` of `section`, in order: one run, or the last one extended.
    package mutating func append(section: Int, items: Range<Int>) {
        guard !items.isEmpty else { return }
        if let last = runs.last, last.section == section, last.item &+ last.count == items.lowerBound {
            runs[runs.count - 1].count += items.count
        } else {
            runs.append(Run(section: section, item: items.lowerBound, count: items.count))
        }
        count += items.count
    }

    package mutating func append(contentsOf paths: some Sequence<IndexPath>) {
        for path in paths { append(path) }
    }

    /// The same paths, each `items` further down its section (a change set worked out on a
    /// slice of the rows, placed where the slice lies): the runs move whole.
    package func shifted(by items: Int) -> IndexPathList {
        var shifted = self
        for index in shifted.runs.indices { shifted.runs[index].item += items }
        return shifted
    }

    /// The same paths in ascending order.
    package mutating func sort() {
        guard
            !zip(runs, runs.dropFirst()).allSatisfy({
                IndexPath(section: $0.section, item: $0.item + $0.count - 1) < IndexPath(section: $1.section, item: $1.item)
            })
        else { return }
        self = IndexPathList(sorted())
    }

    // MARK: Collection

    /// A path's place: its run, and its offset in the run.
    package struct Index: Comparable, Sendable {
        let run: Int
        let offset: Int

        package static func < (left: Index, right: Index) -> Bool { (left.run, left.offset) < (right.run, right.offset) }
    }

    package var startIndex: Index { Index(run: 0, offset: 0) }
    package var endIndex: Index { Index(run: runs.count, offset: 0) }

    package subscript(index: Index) -> IndexPath {
        let run = runs[index.run]
        precondition(index.offset >= 0 && index.offset < run.count, "index out of range")
        return IndexPath(section: run.section, item: run.item + index.offset)
    }

    package func index(after index: Index) -> Index {
        index.offset + 1 < runs[index.run].count ? Index(run: index.run, offset: index.offset + 1) : Index(run: index.run + 1, offset: 0)
    }

    package func index(before index: Index) -> Index {
        index.offset > 0
            ? Index(run: index.run, offset: index.offset - 1) : Index(run: index.run - 1, offset: runs[index.run - 1].count - 1)
    }

    /// The path at `position` (0 for the first), found run by run.
    package subscript(position: Int) -> IndexPath {
        var remaining = position
        for run in runs {
            if remaining < run.count { return IndexPath(section: run.section, item: run.item + remaining) }
            remaining -= run.count
        }
        preconditionFailure("position \(position) out of range of \(count) paths")
    }

    package var description: String { Array(self).description }
}
