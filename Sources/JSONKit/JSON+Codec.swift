import CJansson
#if canImport(Glibc)
import Glibc
#endif

/// Where and why a text failed to parse, as jansson reports it.
public struct JSONParseError: Error, Sendable, CustomStringConvertible {
    public let message: String
    /// 1-based line and column of the error.
    public let line: Int
    public let column: Int
    /// Byte offset into the input.
    public let position: Int

    public var description: String { "\(message) at line \(line), column \(column) (byte \(position))" }
}

extension JSON {
    /// Parses any JSON value (not only objects and arrays) from UTF-8 bytes.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(JSONParseError) -> JSON {
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

    public static func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSON {
        let result: Result<JSON, JSONParseError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONParseError) -> JSON in try parse(UnsafeRawBufferPointer(buffer)) }
        }
        if let result { return try result.get() }
        return try parse(Array(bytes))
    }

    public static func parse(_ text: String) throws(JSONParseError) -> JSON {
        try parse(Array(text.utf8))
    }

    public struct Format: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Two-space indentation and a space after colons.
        public static let pretty = Format(rawValue: 1)
        /// Object keys in sorted order, for canonical output.
        public static let sortedKeys = Format(rawValue: 2)
    }

    private func dumpFlags(_ format: Format) -> Int {
        var flags = Int(JSON_ENCODE_ANY) | (17 << 11) /* JSON_REAL_PRECISION(17): round-trips every double */
        flags |= format.contains(.pretty) ? 2 /* JSON_INDENT(2) */ : Int(JSON_COMPACT)
        if format.contains(.sortedKeys) { flags |= Int(JSON_SORT_KEYS) }
        return flags
    }

    /// Appends the encoding of this value to `buffer`.
    public func encode(into buffer: inout [UInt8], format: Format = []) {
        withEncoded(format: format) { buffer.append(contentsOf: $0) }
    }

    /// Calls `body` with the encoded bytes, valid only during the call: for a caller that
    /// copies them once, where they go.
    public func withEncoded<R>(format: Format = [], _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        guard let dumped = withTree({ json_dumps($0, dumpFlags(format)) }) else {
            fatalError("jansson: out of memory while encoding")
        }
        defer { free(dumped) }
        let length = strlen(dumped)
        return try dumped.withMemoryRebound(to: UInt8.self, capacity: length) {
            try body(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    public func encoded(format: Format = []) -> [UInt8] {
        var buffer: [UInt8] = []
        encode(into: &buffer, format: format)
        return buffer
    }

    public func text(format: Format = []) -> String {
        String(decoding: encoded(format: format), as: UTF8.self)
    }
}

extension JSON: CustomStringConvertible {
    public var description: String { text() }
}
