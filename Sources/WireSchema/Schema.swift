import JSONKit

/// A JSON Schema (draft 2020-12, the subset the protocol uses), built in Swift and rendered
/// as JSON for Protocol/openrpc.json. Declarations make these; nothing writes schema text.
///
/// Every keyword renders in one fixed order, so a schema's text does not depend on how it was
/// built.
package struct Schema: Sendable {
    package var ref: String?
    package var types: [String] = []
    package var format: String?
    package var constant: JSON?
    package var enumeration: [JSON]?
    package var minimum: JSON?
    package var exclusiveMinimum: JSON?
    package var maximum: JSON?
    package var minLength: Int?
    package var maxLength: Int?
    package var pattern: String?
    package var items: [Schema]?
    package var minItems: Int?
    package var maxItems: Int?
    package var properties: [(String, Schema)]?
    package var required: [String]?
    package var dependentRequired: [(String, [String])]?
    package var minProperties: Int?
    /// `additionalProperties` as a flag; `otherMembers` when every other member must match a
    /// schema instead.
    package var additionalProperties: Bool?
    package var otherMembers: [Schema]?
    package var anyOf: [Schema]?
    package var oneOf: [Schema]?
    package var not: [Schema]?
    package var description: String?

    /// `{}`: any value.
    package init() {}
}

// MARK: Building

extension Schema {
    package static let anything = Schema()

    /// `{"$ref": "#/components/schemas/NAME"}`.
    package static func ref(_ component: String) -> Schema {
        var schema = Schema()
        schema.ref = "#/components/schemas/\(component)"
        return schema
    }

    package static func type(_ types: String...) -> Schema {
        var schema = Schema()
        schema.types = types
        return schema
    }

    package static let string = type("string")
    package static let boolean = type("boolean")
    package static let null = type("null")

    package static func string(
        minLength: Int? = nil, maxLength: Int? = nil, pattern: String? = nil, format: String? = nil
    ) -> Schema {
        var schema = type("string")
        schema.minLength = minLength
        schema.maxLength = maxLength
        schema.pattern = pattern
        schema.format = format
        return schema
    }

    /// An integer in `range`; a bound at `Int.min` or `Int.max` is left out.
    package static func integer(in range: ClosedRange<Int> = Int.min...Int.max) -> Schema {
        var schema = type("integer")
        if range.lowerBound != Int.min { schema.minimum = JSON(range.lowerBound) }
        if range.upperBound != Int.max { schema.maximum = JSON(range.upperBound) }
        return schema
    }

    package static let integer = integer()

    /// A number in `range`, its lower bound excluded when `excludingLowerBound`.
    package static func number(in range: ClosedRange<Double>? = nil, excludingLowerBound: Bool = false) -> Schema {
        var schema = type("number")
        if let range {
            if excludingLowerBound {
                schema.exclusiveMinimum = jsonNumber(range.lowerBound)
            } else {
                schema.minimum = jsonNumber(range.lowerBound)
            }
            schema.maximum = jsonNumber(range.upperBound)
        }
        return schema
    }

    package static let number = number()

    package static func array(of items: Schema, minItems: Int? = nil, maxItems: Int? = nil) -> Schema {
        var schema = type("array")
        schema.items = [items]
        schema.minItems = minItems
        schema.maxItems = maxItems
        return schema
    }

    /// An object of these members (in this order), `required` of them, and no other unless
    /// `additionalProperties` says so.
    package static func object(
        _ properties: KeyValuePairs<String, Schema>, required: [String] = [], additionalProperties: Bool? = false
    ) -> Schema {
        object(members: properties.map { ($0.key, $0.value) }, required: required, additionalProperties: additionalProperties)
    }

    /// The same, its members made elsewhere (shared by several objects).
    package static func object(
        members: [(String, Schema)], required: [String] = [], additionalProperties: Bool? = false
    ) -> Schema {
        var schema = type("object")
        schema.properties = members
        schema.required = required
        schema.additionalProperties = additionalProperties
        return schema
    }

    /// An object whose every member matches `values`.
    package static func map(of values: Schema) -> Schema {
        var schema = type("object")
        schema.otherMembers = [values]
        return schema
    }

    package static func constant(_ value: JSON) -> Schema { Schema().with { $0.constant = value } }

    package static func oneOfValues(_ values: [JSON]) -> Schema { Schema().with { $0.enumeration = values } }

    package static func anyOf(_ schemas: [Schema]) -> Schema { Schema().with { $0.anyOf = schemas } }

    package static func oneOf(_ schemas: [Schema]) -> Schema { Schema().with { $0.oneOf = schemas } }

    package static func not(_ excluded: Schema) -> Schema { Schema().with { $0.not = [excluded] } }

    /// The same schema with a one-line description for people.
    package func described(_ text: String?) -> Schema {
        var schema = self
        schema.description = text
        return schema
    }

    /// The same schema, changed by `change` (for the keywords no builder takes).
    package func with(_ change: (inout Schema) -> Void) -> Schema {
        var schema = self
        change(&schema)
        return schema
    }

    private static func jsonNumber(_ number: Double) -> JSON {
        if number == number.rounded(), abs(number) < 1e15 { return JSON(Int(number)) }
        return JSON(number)
    }
}

// MARK: Rendering

extension Schema {
    /// The schema as JSON, its keywords in the fixed order.
    package var json: JSON {
        var members: [(String, JSON)] = []
        if let ref { members.append(("$ref", JSON(ref))) }
        switch types.count {
        case 0: break
        case 1: members.append(("type", JSON(types[0])))
        default: members.append(("type", .array(types.map { JSON($0) })))
        }
        if let format { members.append(("format", JSON(format))) }
        if let constant { members.append(("const", constant)) }
        if let enumeration { members.append(("enum", .array(enumeration))) }
        if let minimum { members.append(("minimum", minimum)) }
        if let exclusiveMinimum { members.append(("exclusiveMinimum", exclusiveMinimum)) }
        if let maximum { members.append(("maximum", maximum)) }
        if let minLength { members.append(("minLength", JSON(minLength))) }
        if let maxLength { members.append(("maxLength", JSON(maxLength))) }
        if let pattern { members.append(("pattern", JSON(pattern))) }
        if let items = items?.first { members.append(("items", items.json)) }
        if let minItems { members.append(("minItems", JSON(minItems))) }
        if let maxItems { members.append(("maxItems", JSON(maxItems))) }
        if let properties { members.append(("properties", .object(properties.map { ($0.0, $0.1.json) }))) }
        if let required { members.append(("required", .array(required.map { JSON($0) }))) }
        if let dependentRequired {
            members.append(("dependentRequired", .object(dependentRequired.map { ($0.0, .array($0.1.map { JSON($0) })) })))
        }
        if let minProperties { members.append(("minProperties", JSON(minProperties))) }
        // Two fields, not an enum: a payload enum may keep its case in a pointer's spare bits,
        // which LeakSanitizer then cannot follow from a global.
        if let other = otherMembers?.first {
            members.append(("additionalProperties", other.json))
        } else if let additionalProperties {
            members.append(("additionalProperties", JSON(additionalProperties)))
        }
        if let anyOf { members.append(("anyOf", .array(anyOf.map(\.json)))) }
        if let oneOf { members.append(("oneOf", .array(oneOf.map(\.json)))) }
        if let not = not?.first { members.append(("not", not.json)) }
        if let description { members.append(("description", JSON(description))) }
        return .object(members)
    }
}
