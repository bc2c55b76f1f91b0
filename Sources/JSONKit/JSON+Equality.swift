import CJansson

#if canImport(Glibc)
import Glibc
#endif

extension JSON: Hashable {
    /// Structural equality, as jansson defines it: objects compare regardless of member
    /// order, and an integer never equals a real.
    package static func == (lhs: JSON, rhs: JSON) -> Bool {
        if lhs.box === rhs.box { return true }
        return withExtendedLifetime((lhs, rhs)) {
            switch (lhs.storage, rhs.storage) {
            case (.tree(let left), .tree(let right)):
                return treesEqual(left, right)
            case (.packed(let left, let leftOffset), .packed(let right, let rightOffset)):
                // Walked in place: no trees are built to compare two kept rows.
                return PackedReader.equal(left, leftOffset, right, rightOffset)
            default:
                return lhs.withTree { left in rhs.withTree { right in json_equal(left, right) != 0 } }
            }
        }
    }

    /// jansson's `json_equal`, found by walking both trees' members in step: objects from one
    /// API mostly list their members in one order, so keys are compared side by side instead
    /// of each being looked up in the other's hash table. At the first key out of step,
    /// jansson decides.
    static func treesEqual(_ left: UnsafeMutablePointer<json_t>, _ right: UnsafeMutablePointer<json_t>) -> Bool {
        if left == right { return true }
        let type = left.pointee.type
        guard type == right.pointee.type else { return false }
        switch type {
        case JSON_OBJECT:
            guard json_object_size(left) == json_object_size(right) else { return false }
            var leftMember = json_object_iter(left), rightMember = json_object_iter(right)
            while let leftCurrent = leftMember, let rightCurrent = rightMember {
                let length = json_object_iter_key_len(leftCurrent)
                guard length == json_object_iter_key_len(rightCurrent),
                    memcmp(json_object_iter_key(leftCurrent), json_object_iter_key(rightCurrent), length) == 0
                else {
                    return janssonEqual(left, right)
                }
                // The same key, unique in each: the objects differ if these values do.
                guard treesEqual(json_object_iter_value(leftCurrent)!, json_object_iter_value(rightCurrent)!) else { return false }
                leftMember = json_object_iter_next(left, leftCurrent)
                rightMember = json_object_iter_next(right, rightCurrent)
            }
            return true
        case JSON_ARRAY:
            let count = json_array_size(left)
            guard count == json_array_size(right) else { return false }
            for index in 0..<count where !treesEqual(json_array_get(left, index)!, json_array_get(right, index)!) { return false }
            return true
        case JSON_STRING:
            let length = json_string_length(left)
            return length == json_string_length(right) && memcmp(json_string_value(left), json_string_value(right), length) == 0
        case JSON_INTEGER:
            return json_integer_value(left) == json_integer_value(right)
        case JSON_REAL:
            return json_real_value(left) == json_real_value(right)
        default:
            return true  // true, false and null: the type is the value
        }
    }

    /// jansson's own answer (what `treesEqual` falls back to, and is tested against).
    static func janssonEqual(_ left: UnsafeMutablePointer<json_t>, _ right: UnsafeMutablePointer<json_t>) -> Bool {
        json_equal(left, right) != 0
    }

    /// Whether both are the very same storage (a row compared with itself): always equal,
    /// and free to check before anything that reads the values.
    package func isIdentical(to other: JSON) -> Bool { box === other.box }

    /// Consistent with `==`, whatever the representations: member order does not change
    /// the hash, and a packed value hashes as its tree does.
    package func hash(into hasher: inout Hasher) {
        hasher.combine(valueHash)
    }

    /// The hash `hash(into:)` gives a `Hasher`, as it is: consistent with `==` across
    /// representations, keyed per process (`FoldHasher`); what sources key rows by.
    package var valueHash: Int {
        var hasher = FoldHasher()
        switch storage {
        case .tree(let pointer):
            withExtendedLifetime(self) { JSON.hash(pointer, into: &hasher) }
        case .packed(let reader, let offset):
            withExtendedLifetime(self) { reader.hash(at: offset, into: &hasher) }
        }
        return hasher.finish()
    }

    private static func hash(_ value: UnsafeMutablePointer<json_t>, into hasher: inout FoldHasher) {
        let type = value.pointee.type
        switch type {
        case JSON_OBJECT:
            // Order-independent: sum the members' own hashes.
            var sum = 0
            var iterator = json_object_iter(value)
            while let current = iterator {
                var member = hasher.fresh()
                let length = json_object_iter_key_len(current)
                member.combine(UInt64(length))
                member.combine(bytes: UnsafeRawBufferPointer(start: json_object_iter_key(current), count: length))
                hash(json_object_iter_value(current)!, into: &member)
                sum &+= member.finish()
                iterator = json_object_iter_next(value, current)
            }
            hasher.combine(UInt64(type.rawValue) | UInt64(json_object_size(value)) << 8)
            hasher.combine(UInt64(bitPattern: Int64(sum)))
        case JSON_ARRAY:
            let size = json_array_size(value)
            hasher.combine(UInt64(type.rawValue) | UInt64(size) << 8)
            for index in 0..<size { hash(json_array_get(value, index)!, into: &hasher) }
        default:
            JSON.Storage.tree(value).withScalar { hasher.combine($0) }
        }
    }
}
