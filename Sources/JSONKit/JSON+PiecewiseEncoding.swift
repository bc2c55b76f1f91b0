import Basics
import CJansson
import CJSONArena
#if canImport(Glibc)
import Glibc
#endif

// A large packed value (a change set of 80,000 runs, the rows of a long list) is encoded in
// pieces, on every core, and the pieces are joined. jansson still encodes every key, every
// scalar and every run of an array's elements or an object's members; what is written here is
// only the brackets, commas and colons between pieces, where jansson's compact output puts
// them. The bytes are the ones jansson gives for the whole value (JSONKitTests'
// PiecewiseEncodingTests hold them against jansson's and against text written out).
// Encoding in one piece cost a filter over a million rows more than a third of its time:
// jansson formats each of the change set's 250,000 integers through snprintf.

extension JSON {
    /// Packed values of this many bytes or more are encoded in pieces (`withEncoded`, compact).
    package static let piecewiseEncodingThreshold = 256 << 10

    /// Whether this is a packed value large enough to be encoded in pieces: an object made to
    /// hold it (a message around its params) is best made packed too (`packedObject`), since
    /// a tree of it would be encoded in one piece.
    package var isEncodedInPieces: Bool { (packedSize ?? 0) >= Self.piecewiseEncodingThreshold }

    /// The compact encoding of this packed value, made in pieces of about `pieceBytes` packed
    /// bytes each; nil for a tree. The same bytes as encoding the value whole.
    func piecewiseEncoded(pieceBytes: Int = 64 << 10) -> [UInt8]? {
        guard case .packed(let reader, let offset) = storage else { return nil }
        return withExtendedLifetime(self) {
            var plan = PiecewisePlan(reader: reader, pieceBytes: max(1, pieceBytes))
            plan.add(offset)
            return plan.encoded(of: self)
        }
    }

    /// The size of this packed value's bytes; nil for a tree.
    package var packedSize: Int? {
        guard case .packed(let reader, let offset) = storage else { return nil }
        return withExtendedLifetime(self) { reader.end(of: offset) - offset }
    }
}

/// What to write for one value, in order: bytes written here, and pieces for jansson to encode.
private struct PiecewisePlan {
    enum Part {
        /// Bytes of `literals`.
        case literal(Range<Int>)
        /// The encoding of `pieces[index]`.
        case piece(Int)
    }

    enum Piece {
        /// One value, encoded whole.
        case value(offset: Int)
        /// `count` consecutive elements of an array from the one at `first`, or members of an
        /// object from the one whose key starts at `first`: encoded as jansson encodes them
        /// between the container's brackets (`JSON_EMBED`).
        case elements(first: Int, count: Int)
        case members(first: Int, count: Int)
    }

    let reader: PackedReader
    let pieceBytes: Int
    private(set) var literals: [UInt8] = []
    private(set) var parts: [Part] = []
    private(set) var pieces: [Piece] = []

    init(reader: PackedReader, pieceBytes: Int) {
        self.reader = reader
        self.pieceBytes = pieceBytes
    }

    private mutating func literal(_ bytes: some Collection<UInt8>) {
        let start = literals.count
        literals.append(contentsOf: bytes)
        // Literals are appended in order, so the last part, when a literal, ends at `start`.
        if case .literal(let range) = parts.last {
            parts[parts.count - 1] = .literal(range.lowerBound..<literals.count)
        } else {
            parts.append(.literal(start..<literals.count))
        }
    }

    private mutating func piece(_ piece: Piece) {
        parts.append(.piece(pieces.count))
        pieces.append(piece)
    }

    /// Plans the value at `offset`: whole when small or a scalar; otherwise its members or
    /// elements in runs of about `pieceBytes`, each large one planned the same way.
    mutating func add(_ offset: Int) {
        let tag = reader.tag(at: offset)
        guard tag == PackedTag.object || tag == PackedTag.array, reader.end(of: offset) - offset >= pieceBytes else {
            return piece(.value(offset: offset))
        }
        let isObject = tag == PackedTag.object
        let (count, first, _) = reader.container(at: offset)
        literal((isObject ? "{" : "[").utf8)
        var cursor = first, wrote = false, runFirst = first, runCount = 0, runBytes = 0
        func separate(_ plan: inout PiecewisePlan) {
            if wrote { plan.literal(",".utf8) }
            wrote = true
        }
        func endRun(_ plan: inout PiecewisePlan) {
            guard runCount > 0 else { return }
            separate(&plan)
            plan.piece(isObject ? .members(first: runFirst, count: runCount) : .elements(first: runFirst, count: runCount))
            (runCount, runBytes) = (0, 0)
        }
        for _ in 0..<count {
            let start = cursor
            let key = isObject ? reader.key(&cursor) : nil
            let end = reader.end(of: cursor)
            if end - cursor >= pieceBytes {
                // A large member or element: planned on its own, after the run before it.
                endRun(&self)
                separate(&self)
                if let key {
                    literal(Self.encodedKey(key))
                    literal(":".utf8)
                }
                add(cursor)
            } else {
                if runCount == 0 { runFirst = start }
                runCount += 1
                runBytes += end - start
                if runBytes >= pieceBytes { endRun(&self) }
            }
            cursor = end
        }
        endRun(&self)
        literal((isObject ? "}" : "]").utf8)
    }

