import DataSources
import JSONKit

/// One JSON value's shape: its JSON Schema, and its checked decoding, declared together so
/// that neither can change without the other.
package struct Shape<Value>: Sendable {
    package let schema: Schema
    /// What a refusal says was expected ("a non-empty string").
    package let expected: String
    package let decode: @Sendable (JSON, String) throws(FieldError) -> Value

    package init(_ schema: Schema, expected: String, decode: @escaping @Sendable (JSON, String) throws(FieldError) -> Value) {
        self.schema = schema
        self.expected = expected
        self.decode = decode
    }

    /// The same decoding, documented by `schema` (a component's `$ref`, or a description added).
    package func documented(_ schema: Schema) -> Shape {
        Shape(schema, expected: expected, decode: decode)
    }

    /// The same shape, its decoded value checked or changed by `transform`.
    package func map<Other>(_ transform: @escaping @Sendable (Value, JSON, String) throws(FieldError) -> Other) -> Shape<Other> {
        let decode = decode
        return Shape<Other>(schema, expected: expected) { value, field throws(FieldError) in
            try transform(try decode(value, field), value, field)
        }
    }
}

extension Shape {
    /// An array of `element`s, each reported as `field[index]`.
    package static func array<Element>(of element: Shape<Element>, expected: String) -> Shape<Value> where Value == [Element] {
        Shape(.array(of: element.schema), expected: expected) { value, field throws(FieldError) in
            var elements: [Element] = []
            for (index, item) in try Decode.array(value, field, expected: expected).enumerated() {
                elements.append(try element.decode(item, "\(field)[\(index)]"))
            }
            return elements
        }
    }
}

extension Shape where Value == String {
    package static let string = Shape(.string, expected: "a string") { value, field throws(FieldError) in
        try Decode.string(value, field)
    }
    package static let nonEmptyString = Shape(.string(minLength: 1), expected: "a non-empty string") { value, field throws(FieldError) in
        try Decode.string(value, field, nonEmpty: true)
    }
    /// The name of a source; whether it exists is the registry's to check.
    package static let sourceName = Shape(.ref("SourceName"), expected: "the name of an existing source") {
        value, field throws(FieldError) in try Decode.sourceName(value, field)
    }
}

extension Shape where Value == Int {
    package static func integer(in range: ClosedRange<Int>) -> Shape {
        Shape(.integer(in: range), expected: Decode.integerExpectation(range)) { value, field throws(FieldError) in
            try Decode.integer(value, field, in: range)
        }
    }
}

extension Shape where Value == Double {
    package static func number(in range: ClosedRange<Double>, excludingLowerBound: Bool = false) -> Shape {
        Shape(.number(in: range, excludingLowerBound: excludingLowerBound), expected: "a number") { value, field throws(FieldError) in
            try Decode.number(value, field, in: range, excludingLowerBound: excludingLowerBound)
        }
    }
}

extension Shape where Value == Bool {
    package static let bool = Shape(.boolean, expected: "a boolean") { value, field throws(FieldError) in
        try Decode.bool(value, field)
    }
}

extension Shape where Value == JSON {
    /// Any JSON value, taken as it is.
    package static let anything = Shape(.anything, expected: "a JSON value") { value, _ throws(FieldError) in value }
}

extension Shape where Value == [JSON] {
    package static let array = Shape(.type("array"), expected: "an array") { value, field throws(FieldError) in
        try Decode.array(value, field)
    }
}

extension Shape where Value == IndexPath {
    package static let indexPath = Shape(.ref("IndexPath"), expected: "[section, item], an array of two non-negative integers") {
        value, field throws(FieldError) in try Decode.indexPath(value, field)
    }
}

extension Shape where Value == JSONKeyPath {
    package static let keyPath = Shape(.string(minLength: 1), expected: "a non-empty key path string") { value, field throws(FieldError) in
        try Decode.keyPath(value, field)
    }
}

/// A member of params as Protocol/openrpc.json lists it.
package struct Member: Sendable {
    package let name: String
    package let schema: Schema
    package let isRequired: Bool
    package let description: String?

    package init(name: String, schema: Schema, isRequired: Bool, description: String?) {
        self.name = name
        self.schema = schema
        self.isRequired = isRequired
        self.description = description
    }

    /// `{name, schema, required, description?}`: an OpenRPC content descriptor.
    package var contentDescriptor: JSON {
        var members: [(String, JSON)] = [("name", JSON(name)), ("schema", schema.json), ("required", JSON(isRequired))]
        if let description { members.append(("description", JSON(description))) }
        return .object(members)
    }
}

