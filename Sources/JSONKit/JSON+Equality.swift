import CJansson

extension JSON: Hashable {
    /// Structural equality, as jansson defines it: objects compare regardless of member
    /// order, and an integer never equals a real.
    public static func == (lhs: JSON, rhs: JSON) -> Bool {
        lhs.pointer == rhs.pointer || json_equal(lhs.pointer, rhs.pointer) != 0
    }

    /// Consistent with `==`: member order does not change the hash.
    public func hash(into hasher: inout Hasher) {
        JSON.hash(pointer, into: &hasher)
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