    /// A key as jansson writes it in an object: a JSON string.
    private static func encodedKey(_ key: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        // Never a null pointer: a packed key's start points into its buffer even when empty.
        let string = key.withMemoryRebound(to: CChar.self) { json_stringn($0.baseAddress!, $0.count) }
        guard let string else { fatalError("jansson: out of memory (or a key that is not UTF-8) while encoding") }
        defer { json_decref(string) }
        return dumped(string)
    }

    /// jansson's compact encoding of `tree`; with `embedded`, without the brackets around a
    /// container's members or elements.
    fileprivate static func dumped(_ tree: UnsafeMutablePointer<json_t>, embedded: Bool = false) -> [UInt8] {
        let flags = JSON.dumpFlags([]) | (embedded ? Int(JSON_EMBED) : 0)
        guard let text = json_dumps(tree, flags) else { fatalError("jansson: out of memory while encoding") }
        defer { json_free_dumped(text) }
        let length = strlen(text)
        return text.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
    }

    /// Encodes the pieces, on every core (each is about `pieceBytes` of work or a value
    /// whole), and joins them with the bytes between.
    func encoded(of value: JSON) -> [UInt8] {
        // With no pieces (an empty container cut at one byte), the literals are the whole
        // encoding; and an empty array is not made through unsafeUninitializedCapacity, which
        // writes the count into the empty array every empty array shares.
        guard !pieces.isEmpty else { return literals }
        let work = PieceWork(value: value, pieces: pieces)
        let encodedPieces = [[UInt8]](unsafeUninitializedCapacity: pieces.count) { buffer, initialized in
            let output = Parallel.SharedOutput(start: buffer.baseAddress!)
            Parallel.forEach(pieces: work.pieces.count) { index in
                // Each piece's tree is built, encoded and dropped in a scratch arena: the
                // worker's own, or on the calling thread the scope it has open (a message is
                // encoded in one); only the piece's bytes are kept.
                (output.start + index).initialize(to: JSON.withScratchAllocation { work.encode(index) })
            }
            initialized = pieces.count
        }
        var result: [UInt8] = []
        result.reserveCapacity(literals.count + encodedPieces.reduce(0) { $0 + $1.count })
        for part in parts {
            switch part {
            case .literal(let range): result.append(contentsOf: literals[range])
            case .piece(let index): result.append(contentsOf: encodedPieces[index])
            }
        }
        return result
    }
}

/// The pieces as the cores read them: the packed value is only read, and `value` keeps its
/// buffer alive for the work. (jansson formats reals through snprintf, which reads the
/// locale on each thread: only read.)
private struct PieceWork: Sendable {
    let value: JSON
    let pieces: [PiecewisePlan.Piece]

    func encode(_ index: Int) -> [UInt8] {
        guard case .packed(let reader, _) = value.storage else { preconditionFailure("pieces of a tree") }
        return withExtendedLifetime(value) { encode(index, reading: reader) }
    }

    private func encode(_ index: Int, reading reader: PackedReader) -> [UInt8] {
        switch pieces[index] {
        case .value(let offset):
            let tree = reader.tree(at: offset)
            defer { json_decref(tree) }
            return PiecewisePlan.dumped(tree)
        case .elements(let first, let count):
            guard let array = json_array() else { fatalError("jansson: out of memory while encoding") }
            defer { json_decref(array) }
            var cursor = first
            for _ in 0..<count {
                json_array_append_new(array, reader.tree(at: cursor))
                cursor = reader.end(of: cursor)
            }
            return PiecewisePlan.dumped(array, embedded: true)
        case .members(let first, let count):
            guard let object = json_object() else { fatalError("jansson: out of memory while encoding") }
            defer { json_decref(object) }
            var cursor = first
            for _ in 0..<count {
                let key = reader.key(&cursor)
                // Never a null pointer: a packed key's start points into its buffer even when empty.
                key.withMemoryRebound(to: CChar.self) {
                    _ = json_object_setn_new(object, $0.baseAddress!, $0.count, reader.tree(at: cursor))
                }
                cursor = reader.end(of: cursor)
            }
            return PiecewisePlan.dumped(object, embedded: true)
        }
    }
}
