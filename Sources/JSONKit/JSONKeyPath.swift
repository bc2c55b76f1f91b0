import CJansson

/// A dotted path into nested objects, such as `"author.name"`; a component made of
/// digits also indexes into an array (`"items.0.id"`).
public struct JSONKeyPath: Hashable, Sendable, CustomStringConvertible {
    public let components: [String]
    /// Each component as a member name's UTF-8 bytes, its key reference in packed objects
    /// (nil for a key packed objects hold inline) and as an array index, worked out once: a
    /// path is read from every row of a long list.
    private let steps: [(member: [UInt8], reference: UInt64?, index: Int?)]

    public init(_ path: String) {
        components = path.isEmpty ? [] : path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        // NUL-terminated, so that even an empty name has an address to pass to jansson.
        steps = components.map { component in
            let bytes = Array(component.utf8)
            let id = bytes.withUnsafeBufferPointer { PackedKeys.id(of: $0) }
            return (bytes + [0], id.map { UInt64($0) << 1 }, Int(component))
        }
    }

    public var description: String { components.joined(separator: ".") }

    public static func == (left: JSONKeyPath, right: JSONKeyPath) -> Bool { left.components == right.components }
    public func hash(into hasher: inout Hasher) { hasher.combine(components) }

    var isEmpty: Bool { steps.isEmpty }

    /// Calls `body` with each step's member name, key reference and array index, until it
    /// returns false.
    func forEachStep(_ body: (UnsafeBufferPointer<UInt8>, UInt64?, Int?) -> Bool) {
        for step in steps {
            let proceed = step.member.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0.dropLast()), step.reference, step.index) }
            guard proceed else { return }
        }
    }
}

extension JSON {
    /// The value at `path`, or nil when any step is missing. An empty path is the value itself.
    public func value(at path: JSONKeyPath) -> JSON? {
        guard !path.isEmpty else { return self }
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
    func storage(at path: JSONKeyPath) -> Storage? { storage.at(path) }
}

extension JSON.Storage {
    /// Where `path` leads from here, or nil when a step is missing; as borrowed as `self`.
    func at(_ path: JSONKeyPath) -> JSON.Storage? {
        switch self {
        case .tree(var current):
            var found = true
            path.forEachStep { member, _, index in
                switch current.pointee.type {
                case JSON_OBJECT:
                    let next = member.withMemoryRebound(to: CChar.self) { json_object_getn(current, $0.baseAddress!, $0.count) }
                    guard let next else { found = false; return false }
                    current = next
                case JSON_ARRAY:
                    guard let index, index >= 0, let next = json_array_get(current, index) else { found = false; return false }
                    current = next
                default:
                    found = false
                    return false
                }
                return true
            }
            return found ? .tree(current) : nil
        case .packed(let reader, var current):
            var found = true
            path.forEachStep { member, reference, index in
                switch reader.tag(at: current) {
                case PackedTag.object:
                    guard let next = reader.member(of: current, key: member, reference: reference) else { found = false; return false }
                    current = next
                case PackedTag.array:
                    guard let index, let next = reader.element(of: current, index: index) else { found = false; return false }
                    current = next
                default:
                    found = false
                    return false
                }
                return true
            }
            return found ? .packed(reader, current) : nil
        }
    }
}
