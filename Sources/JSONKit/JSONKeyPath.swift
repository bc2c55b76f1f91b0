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
        switch storage {
        case .tree(let pointer):
            // Walk borrowed pointers (valid while `self` lives) and take a reference only to the
            // value found: one allocation per lookup, not one per step.
            return withExtendedLifetime(self) {
                var current = pointer
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
                return JSON(Reference(borrowed: current))
            }
        case .packed(let reader, let offset):
            return withExtendedLifetime(self) {
                var current = offset
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
                return current == offset ? self : packedChild(at: current)
            }
        }
    }
}
