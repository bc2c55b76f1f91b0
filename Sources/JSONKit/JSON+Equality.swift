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
                // Walked in place: no trees are built to compare two kept rows.
                return PackedReader.equal(left, leftOffset, right, rightOffset)
            default:
                return lhs.withTree { left in rhs.withTree { right in json_equal(left, right) != 0 } }
            }
        }
    }

    /// Consistent with `==`, whatever the representations: member order does not change
    /// the hash, and a packed value hashes as its tree does.
    /// Whether both are the very same storage (a row compared with itself): always equal,
    /// and free to check before anything that reads the values.
    public func isIdentical(to other: JSON) -> Bool { box === other.box }

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