/// One member of an object: its name, whether it is required, its default, its one-line doc,
/// and how it is read (with every range check), all in one value.
package struct Field<Value>: Sendable {
    package let member: Member
    package let read: @Sendable (inout ObjectReader) throws(FieldError) -> Value

    package init(_ member: Member, read: @escaping @Sendable (inout ObjectReader) throws(FieldError) -> Value) {
        self.member = member
        self.read = read
    }

    /// A member that must be present (and not null).
    package static func required(_ name: String, _ shape: Shape<Value>, doc: String? = nil) -> Field {
        Field(Member(name: name, schema: shape.schema, isRequired: true, description: doc)) { reader throws(FieldError) in
            try reader.required(name, shape.decode, expected: shape.expected)
        }
    }

    /// A member that may be absent or null, read as nil then.
    package static func optional<Wrapped>(_ name: String, _ shape: Shape<Wrapped>, doc: String? = nil) -> Field
    where Value == Wrapped? {
        Field(Member(name: name, schema: shape.schema, isRequired: false, description: doc)) { reader throws(FieldError) in
            try reader.optional(name, shape.decode)
        }
    }

    /// A member that may be absent; null, when sent, goes to `shape`, which takes it as a
    /// value (a proxy of null: none) or refuses it as any other it does not take.
    package static func optionalIncludingNull<Wrapped>(_ name: String, _ shape: Shape<Wrapped>, doc: String? = nil) -> Field
    where Value == Wrapped? {
        Field(Member(name: name, schema: shape.schema, isRequired: false, description: doc)) { reader throws(FieldError) in
            guard let value = reader.rawValue(name) else { return nil }
            return try shape.decode(value, reader.path(name))
        }
    }

    /// A member that may be absent or null, read as `defaultValue` then; the doc says
    /// "default VALUE: ..." (`defaultText` when the value's own text is not what a person
    /// reads, as for a struct).
    package static func optional(
        _ name: String, _ shape: Shape<Value>, default defaultValue: Value, defaultText: String? = nil, doc: String? = nil
    ) -> Field where Value: Sendable {
        let shown = "default \(defaultText ?? Self.describe(defaultValue))"
        let description = doc.map { "\(shown): \($0)" } ?? shown
        return Field(Member(name: name, schema: shape.schema, isRequired: false, description: description)) { reader throws(FieldError) in
            try reader.optional(name, shape.decode) ?? defaultValue
        }
    }

    private static func describe(_ value: Value) -> String {
        switch value {
        case let json as JSON: json.text()
        default: "\(value)"
        }
    }
}

extension Field where Value == String {
    /// `source`: the name of a source, read where it lies.
    package static func source(_ name: String = "source", doc: String? = nil) -> Field {
        Field(Member(name: name, schema: .ref("SourceName"), isRequired: true, description: doc)) { reader throws(FieldError) in
            try reader.string(name)
        }
    }
}

extension Field where Value == Bool {
    /// A flag, absent meaning `defaultValue` (the usual case reads nothing more).
    package static func flag(_ name: String, default defaultValue: Bool, doc: String) -> Field {
        Field(Member(name: name, schema: .boolean, isRequired: false, description: "default \(defaultValue): \(doc)")) {
            reader throws(FieldError) in try reader.optionalBool(name) ?? defaultValue
        }
    }
}

extension Field {
    /// A member that must be present, null being one of its values (`seconds: null`).
    package static func requiredAllowingNull(_ name: String, _ shape: Shape<Value>, doc: String? = nil) -> Field {
        Field(Member(name: name, schema: shape.schema, isRequired: true, description: doc)) { reader throws(FieldError) in
            guard let value = reader.rawValue(name) else { throw .missing(reader.path(name), expected: shape.expected) }
            return try shape.decode(value, reader.path(name))
        }
    }

    /// A member whose absence keeps what is there and whose null removes it: nil when absent,
    /// `.some(nil)` when null.
    package static func replacing<Wrapped>(_ name: String, _ shape: Shape<Wrapped>, doc: String) -> Field
    where Value == Wrapped?? {
        let schema = Schema.anyOf([shape.schema, .null])
        return Field(Member(name: name, schema: schema, isRequired: false, description: doc)) { reader throws(FieldError) in
            guard let value = reader.rawValue(name) else { return nil }
            return .some(value.isNull ? nil : try shape.decode(value, reader.path(name)))
        }
    }
}

extension Field where Value == JSON {
    /// A member that must be present, any JSON value (null included) being accepted.
    package static func anyValue(_ name: String, doc: String? = nil) -> Field {
        Field(Member(name: name, schema: .anything, isRequired: true, description: doc)) { reader throws(FieldError) in
            guard let value = reader.rawValue(name) else { throw .missing(reader.path(name), expected: "a JSON value") }
            return value
        }
    }
}

