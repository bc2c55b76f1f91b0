import CJansson
import CJSONArena
import CJSONScan
#if canImport(Glibc)
import Glibc
#endif

/// Where and why a text failed to parse, as jansson reports it.
package struct JSONParseError: Error, Sendable, CustomStringConvertible {
    package let message: String
    /// 1-based line and column of the error.
    package let line: Int
    package let column: Int
    /// Byte offset into the input.
    package let position: Int

    package var description: String { "\(message) at line \(line), column \(column) (byte \(position))" }
}

extension JSON {
    /// The largest text a caller should parse inside a scratch scope (`parse` itself does not
    /// check it): should any node of a larger document be kept past the scope, it would hold
    /// the whole document's memory to its last node, and it would take slots that other
    /// threads' scopes need.
    package static let largestArenaDocument = 32 << 20

    /// Parses any JSON value (not only objects and arrays) from UTF-8 bytes. Inside
    /// `withScratchAllocation` the nodes come from the thread's scratch arena, else from malloc.
    package static func parse(_ bytes: UnsafeRawBufferPointer) throws(JSONParseError) -> JSON {
        var error = json_error_t()
        // Any top-level value; \u0000 inside strings is valid JSON, so allow it.
        let flags = Int(JSON_DECODE_ANY | JSON_ALLOW_NUL)
        let parsed = withUnsafePointer(to: CChar(0)) { empty in
            json_loadb(bytes.baseAddress?.assumingMemoryBound(to: CChar.self) ?? empty, bytes.count, flags, &error)
        }
        guard let parsed else {
            let message = withUnsafeBytes(of: &error.text) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            throw JSONParseError(message: message, line: Int(error.line), column: Int(error.column), position: Int(error.position))
        }
        return JSON(Reference(new: parsed))
    }

    /// The byte offset where nesting in `text` first exceeds `limit` levels, found by reading
    /// brackets outside strings without parsing; nil when it never does. For a limit tighter
    /// than jansson's own 2048 levels, checked before a parse.
    package static func nestingDepthExceeding(_ limit: Int, in text: UnsafeRawBufferPointer) -> Int? {
        guard let base = text.baseAddress else { return nil }
        let offset = json_nesting_exceeding(base.assumingMemoryBound(to: UInt8.self), text.count, limit)
        return offset < 0 ? nil : offset
    }

    /// Where `text` first holds too many values: an array of more than `limit` elements (at the
    /// comma before its element `limit + 1`), or more than `totalLimit` values and members in
    /// all; nil when neither. Arrays nested deeper than `maximumDepth` are not counted on their
    /// own. Reads bytes only, as `nestingDepthExceeding` does.
    package static func tooManyValues(
        _ limit: Int, totalLimit: Int, in text: UnsafeRawBufferPointer, maximumDepth: Int
    ) -> (offset: Int, inAll: Bool)? {
        guard let base = text.baseAddress, limit >= 1 else { return nil }
        var inAll: Int32 = 0
        let offset = json_array_longer_than(
            base.assumingMemoryBound(to: UInt8.self), text.count, limit, maximumDepth, max(totalLimit, 1), &inAll)
        return offset < 0 ? nil : (offset, inAll != 0)
    }

    /// `tooManyValues` for one array's elements alone.
    package static func arrayLongerThan(_ limit: Int, in text: UnsafeRawBufferPointer, maximumDepth: Int) -> Int? {
        tooManyValues(limit, totalLimit: .max, in: text, maximumDepth: maximumDepth)?.offset
    }

