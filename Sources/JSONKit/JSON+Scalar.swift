import CJansson

extension JSON {
    /// A value read where it lies, without making a `JSON` of it: what sorting and grouping a
    /// million rows read from each, where a value per row would be an allocation per row.
    package enum Scalar {
        case missing, null, boolean(Bool), integer(Int64), real(Double)
        /// UTF-8 bytes, valid only inside the `withScalar` call that gave them.
        case string(UnsafeBufferPointer<UInt8>)
        /// An object or an array: read it with `value(at:)`.
        case container
    }

    /// Calls `body` with the value at `path` (`.missing` when a step is missing). Not
    /// generic, so that callers in other modules call it directly, not through a generic
    /// entry point (which costs more than the read, a million times over).
    package func withScalar(at path: JSONKeyPath, _ body: (Scalar) -> Void) {
        withExtendedLifetime(self) {
            if let found = storage(at: path) { found.withScalar(body) } else { body(.missing) }
        }
    }
}

extension JSON {
    /// Calls `body` with the index and the scalar at `path` of each row of `rows` whose `keep`
    /// flag is set (`.missing` when a step is missing): a block of rows read in one call, so
    /// that the reads of each row are inlined here rather than several calls a row from
    /// another module (a filter over a million rows reads each once).
    package static func forEachScalar(
        in rows: UnsafeBufferPointer<JSON>, at path: JSONKeyPath, where keep: [Bool], _ body: (Int, Scalar) -> Void
    ) {
        precondition(keep.count == rows.count, "a flag a row")
        // Where each row's value lies, first, in a loop of loads that do not wait on each
        // other: the rows of a long list are as many allocations, so reaching each is a cache
        // miss, and misses in a short loop overlap where they would not in the long one below.
        // The rows outlive the call (the caller holds them), and so do these.
        var storages = [Storage?](repeating: nil, count: rows.count)
        for index in rows.indices where keep[index] { storages[index] = rows[index].storage }
        for index in rows.indices {
            guard let storage = storages[index] else { continue }
            if let found = storage.at(path) { found.withScalar { body(index, $0) } } else { body(index, .missing) }
        }
    }
}

extension JSON.Scalar {
    /// What `JSON.valueHash` gives the same value; nil for `.missing` and `.container`.
    package var valueHash: Int? {
        if case .missing = self { return nil }
        if case .container = self { return nil }
        var hasher = FoldHasher()
        hasher.combine(self)
        return hasher.finish()
    }
}

extension FoldHasher {
    /// A scalar as every representation hashes it: its type and, for a string, its length in
    /// one word, then its value. The one place scalars are hashed, read in place or whole.
    mutating func combine(_ scalar: JSON.Scalar) {
        switch scalar {
        case .missing, .container: preconditionFailure("not a scalar")
        case .null: combine(UInt64(JSON_NULL.rawValue))
        case .boolean(let value): combine(UInt64((value ? JSON_TRUE : JSON_FALSE).rawValue))
        case .integer(let value):
            combine(UInt64(JSON_INTEGER.rawValue))
            combine(UInt64(bitPattern: value))
        case .real(let value):
            combine(UInt64(JSON_REAL.rawValue))
            combine((value == 0 ? 0 : value).bitPattern)  // -0.0 == 0.0
        case .string(let bytes):
            combine(UInt64(JSON_STRING.rawValue) | UInt64(bytes.count) << 8)
            combine(bytes: UnsafeRawBufferPointer(bytes))
        }
    }
}

extension JSON.Storage {
    /// Calls `body` with the scalar here (`.container` for an object or array); the owner
    /// must live through the call.
    func withScalar(_ body: (JSON.Scalar) -> Void) {
        switch self {
        case .tree(let pointer):
            switch pointer.pointee.type {
            case JSON_NULL: body(.null)
            case JSON_TRUE: body(.boolean(true))
            case JSON_FALSE: body(.boolean(false))
            case JSON_INTEGER: body(.integer(Int64(json_integer_value(pointer))))
            case JSON_REAL: body(.real(json_real_value(pointer)))
            case JSON_STRING:
                let length = json_string_length(pointer)
                return json_string_value(pointer)!.withMemoryRebound(to: UInt8.self, capacity: length) {
                    body(.string(UnsafeBufferPointer(start: $0, count: length)))
                }
            default: body(.container)
            }
        case .packed(let reader, let offset):
            switch reader.tag(at: offset) {
            case PackedTag.null: body(.null)
            case PackedTag.true: body(.boolean(true))
            case PackedTag.false: body(.boolean(false))
            case PackedTag.integer: body(.integer(reader.integer(at: offset)))
            case PackedTag.real: body(.real(reader.real(at: offset)))
            case PackedTag.string: body(.string(reader.string(at: offset)))
            default: body(.container)
            }
        }
    }
}