extension Field where Value == IndexPath {
    /// `[section, item]`, read where it lies (most reads carry one).
    package static func indexPath(_ name: String = "indexPath", doc: String? = nil) -> Field {
        let shape = Shape.indexPath
        return Field(Member(name: name, schema: shape.schema, isRequired: true, description: doc)) { reader throws(FieldError) in
            try reader.required(name, inPlace: Decode.indexPath(inPlace:), shape.decode, expected: shape.expected)
        }
    }
}

extension Field {
    /// `read`, its value returned as `Any`: what a declaration keeps in place of the pack.
    fileprivate var readingAny: @Sendable (inout ObjectReader) throws(FieldError) -> Any {
        let read = read
        return { reader throws(FieldError) in try read(&reader) }
    }
}

/// An object's members declared once: from the fields come both the decoding (every member
/// read and range-checked) and the members' schemas. A request's params are one; so are the
/// objects nested in them (`shape`).
package struct ObjectDeclaration<Value>: Sendable {
    package let members: [Member]
    private let decodeMembers: @Sendable (inout ObjectReader) throws(FieldError) -> Value

    /// The value made by `make` from the fields' values, read in this order.
    package init<each Field_>(
        _ fields: repeat Field<each Field_>, as make: @escaping @Sendable (repeat each Field_) throws(FieldError) -> Value
    ) {
        var members: [Member] = []
        // Each member's reading is erased to a closure returning `Any` here, once. A closure
        // that captured the fields' pack itself would look up the pack's tuple and `Field<T>`
        // metadata in the runtime's caches on every request (a tenth of a round trip's CPU).
        var reads: [@Sendable (inout ObjectReader) throws(FieldError) -> Any] = []
        for field in repeat each fields {
            members.append(field.member)
            reads.append(field.readingAny)
        }
        self.members = members
        decodeMembers = { [reads] (reader: inout ObjectReader) throws(FieldError) -> Value in
            var values: [Any] = []
            values.reserveCapacity(reads.count)
            for read in reads { values.append(try read(&reader)) }
            var position = 0
            func next<Element>(_: Element.Type) -> Element {
                defer { position += 1 }
                // The reads are in the pack's order, so each value has its member's type.
                return values[position] as! Element
            }
            return try make(repeat next((each Field_).self))
        }
    }

    /// Members read by hand-written decoding, for the few objects whose members depend on one
    /// another's values (a source's kind, a paging strategy).
    package init(members: [Member], decode: @escaping @Sendable (inout ObjectReader) throws(FieldError) -> Value) {
        self.members = members
        decodeMembers = decode
    }

    /// These members, then `next`'s, read from one object (a paginated source's members are a
    /// remote source's and its paging's).
    package func followed<Next, Combined>(
        by next: ObjectDeclaration<Next>, as combine: @escaping @Sendable (Value, Next) throws(FieldError) -> Combined
    ) -> ObjectDeclaration<Combined> {
        ObjectDeclaration<Combined>(members: members + next.members) { reader throws(FieldError) in
            let first = try decode(&reader)
            return try combine(first, try next.decode(&reader))
        }
    }

    /// The same members, their value changed by `transform`.
    package func map<Other>(_ transform: @escaping @Sendable (Value) throws(FieldError) -> Other) -> ObjectDeclaration<Other> {
        ObjectDeclaration<Other>(members: members) { reader throws(FieldError) in try transform(try decode(&reader)) }
    }

    /// Reads the members from `reader`; the caller refuses the ones nobody read (`finish`).
    package func decode(_ reader: inout ObjectReader) throws(FieldError) -> Value {
        try decodeMembers(&reader)
    }

    /// The schema of an object of these members: `additionalProperties` false unless
    /// `othersIgnored` (members a newer client may send that this daemon does not know).
    package func schema(othersIgnored: Bool = false) -> Schema {
        var schema = Schema.type("object")
        schema.properties = members.map { ($0.name, $0.schema.described($0.description ?? $0.schema.description)) }
        schema.required = members.filter(\.isRequired).map(\.name)
        schema.additionalProperties = othersIgnored
        return schema
    }

    /// This object as one member's value: decoded with its own reader, and, unless
    /// `othersIgnored`, refusing members it does not know.
    package func shape(expected: String, othersIgnored: Bool = false) -> Shape<Value> {
        Shape(schema(othersIgnored: othersIgnored), expected: expected) { value, field throws(FieldError) in
            var reader = try ObjectReader(value, field: field, expected: expected)
            let decoded = try decode(&reader)
            if !othersIgnored { try reader.finish() }
            return decoded
        }
    }
}
