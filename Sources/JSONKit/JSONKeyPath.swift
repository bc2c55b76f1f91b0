import CJansson

/// A dotted path into nested objects, such as `"author.name"`; a component made of
/// digits also indexes into an array (`"items.0.id"`).
package struct JSONKeyPath: Hashable, Sendable, CustomStringConvertible {
    package let components: [String]
    /// Each component as a member name (its bytes and key reference worked out once) and as
    /// an array index: a path is read from every row of a long list.
    private let steps: [(name: JSON.MemberName, index: Int?)]

    package init(_ path: String) {
        components = path.isEmpty ? [] : path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        steps = components.map { (JSON.MemberName($0), Int($0)) }
    }

    package var description: String { components.joined(separator: ".") }

    package static func == (left: JSONKeyPath, right: JSONKeyPath) -> Bool { left.components == right.components }
    package func hash(into hasher: inout Hasher) { hasher.combine(components) }

    var isEmpty: Bool { steps.isEmpty }

    /// Calls `body` with each step's member name and array index, until it returns false.
    func forEachStep(_ body: (JSON.MemberName, Int?) -> Bool) {
        for step in steps {
            guard body(step.name, step.index) else { return }
        }
    }
}

extension JSON {
    /// The value at `path`, or nil when any step is missing. An empty path is the value itself.
    package func value(at path: JSONKeyPath) -> JSON? {
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
        var current = self, found = true
        path.forEachStep { name, index in
            switch current.rawType {
            case JSON_OBJECT:
                guard let next = current.member(name) else {
                    found = false
                    return false
                }
                current = next
            case JSON_ARRAY:
                guard let index, let next = current.element(index) else {
                    found = false
                    return false
                }
                current = next
            default:
                found = false
                return false
            }
            return true
        }
        return found ? current : nil
    }

    /// The member `name` of an object; nil when missing or not an object. As borrowed as `self`.
    func member(_ name: JSON.MemberName) -> JSON.Storage? {
        switch self {
        case .tree(let pointer):
            guard pointer.pointee.type == JSON_OBJECT else { return nil }
            return name.withBytes { bytes in
                bytes.withMemoryRebound(to: CChar.self) { json_object_getn(pointer, $0.baseAddress!, $0.count) }
            }.map { .tree($0) }
        case .packed(let reader, let offset):
            guard reader.tag(at: offset) == PackedTag.object else { return nil }
            return name.withBytes { reader.member(of: offset, key: $0, reference: name.reference) }.map { .packed(reader, $0) }
        }
    }

    /// Element `index` of an array; nil when out of range or not an array. As borrowed as `self`.
    func element(_ index: Int) -> JSON.Storage? {
        switch self {
        case .tree(let pointer):
            guard pointer.pointee.type == JSON_ARRAY, index >= 0, let element = json_array_get(pointer, index) else { return nil }
            return .tree(element)
        case .packed(let reader, let offset):
            guard reader.tag(at: offset) == PackedTag.array, let element = reader.element(of: offset, index: index) else { return nil }
            return .packed(reader, element)
        }
    }
}
