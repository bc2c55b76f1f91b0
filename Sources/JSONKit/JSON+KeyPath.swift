/// A dotted path into nested objects, such as `"author.name"`; a component made of
/// digits also indexes into an array (`"items.0.id"`).
public struct KeyPath: Hashable, Sendable, CustomStringConvertible {
    public let components: [String]

    public init(_ path: String) {
        components = path.isEmpty ? [] : path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    public var description: String { components.joined(separator: ".") }
}

extension JSON {
    /// The value at `path`, or nil when any step is missing. An empty path is the value itself.
    public func value(at path: KeyPath) -> JSON? {
        var current = self
        for component in path.components {
            if current.isObject {
                guard let next = current[component] else { return nil }
                current = next
            } else if current.isArray, let index = Int(component) {
                guard let next = current[index] else { return nil }
                current = next
            } else {
                return nil
            }
        }
        return current
    }
}
