import Basics

/// A section's rows (or their hashes), kept in chunks of about `chunkSize` elements, so that
/// inserting or removing a row in the middle of a million moves the rest of one chunk and
/// one count per chunk, not every row after it (an `Array` moves 8 MB on average at a
/// million rows). Reading a row finds its chunk by arithmetic while every chunk but the last
/// is full (a list built by appending), by binary search over the chunks' first positions
/// once edits have made them uneven. Iterating walks the chunks directly.
///
/// A chunk can also be one element repeated (`append(repeating:count:)`): a counted list's
/// ten million unloaded rows are ten thousand such chunks, a few hundred kilobytes, not 160 MB.
/// Writing into a repeated chunk stores it first (a chunk's worth, no more).
package struct RowArray<Element> {
    /// Large enough that a million rows are a thousand chunks (the per-edit bookkeeping),
    /// small enough that an edit's move within a chunk is a few kilobytes.
    static var chunkSize: Int { 1024 }
    /// A chunk grown past this is split; one shrunk below `chunkSize / 8` is merged with a
    /// neighbour, so chunks stay between those bounds and their number near count / chunkSize.
    private static var largestChunk: Int { 2 * chunkSize }
    private static var smallestChunk: Int { chunkSize / 8 }

    /// A chunk's elements: stored, or one element repeated.
    fileprivate enum Chunk {
        case stored([Element])
        case repeated(Element, count: Int)

        var count: Int {
            switch self {
            case .stored(let elements): elements.count
            case .repeated(_, let count): count
            }
        }

        subscript(offset: Int) -> Element {
            switch self {
            case .stored(let elements): elements[offset]
            case .repeated(let element, _): element
            }
        }

        /// The elements, stored (a repeated chunk's made once, here).
        var elements: [Element] {
            switch self {
            case .stored(let elements): elements
            case .repeated(let element, let count): Array(repeating: element, count: count)
            }
        }
    }

    /// Never an empty chunk.
    private var chunks: [Chunk] = []
    /// The position of each chunk's first element.
    private var starts: [Int] = []
    /// Whether every chunk but the last holds exactly `chunkSize` elements.
    private var isUniform = true
    package private(set) var count = 0

    package init() {}

    package init<S: Sequence>(_ elements: S) where S.Element == Element {
        append(contentsOf: elements)
    }

    /// The elements of `rows` at `positions`, in that order, gathered a chunk at a time on
    /// every core straight into the chunks: a filter keeping 80,000 of a million rows takes a
    /// reference to each kept row once (each a cache miss), not once more to copy it in.
    package static func gathering(_ positions: [Int], from rows: RowArray<Element>) -> RowArray<Element> where Element: Sendable {
        // Not through unsafeUninitializedCapacity when empty: that writes the count into the
        // empty array every empty array shares (ThreadSanitizer saw it race a reader).
        guard !positions.isEmpty else { return RowArray() }
        let pieces = (positions.count + chunkSize - 1) / chunkSize
        var result = RowArray()
        result.chunks = [Chunk](unsafeUninitializedCapacity: pieces) { buffer, initialized in
            let output = Parallel.SharedOutput(start: buffer.baseAddress!)
            Parallel.forEach(pieces: pieces, elements: positions.count) { piece in
                let lower = piece * chunkSize, upper = Swift.min(lower + chunkSize, positions.count)
                var chunk = [Element]()
                chunk.reserveCapacity(chunkSize)
                for position in positions[lower..<upper] { chunk.append(rows[position]) }
                (output.start + piece).initialize(to: .stored(chunk))
            }
            initialized = pieces
        }
        result.restart(from: 0)
        return result
    }

    /// The chunk holding `position` (below `count`) and the position within it.
    @inline(__always)
    private func locate(_ position: Int) -> (chunk: Int, offset: Int) {
        if isUniform { return (position / Self.chunkSize, position % Self.chunkSize) }
        var low = 0, high = starts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= position { low = middle } else { high = middle - 1 }
        }
        return (low, position - starts[low])
    }

    /// The elements of `range` as an array, copied a chunk at a time.
    package func elements(in range: Range<Int>) -> [Element] {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range out of bounds")
        var result: [Element] = []
        result.reserveCapacity(range.count)
        forEach(from: range.lowerBound) { position, element in
            guard position < range.upperBound else { return false }
            result.append(element)
            return true
        }
        return result
    }

    /// Calls `body` with each position from `start` on and its element, in order, until it
    /// returns false.
    package func forEach(from start: Int, _ body: (Int, Element) throws -> Bool) rethrows {
        guard start < count else { return }
        var (chunk, offset) = locate(Swift.max(0, start))
        var position = Swift.max(0, start)
        while chunk < chunks.count {
            switch chunks[chunk] {
            case .stored(let elements):
                while offset < elements.count {
                    guard try body(position, elements[offset]) else { return }
                    offset += 1
                    position += 1
                }
            case .repeated(let element, let count):
                while offset < count {
                    guard try body(position, element) else { return }
                    offset += 1
                    position += 1
                }
            }
            chunk += 1
            offset = 0
        }
    }

    /// What is wrong with the chunks, for tests: nil when every invariant holds.
    var brokenInvariant: String? {
        if chunks.count != starts.count { return "\(chunks.count) chunks, \(starts.count) starts" }
        var position = 0
        for (index, chunk) in chunks.enumerated() {
            if chunk.count == 0 { return "chunk \(index) is empty" }
            if chunk.count > Self.largestChunk { return "chunk \(index) holds \(chunk.count)" }
            if starts[index] != position { return "chunk \(index) starts at \(starts[index]), not \(position)" }
            if isUniform, chunk.count != Self.chunkSize, index < chunks.count - 1 || chunk.count > Self.chunkSize {
                return "uniform, but chunk \(index) of \(chunks.count) holds \(chunk.count)"
            }
            position += chunk.count
        }
        return position == count ? nil : "count \(count), but the chunks hold \(position)"
    }

    /// How many chunks there are.
    var chunkCount: Int { chunks.count }

    /// The elements held one by one (a repeated chunk holds its element once), for tests.
    var storedElements: Int {
        chunks.reduce(0) {
            if case .stored(let elements) = $1 { return $0 + elements.count }
            return $0
        }
    }

    /// Chunk `index`'s first position and its elements, for work split by chunk (a row read
    /// from a chunk's buffer costs no chunk lookup).
    func chunk(_ index: Int) -> (start: Int, elements: [Element]) { (starts[index], chunks[index].elements) }

    /// Stores chunk `index` if it is a repeated one, before an element of it is written.
    private mutating func store(_ index: Int) {
        if case .repeated = chunks[index] { chunks[index] = .stored(chunks[index].elements) }
    }

    /// Writes into chunk `index`, stored first.
    private mutating func edit<Result>(_ index: Int, _ body: (inout [Element]) -> Result) -> Result {
        var elements: [Element]
        switch chunks[index] {
        case .stored(let stored): elements = stored
        case .repeated(let element, let count): elements = Array(repeating: element, count: count)
        }
        // Not a second reference while `body` writes: the chunk is emptied first.
        chunks[index] = .stored([])
        defer { chunks[index] = .stored(elements) }
        return body(&elements)
    }

    /// Recomputes the first positions of the chunks from `chunk` on.
    private mutating func restart(from chunk: Int) {
        starts.removeSubrange(Swift.min(chunk, starts.count)...)
        var position = chunk == 0 ? 0 : starts[chunk - 1] + chunks[chunk - 1].count
        for index in chunk..<chunks.count {
            starts.append(position)
            position += chunks[index].count
        }
        count = position
        isUniform = chunks.dropLast().allSatisfy { $0.count == Self.chunkSize } && (chunks.last?.count ?? 0) <= Self.chunkSize
    }

    /// `elements` cut into chunks of `chunkSize` and one of the rest, which joins the chunk
    /// before it when it would be a tiny chunk in the middle of the list (at the end of the
    /// list it stays: appending fills it).
    private static func cut(_ elements: [Element], atEnd: Bool) -> [Chunk] {
        var result: [[Element]] = []
        result.reserveCapacity(elements.count / chunkSize + 1)
        var start = 0
        while start < elements.count {
            let end = Swift.min(start + chunkSize, elements.count)
            if end - start < smallestChunk, !atEnd, !result.isEmpty {
                result[result.count - 1].append(contentsOf: elements[start..<end])
            } else {
                result.append(Array(elements[start..<end]))
            }
            start = end
        }
        return result.map { .stored($0) }
    }
}

