import CJansson

extension JSON {
    package static let null = JSON(newReference(json_null()))
    package static let `true` = JSON(newReference(json_true()))
    package static let `false` = JSON(newReference(json_false()))

    package init(_ string: String) {
        // stringn takes a length, so an embedded NUL never truncates.
        self = withCChars(string) { chars, count in JSON(newReference(json_stringn(chars, count))) }
    }

    package init(_ integer: Int) {
        self = JSON(newReference(json_integer(json_int_t(integer))))
    }

    package init(_ real: Double) {
        // jansson refuses NaN and infinities; JSON has no spelling for them.
        self = real.isFinite ? JSON(newReference(json_real(real))) : .null
    }

    package init(_ bool: Bool) {
        self = bool ? .true : .false
    }

    /// An array of the elements; of packed elements (kept rows), a packed array made by
    /// copying their bytes (see `PackedWriter.array(of:)`).
    package static func array(_ elements: some Sequence<JSON>) -> JSON {
        let elements = Array(elements)
        if !elements.isEmpty, elements.allSatisfy(\.isPacked) { return JSON(packed: PackedWriter.array(of: elements)) }
        let array = newReference(json_array())
        for element in elements {
            // json_array_append takes its own count; `element` keeps ours.
            element.withTree { _ = json_array_append(array.pointer, $0) }
        }
        return JSON(array)
    }

    /// `[[a, b], [a, b, c], ...]`, packed in one buffer: each pair, with a third integer where
    /// given. A change set's thousand index paths cost the main loop one allocation, where
    /// jansson nodes would cost three a pair, each freed by the thread that encodes them.
    package static func integerTuples(_ tuples: [(Int, Int, Int?)]) -> JSON {
        JSON(packed: PackedWriter.integerTuples(tuples))
    }

    /// `[{first: [a, b], second: [c, d]}, ...]`, packed the same way (a change set's moves:
    /// thousands of small objects, none built as a tree).
    package static func pairObjects(_ first: MemberName, _ second: MemberName, _ values: [(Int, Int, Int, Int)]) -> JSON {
        JSON(packed: PackedWriter.pairObjects(first, second, values))
    }

    package static func object(_ members: some Sequence<(String, JSON)>) -> JSON {
        let object = newReference(json_object())
        for (key, value) in members {
            setMember(of: object.pointer, key: key, value: value)
        }
        return JSON(object)
    }

    /// A packed object of the members, written straight from them (see `packed()`): for
    /// values made to be kept, without building the tree `object(_:)` would. A repeated key
    /// keeps its last value, as in `object(_:)`.
    package static func packedObject(_ members: [(String, JSON)]) -> JSON {
        guard keysAreDistinct(members) else { return object(members).packed() }
        var writer = PackedObjectWriter()
        for (key, value) in members { writer.append(key, value) }
        return writer.finish()
    }

    /// Objects are mostly a handful of members: compared pairwise, they cost no set.
    private static func keysAreDistinct(_ members: [(String, JSON)]) -> Bool {
        guard members.count > 16 else {
            for later in members.indices {
                for earlier in 0..<later where members[earlier].0 == members[later].0 { return false }
            }
            return true
        }
        var keys = Set<String>()
        return members.allSatisfy { keys.insert($0.0).inserted }
    }

    /// An object of three members, without the array a literal or a list of pairs would
    /// allocate: the shape of every JSON-RPC response.
    package static func object(_ first: (String, JSON), _ second: (String, JSON), _ third: (String, JSON)) -> JSON {
        let object = newReference(json_object())
        setMember(of: object.pointer, key: first.0, value: first.1)
        setMember(of: object.pointer, key: second.0, value: second.1)
        setMember(of: object.pointer, key: third.0, value: third.1)
        return JSON(object)
    }

    package static func object(_ members: KeyValuePairs<String, JSON>) -> JSON {
        object(members.lazy.map { ($0.key, $0.value) })
    }

    /// An object with `key` set to `value` (added at the end, or replaced in place).
    /// Unchanged members are shared with `self`, which is left as it was.
    package func setting(_ key: String, to value: JSON) -> JSON {
        precondition(isObject, "setting(_:to:) needs an object")
        let copy = newReference(withTree { json_copy($0) })
        JSON.setMember(of: copy.pointer, key: key, value: value)
        return JSON(copy)
    }

    /// An object without `key`.
    package func removing(_ key: String) -> JSON {
        precondition(isObject, "removing(_:) needs an object")
        let copy = newReference(withTree { json_copy($0) })
        // The length-taking call: a key may hold NUL bytes (as `setting` allows).
        withCChars(key) { chars, count in _ = json_object_deln(copy.pointer, chars, count) }
        return JSON(copy)
    }

    private static func setMember(of object: UnsafeMutablePointer<json_t>, key: String, value: JSON) {
        // json_object_setn takes its own count of value (it is not the stealing _new form).
        value.withTree { tree in withCChars(key) { chars, count in _ = json_object_setn(object, chars, count, tree) } }
    }
}

extension JSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral,
    ExpressibleByNilLiteral
{
    package init(stringLiteral value: String) { self.init(value) }
    package init(integerLiteral value: Int) { self.init(value) }
    package init(floatLiteral value: Double) { self.init(value) }
    package init(booleanLiteral value: Bool) { self.init(value) }
    package init(arrayLiteral elements: JSON...) { self = .array(elements) }
    package init(dictionaryLiteral elements: (String, JSON)...) { self = .object(elements) }
    package init(nilLiteral: ()) { self = .null }
}

extension JSON {
    /// Seeds jansson's object hashing once, before any thread creates objects: jansson
    /// seeds itself lazily on the first object otherwise, which two threads may race for.
    package static func seedHashing() {
        json_object_seed(0)
    }
}

extension JSON {
    /// This value with the value of every object member whose name `matches` replaced by
    /// `replacement`, at any depth (a body shown or recorded with its secrets hidden).
    package func replacingMembers(named matches: (String) -> Bool, with replacement: JSON) -> JSON {
        if let elements = arrayValue { return .array(elements.map { $0.replacingMembers(named: matches, with: replacement) }) }
        guard let members = objectMembers else { return self }
        return .object(
            members.map { name, member in (name, matches(name) ? replacement : member.replacingMembers(named: matches, with: replacement)) }
        )
    }
}
