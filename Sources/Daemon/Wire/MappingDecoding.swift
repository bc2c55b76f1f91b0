import Basics
import DataSources
import JSONKit
import WireSchema

/// `mapping`: output field names to a key path string or `{keyPath?, type?, default?, mapping?, items?}`.
enum MappingDecoding {
    static let shape = Shape<ObjectMapping>(.ref("Mapping"), expected: "an object of output field names") {
        value, field throws(FieldError) in
        try mapping(value, field)
    }

    static func mapping(_ value: JSON, _ field: String) throws(FieldError) -> ObjectMapping {
        guard let members = value.objectMembers else {
            throw .mistyped(field, expected: "an object of output field names to field specifications", got: value)
        }
        var fields: [(name: String, spec: ObjectMapping.FieldSpec)] = []
        for (name, spec) in members {
            fields.append((name, try self.spec(spec, "\(field).\(name)")))
        }
        return ObjectMapping(fields: fields)
    }

    static let types = ObjectMapping.FieldType.allCases.map(\.rawValue)

    private static func spec(_ value: JSON, _ field: String) throws(FieldError) -> ObjectMapping.FieldSpec {
        if let keyPath = value.stringValue {
            return .field(keyPath: JSONKeyPath(keyPath), type: .any, defaultValue: nil, nested: nil, items: nil)
        }
        var reader = try ObjectReader(
            value, field: field, expected: "a key path string or an object {keyPath?, type?, default?, mapping?, items?}")
        let keyPath = try reader.optionalKeyPath("keyPath")
        var type =
            try reader.optional("type") { value, field throws(FieldError) in
                guard let name = value.stringValue else {
                    throw .mistyped(field, expected: "one of " + types.joined(separator: ", "), got: value)
                }
                guard let type = ObjectMapping.FieldType(rawValue: name) else {
                    throw .invalid(field, expected: "one of " + types.joined(separator: ", "), got: value)
                }
                return type
            } ?? .any
        // `default: null` is a default (null), unlike an absent default. Kept for the source's
        // life, so packed on its own, not as a part of the request's params.
        let defaultValue = reader.rawValue("default")?.packed()
        var nested: ObjectMapping?
        if let member = reader.value("mapping") {
            guard type == .object || type == .any else {
                throw FieldError(
                    field: reader.path("mapping"), expected: "no \"mapping\" unless type is \"object\"", got: JSON(type.rawValue))
            }
            nested = try mapping(member, reader.path("mapping"))
            type = .object
        }
        var items: ObjectMapping.FieldSpec?
        if let member = reader.value("items") {
            guard type == .array || type == .any else {
                throw FieldError(field: reader.path("items"), expected: "no \"items\" unless type is \"array\"", got: JSON(type.rawValue))
            }
            items = try spec(member, reader.path("items"))
            type = .array
        }
        try reader.finish()
        return .field(keyPath: keyPath, type: type, defaultValue: defaultValue, nested: nested, items: items)
    }
}