extension RowArray: RandomAccessCollection, MutableCollection {
    package typealias Index = Int
    package typealias SubSequence = Slice<RowArray<Element>>
    package typealias Indices = Range<Int>

    package var startIndex: Int { 0 }
    package var endIndex: Int { count }
    package var indices: Range<Int> { 0..<count }
    package var isEmpty: Bool { count == 0 }

    package subscript(position: Int) -> Element {
        get {
            precondition(position >= 0 && position < count, "index out of range")
            let (chunk, offset) = locate(position)
            return chunks[chunk][offset]
        }
        set {
            precondition(position >= 0 && position < count, "index out of range")
            let (chunk, offset) = locate(position)
            edit(chunk) { $0[offset] = newValue }
        }
    }

    package subscript(bounds: Range<Int>) -> Slice<RowArray<Element>> {
        get { Slice(base: self, bounds: bounds) }
        set { replaceSubrange(bounds, with: Array(newValue)) }
    }

    package func makeIterator() -> Iterator { Iterator(chunks: chunks) }

    package struct Iterator: IteratorProtocol {
        fileprivate let chunks: [Chunk]
        private var chunk = 0, offset = 0

        fileprivate init(chunks: [Chunk]) { self.chunks = chunks }

        package mutating func next() -> Element? {
            guard chunk < chunks.count else { return nil }
            let element = chunks[chunk][offset]
            offset += 1
            if offset == chunks[chunk].count {
                chunk += 1
                offset = 0
            }
            return element
        }
    }

