import CJansson

/// A dotted path into nested objects, such as `"author.name"`; a component made of
/// digits also indexes into an array (`"items.0.id"`).
public struct JSONKeyPath: Hashable, Sendable, CustomStringConvertible {
    public let components: [String]

    public init(_ path: String) {
        components = path.isEmpty ? [] : path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    public var description: String { components.joined(separator: ".") }
}

extension JSON {
    /// The value at `path`, or nil when any step is missing. An empty path is the value itself.
    public func value(at path: JSONKeyPath) -> JSON? {
        guard !path.components.isEmpty else { return self }
        return withExtendedLifetime(self) {
            switch storage(at: path) {
            case nil: return nil
            // Borrowed pointers were walked; a reference is taken only to the value found.
            case .tree(let pointer): return JSON(Reference(borrowed: pointer))
            case .packed(_, let offset): return packedChild(at: offset)
            }
        }
    }

    /// Where `path` leads, as the storage of the value there, or nil when a step is missing.
    /// Borrowed: valid only while `self` lives, so call it inside `withExtendedLifetime(self)`.
    func storage(at path: JSONKeyPath) -> Storage? {
        switch storage {
        case .tree(var current):
            for component in path.components {
                switch current.pointee.type {
                case JSON_OBJECT:
                    guard let next = withCChars(component, { json_object_getn(current, $0, $1) }) else { return nil }
                    current = next
                case JSON_ARRAY:
                    guard let index = Int(component), index >= 0, let next = json_array_get(current, index) else { return nil }
                    current = next
                default:
                    return nil
                }
            }
            return .tree(current)
        case .packed(let reader, var current):
            for component in path.components {
                switch reader.tag(at: current) {
                case PackedTag.object:
                    let found = withCChars(component) { chars, count in
                        chars.withMemoryRebound(to: UInt8.self, capacity: count) {
                            reader.member(of: current, key: UnsafeBufferPointer(start: $0, count: count))
                        }
                    }
                    guard let found else { return nil }
                    current = found
                case PackedTag.array:
                    guard let index = Int(component), let next = reader.element(of: current, index: index) else { return nil }
                    current = next
                default:
                    return nil
                }
            }
            return .packed(reader, current)
        }
    }
}
