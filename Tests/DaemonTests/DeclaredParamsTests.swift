@testable import Daemon
import DataSources
import JSONKit
import Testing
import WireSchema

/// Every method's params checked against their own declaration: what the declaration says is
/// required is refused when absent, and each integer's declared bounds are exactly what the
/// decoding takes. The cases are made from the declarations, so a new method is covered when
/// it is declared.
@Suite struct DeclaredParamsTests {
    /// A value a member's schema accepts, for the members a case does not test; nil when the
    /// schema is one no simple value satisfies (the case is then not made).
    static func sample(_ schema: Schema) -> JSON? {
        if let ref = schema.ref {
            switch ref.split(separator: "/").last.map(String.init) {
            case "SourceName": return "s"
            case "IndexPath": return [0, 0]
            case "QueryParameters", "Headers": return .object([])
            default: return nil
            }
        }
        if let options = schema.anyOf ?? schema.oneOf { return options.lazy.compactMap(sample).first }
        if let constant = schema.constant { return constant }
        switch schema.types.first {
        case "string": return JSON(String(repeating: "a", count: max(1, schema.minLength ?? 1)))
        case "integer": return schema.minimum ?? 0
        case "number": return schema.minimum ?? schema.exclusiveMinimum.flatMap(\.integerValue).map { JSON($0 + 1) } ?? 1
        case "boolean": return true
        case "array": return .array([])
        case "object": return .object([])
        case "null": return .null
        case nil: return .null  // any value
        default: return nil
        }
    }

    /// The params decoded as the method table decodes them: the declaration's members, then
    /// no other.
    static func decode<M: RequestMethod>(_ method: M.Type, _ params: JSON) -> FieldError? {
        do throws(FieldError) {
            var reader = try ObjectReader(params, field: "", expected: "an object with named members")
            _ = try M.Params(&reader)
            try reader.finish()
            return nil
        } catch {
            return error
        }
    }

    struct Cases {
        var methods = 0
        var required = 0
        var bounds = 0
    }

    static func check<M: RequestMethod>(_ method: M.Type, _ cases: inout Cases) {
        let members = M.Params.members
        // createSource's one member stands for the whole SourceSpec (its own tests cover it).
        guard !members.contains(where: { $0.name == "spec" }) else { return }
        var base: [(String, JSON)] = []
        for member in members where member.isRequired {
            guard let value = sample(member.schema) else { return }
            base.append((member.name, value))
        }
        // The sample values pass the declared shapes; a handler-level check (an origin's
        // form) may still refuse them: those methods' refusals are their own tests'.
        guard decode(M.self, .object(base)) == nil else { return }
        cases.methods += 1
        let unknown = decode(M.self, .object(base + [("zzzUnknown", 1)]))
        #expect(unknown?.field == "zzzUnknown", "\(M.name): an unknown member is refused by name")
        for member in members where member.isRequired {
            cases.required += 1
            let refusal = decode(M.self, .object(base.filter { $0.0 != member.name }))
            #expect(refusal?.field == member.name, "\(M.name): \(member.name) is declared required")
            #expect(refusal?.got == "nothing", "\(M.name): \(member.name) absent")
        }
        for member in members where member.schema.types == ["integer"] {
            let others = base.filter { $0.0 != member.name }
            if let minimum = member.schema.minimum?.integerValue {
                cases.bounds += 1
                #expect(
                    decode(M.self, .object(others + [(member.name, JSON(minimum))])) == nil, "\(M.name).\(member.name) takes \(minimum)")
                if minimum > Int.min {
                    let below = decode(M.self, .object(others + [(member.name, JSON(minimum - 1))]))
                    #expect(below?.field == member.name, "\(M.name).\(member.name) refuses \(minimum - 1)")
                }
            }
            if let maximum = member.schema.maximum?.integerValue {
                cases.bounds += 1
                #expect(
                    decode(M.self, .object(others + [(member.name, JSON(maximum))])) == nil, "\(M.name).\(member.name) takes \(maximum)")
                let above = decode(M.self, .object(others + [(member.name, JSON(maximum + 1))]))
                #expect(above?.field == member.name, "\(M.name).\(member.name) refuses \(maximum + 1)")
            }
            let real = decode(M.self, .object(others + [(member.name, JSON(1.5))]))
            #expect(real?.field == member.name, "\(M.name).\(member.name) refuses a real")
        }
    }

    @Test func everyMethodDecodesWhatItsDeclarationSays() {
        var cases = Cases()
        for method in ProtocolMethods.all { Self.check(method, &cases) }
        // Every method but createSource (the whole spec) and allowCredential (an origin's form).
        #expect(cases.methods == ProtocolMethods.all.count - 2, "methods checked: \(cases.methods)")
        #expect(cases.required >= 30, "required members checked: \(cases.required)")
        #expect(cases.bounds >= 10, "integer bounds checked: \(cases.bounds)")
    }

    /// A declaration and its decoding cannot disagree: a bound declared is the bound checked,
    /// seen on one member whose bound the code once wrote in four places.
    @Test func theDebounceBoundIsTheDeclaredOne() throws {
        let member = try #require(UpdateSourceParams.members.first { $0.name == "debounceMilliseconds" })
        #expect(member.schema.maximum == 10_000)
        #expect(member.description?.hasPrefix("default 0: ") == true)
    }
}