    package var underestimatedCount: Int { count }
}

extension RowArray: RangeReplaceableCollection {
    /// Replaces the elements of `range`. The chunks the range touches are rejoined with the
    /// new elements and cut again; the chunks before and after stay as they are, so the cost
    /// is the chunks touched, the new elements and one count per chunk.
    package mutating func replaceSubrange<C: Collection>(_ range: Range<Int>, with newElements: C) where C.Element == Element {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range out of bounds")
        if range.isEmpty, range.lowerBound == count {
            append(contentsOf: newElements)
            return
        }
        let first = range.lowerBound == count ? chunks.count - 1 : locate(range.lowerBound).chunk
        let last = range.isEmpty ? first : locate(range.upperBound - 1).chunk
        let lowerInFirst = range.lowerBound - starts[first], upperInLast = range.upperBound - starts[last]
        let growth = newElements.count - range.count
        let resulting = chunks[first].count + growth
        if first == last, resulting <= Self.largestChunk, resulting >= Self.smallestChunk || (chunks.count == 1 && resulting > 0) {
            // The usual edit: within one chunk, which stays within bounds.
            edit(first) { $0.replaceSubrange(lowerInFirst..<upperInLast, with: newElements) }
            if growth != 0 {
                for chunk in (first + 1)..<chunks.count { starts[chunk] += growth }
                count += growth
                if isUniform, first < chunks.count - 1 || resulting > Self.chunkSize { isUniform = false }
            }
            return
        }
        var piece = Array(chunks[first].elements[..<lowerInFirst])
        piece.append(contentsOf: newElements)
        piece.append(contentsOf: chunks[last].elements[upperInLast...])
        var through = last
        // A piece too small to stand alone joins the next chunk (or the previous one).
        var from = first
        if piece.count < Self.smallestChunk {
            if through + 1 < chunks.count {
                through += 1
                piece.append(contentsOf: chunks[through].elements)
            } else if from > 0 {
                from -= 1
                piece.insert(contentsOf: chunks[from].elements, at: 0)
            }
        }
        chunks.replaceSubrange(from...through, with: Self.cut(piece, atEnd: through == chunks.count - 1))
        restart(from: from)
    }