    package static func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSON {
        let result: Result<JSON, JSONParseError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONParseError) -> JSON in try parse(UnsafeRawBufferPointer(buffer)) }
        }
        if let result { return try result.get() }
        return try parse(Array(bytes))
    }

    package static func parse(_ text: String) throws(JSONParseError) -> JSON {
        try parse(Array(text.utf8))
    }

    /// Runs `body` with jansson's allocations on this thread taken from the thread's scratch
    /// arena (see CJSONArena.h): for values made and dropped inside `body`, such as a
    /// message built and encoded by the writer thread. A value kept past `body` is safe (it
    /// keeps the scratch slot, freed with its last node), only wasteful.
    package static func withScratchAllocation<R>(_ body: () throws -> R) rethrows -> R {
        let opened = json_scratch_begin() != 0
        defer { if opened { json_scratch_end() } }
        return try body()
    }

    /// The serial number of the arena this value's node was carved from; nil for a node from
    /// malloc and for a packed value. For tests.
    var arenaSerial: UInt64? {
        guard case .tree(let pointer) = storage else { return nil }
        let serial = withExtendedLifetime(self) { json_arena_serial_of(pointer) }
        return serial == 0 ? nil : UInt64(serial)
    }

    /// Whether the arena with `serial` still holds its memory (some node of it is alive).
    static func arenaIsAlive(_ serial: UInt64) -> Bool { json_arena_is_alive(CUnsignedLongLong(serial)) != 0 }

    /// Whether jansson's nodes come from arenas in scratch scopes (off with
    /// `DATASOURCED_JSON_ARENAS=0`, as under AddressSanitizer). For tests.
    static var arenasAreOn: Bool { json_arenas_are_on() != 0 }

    /// Lets this thread take at most `count` more arena slots (nil: as many as are free). For
    /// tests of running out that must not take the slots from tests on other threads.
    static func limitArenaSlotsOnThisThread(_ count: Int?) {
        json_arena_limit_slots_on_this_thread(count.map { CInt(clamping: $0) } ?? -1)
    }

    /// How many slots the arena with `serial` holds. For tests.
    static func arenaSlotCount(_ serial: UInt64) -> Int { Int(json_arena_slot_count(CUnsignedLongLong(serial))) }

    /// The serial number of this thread's scratch arena (nil if it has none).
    static var scratchArenaSerialOnThisThread: UInt64? {
        let serial = json_scratch_serial_on_this_thread()
        return serial == 0 ? nil : UInt64(serial)
    }

    package struct Format: OptionSet, Sendable {
        package let rawValue: Int
        package init(rawValue: Int) { self.rawValue = rawValue }
        /// Two-space indentation and a space after colons.
        package static let pretty = Format(rawValue: 1)
        /// Object keys in sorted order, for canonical output.
        package static let sortedKeys = Format(rawValue: 2)
    }

    static func dumpFlags(_ format: Format) -> Int {
        var flags = Int(JSON_ENCODE_ANY) | (17 << 11) /* JSON_REAL_PRECISION(17): round-trips every double */
        flags |= format.contains(.pretty) ? 2 /* JSON_INDENT(2) */ : Int(JSON_COMPACT)
        if format.contains(.sortedKeys) { flags |= Int(JSON_SORT_KEYS) }
        return flags
    }

    /// Appends the encoding of this value to `buffer`.
    package func encode(into buffer: inout [UInt8], format: Format = []) {
        withEncoded(format: format) { buffer.append(contentsOf: $0) }
    }

    /// Calls `body` with the encoded bytes, valid only during the call: for a caller that
    /// copies them once, where they go.
    /// A large packed value is encoded in pieces on every core (JSON+PiecewiseEncoding.swift).
    package func withEncoded<R>(format: Format = [], _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        if format.isEmpty, isEncodedInPieces, let bytes = piecewiseEncoded() {
            return try bytes.withUnsafeBufferPointer(body)
        }
        guard let dumped = withTree({ json_dumps($0, Self.dumpFlags(format)) }) else {
            fatalError("jansson: out of memory while encoding")
        }
        defer { json_free_dumped(dumped) }
        let length = strlen(dumped)
        return try dumped.withMemoryRebound(to: UInt8.self, capacity: length) {
            try body(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    package func encoded(format: Format = []) -> [UInt8] {
        var buffer: [UInt8] = []
        encode(into: &buffer, format: format)
        return buffer
    }

    package func text(format: Format = []) -> String {
        String(decoding: encoded(format: format), as: UTF8.self)
    }
}

extension JSON: CustomStringConvertible {
    package var description: String { text() }
}
