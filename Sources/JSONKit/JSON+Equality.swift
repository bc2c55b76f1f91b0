import CJansson

#if canImport(Glibc)
import Glibc
#endif

extension JSON: Hashable {
    /// Structural equality, as jansson defines it: objects compare regardless of member
    /// order, and an integer never equals a real.
    public static func == (lhs: JSON, rhs: JSON) -> Bool {
        if lhs.box === rhs.box { return true }
        return withExtendedLifetime((lhs, rhs)) {
            switch (lhs.storage, rhs.storage) {
            case (.tree(let left), .tree(let right)):
                return left == right || json_equal(left, right) != 0
            case (.packed(let left, let leftOffset), .packed(let right, let rightOffset)):
                // The same bytes are the same value. Other bytes may still be (members in
                // another order, -0.0 and 0.0): jansson decides those, the only ones it
                // could answer differently; other kinds differ when their bytes do.
                let length = left.end(of: leftOffset) - leftOffset
                if length == right.end(of: rightOffset) - rightOffset,
                   memcmp(left.base + leftOffset, right.base + rightOffset, length) == 0 {
                    return true
                }
                let tag = left.tag(at: leftOffset)
                guard tag == right.tag(at: rightOffset),
                      tag == PackedTag.real || tag == PackedTag.object || tag == PackedTag.array else { return false }
                return lhs.withTree { left in rhs.withTree { right in json_equal(left, right) != 0 } }
            default:
                return lhs.withTree { left in rhs.withTree { right in json_equal(left, right) != 0 } }
            }
        }
    }

    /// Consistent with `==`, whatever the representations: member order does not change
    /// the hash, and a packed value hashes as its tree does.
    public func hash(into hasher: inout Hasher) {
        switch storage {
        case .tree(let pointer):
            withExtendedLifetime(self) { JSON.hash(pointer, into: &hasher) }
        case .packed(let reader, let offset):
            withExtendedLifetime(self) { reader.hash(at: offset, into: &hasher) }
        }
    }

    private static func hash(_ value: UnsafeMutablePointer<json_t>, into hasher: inout Hasher) {
        let type = value.pointee.type
        hasher.combine(type.rawValue)
        switch type {
        case JSON_OBJECT:
            // Order-independent: sum the members' own hashes.
            var sum = 0
            var iterator = json_object_iter(value)
            while let current = iterator {
                var member = Hasher()
                let key = json_object_iter_key(current)!
                member.combine(bytes: UnsafeRawBufferPointer(start: key, count: json_object_iter_key_len(current)))
                hash(json_object_iter_value(current)!, into: &member)
                sum &+= member.finalize()
                iterator = json_object_iter_next(value, current)
            }
            hasher.combine(json_object_size(value))
            hasher.combine(sum)
        case JSON_ARRAY:
            let size = json_array_size(value)
            hasher.combine(size)
            for index in 0..<size { hash(json_array_get(value, index)!, into: &hasher) }
        case JSON_STRING:
            hasher.combine(bytes: UnsafeRawBufferPointer(start: json_string_value(value), count: json_string_length(value)))
        case JSON_INTEGER:
            hasher.combine(json_integer_value(value))
        case JSON_REAL:
            hasher.combine(json_real_value(value))
        default:
            break
        }
    }
}