    package mutating func append(_ element: Element) {
        if chunks.isEmpty || chunks[chunks.count - 1].count >= Self.chunkSize {
            isUniform = isUniform && (chunks.last?.count ?? Self.chunkSize) == Self.chunkSize
            starts.append(count)
            var chunk = [element]
            chunk.reserveCapacity(Self.chunkSize)
            chunks.append(.stored(chunk))
        } else {
            edit(chunks.count - 1) { $0.append(element) }
        }
        count += 1
    }

    /// Appends `element` `count` times: the last chunk filled, then whole chunks of it
    /// repeated, each stored only when written into.
    package mutating func append(repeating element: Element, count repeats: Int) {
        precondition(repeats >= 0, "a negative count")
        var left = repeats
        if let last = chunks.indices.last, chunks[last].count < Self.chunkSize, left > 0 {
            let filled = Swift.min(Self.chunkSize - chunks[last].count, left)
            edit(last) { $0.append(contentsOf: repeatElement(element, count: filled)) }
            count += filled
            left -= filled
        }
        while left > 0 {
            let size = Swift.min(Self.chunkSize, left)
            isUniform = isUniform && (chunks.last?.count ?? Self.chunkSize) == Self.chunkSize
            starts.append(count)
            chunks.append(.repeated(element, count: size))
            count += size
            left -= size
        }
    }

    /// `element` `count` times (`append(repeating:count:)`).
    package init(repeating element: Element, count: Int) {
        self.init()
        append(repeating: element, count: count)
    }

    /// Fills the last chunk, then adds whole chunks: a list built from an array of 80,000 rows
    /// copies them a chunk at a time (an append a row cost several times more).
    package mutating func append<S: Sequence>(contentsOf newElements: S) where S.Element == Element {
        let elements = Array(newElements)
        var start = 0
        if let last = chunks.indices.last, chunks[last].count < Self.chunkSize {
            start = Swift.min(Self.chunkSize - chunks[last].count, elements.count)
            edit(last) { $0.append(contentsOf: elements[..<start]) }
            count += start
        }
        while start < elements.count {
            let end = Swift.min(start + Self.chunkSize, elements.count)
            // As `append(_:)` does when it starts a chunk.
            isUniform = isUniform && (chunks.last?.count ?? Self.chunkSize) == Self.chunkSize
            starts.append(count)
            var chunk = [Element]()
            chunk.reserveCapacity(Self.chunkSize)
            chunk.append(contentsOf: elements[start..<end])
            chunks.append(.stored(chunk))
            count += end - start
            start = end
        }
    }

    package mutating func removeAll(keepingCapacity: Bool = false) {
        chunks = []
        starts = []
        count = 0
        isUniform = true
    }

    package mutating func reserveCapacity(_ minimumCapacity: Int) {}
}

extension RowArray: ExpressibleByArrayLiteral {
    package init(arrayLiteral elements: Element...) { self.init(elements) }
}

extension RowArray: Equatable where Element: Equatable {
    package static func == (left: RowArray, right: RowArray) -> Bool {
        left.count == right.count && left.elementsEqual(right)
    }
}

extension RowArray: Sendable where Element: Sendable {}
extension RowArray.Chunk: Sendable where Element: Sendable {}

extension RowArray: CustomStringConvertible {
    package var description: String { Array(self).description }
}
