import Basics
import DataSources
import JSONKit
import WireSchema

/// `createSource` params: `name`, `kind`, `identityKey?`, and the members of that kind.
struct CreateSourceParams: WireParams {
    var spec: SourceSpec
    /// What names a remote or paginated source's entry in the persisted cache: every member
    /// that changes what the server returns or how it is mapped (secret values included: the
    /// store keeps only a hash). Not the name, placeholders, `cache` or `refreshIntervalSeconds`.
    var cacheKey: PageCacheKey?
    /// The params as sent (what `updateSource` starts from).
    var wire: JSON = .null

    /// What does not change the rows a source's requests bring: two sources that differ only
    /// here share their cache entry (and their pending actions).
    static let membersOutsideCacheKey: Set = [
        "name", "placeholderStorageOptions", "cache", "refreshIntervalSeconds", "prefetchDistance", "actions",
    ]

    static let kinds = ["simple", "sectioned", "multi", "remote", "paginated", "filtered"]

    /// One OpenRPC param stands for the whole object: every member of SourceSpec is a param.
    static let members = [
        Member(
            name: "spec", schema: .ref("SourceSpec"), isRequired: true,
            description: "the params object itself (every member of SourceSpec is a param)")
    ]

    init(_ reader: inout ObjectReader) throws(FieldError) {
        let (name, kindName, identityKey) = try Self.common.decode(&reader)
        guard let kind = Self.kindDeclarations.first(where: { $0.kind == kindName }) else {
            preconditionFailure("the kind's shape takes only the kinds declared")
        }
        let decoded = try kind.members.decode(&reader)
        switch decoded {
        case .remote(let configuration), .paginated(let configuration, _):
            cacheKey = Self.cacheKey(reader.wholeObject, configuration)
        case .simple, .sectioned, .multi, .filtered:
            break
        }
        switch decoded {
        case .remote(let configuration), .paginated(let configuration, _):
            if identityKey == nil, let action = configuration.actions.first(where: { $0.optimistic != .none }) {
                throw FieldError(
                    field: "identityKey", expected: "a key path naming each row (actions find their rows by it)", got: "nothing",
                    message:
                        "\"identityKey\" is required with actions that change rows (\"\(action.name)\" is an \(action.optimistic.rawValue))"
                )
            }
        default: break
        }
        spec = SourceSpec(name: name, identityKey: identityKey, kind: decoded)
        wire = reader.wholeObject
    }

    /// What every kind has, read first.
    static let common = ObjectDeclaration(
        .required("name", Shape.nonEmptyString), .required("kind", kindShape),
        .optional("identityKey", Shape.keyPath.documented(.anyOf([SchemaComponents.keyPath, .null]))),
        as: { (name: $0, kind: $1, identityKey: $2) })

    static let kindShape = Shape<String>(.string, expected: "one of \(kinds.joined(separator: ", "))") { value, field throws(FieldError) in
        let name = try Decode.string(value, field)
        guard kinds.contains(name) else {
            throw FieldError(
                field: field, expected: "one of \(kinds.joined(separator: ", "))", got: value,
                message: "\"kind\" must be one of \(kinds.joined(separator: ", ")), got \"\(name)\"")
        }
        return name
    }

    /// One kind: the members it has besides the common ones, declared once for its decoding
    /// and for its branch of SourceSpec's schema.
    struct KindDeclaration: Sendable {
        let kind: String
        let members: ObjectDeclaration<SourceSpec.Kind>
    }

    static let kindDeclarations = [
        KindDeclaration(
            kind: "simple",
            members: ObjectDeclaration(
                .optional("objects", Shape.array, default: [], doc: "the rows, in order"), as: { SourceSpec.Kind.simple(objects: $0) })),
        KindDeclaration(
            kind: "sectioned",
            members: ObjectDeclaration(
                .required("source", Shape.sourceName, doc: "the source whose rows are sectioned"),
                .required("sectioningKey", Shape.keyPath.documented(SchemaComponents.keyPath), doc: "the rows' section title"),
                .optional("sortDescriptors", sortDescriptors, default: [], defaultText: "[]", doc: "the order within each section"),
                as: { SourceSpec.Kind.sectioned(source: $0, sectioningKey: $1, sortDescriptors: $2) })),
        KindDeclaration(
            kind: "multi",
            members: ObjectDeclaration(
                .required("sources", Shape.array(of: Shape.sourceName, expected: "an array of source names"), doc: "the sources, in order"),
                .flag("preserveSections", default: false, doc: "each source's sections stay its own; else each source is a section"),
                as: { SourceSpec.Kind.multi(sources: $0, preserveSections: $1) })),
        KindDeclaration(kind: "remote", members: RemoteConfigurationDecoding.members.map { .remote($0) }),
        KindDeclaration(
            kind: "paginated",
            members: RemoteConfigurationDecoding.members.followed(by: RemoteConfigurationDecoding.pagingMembers) {
                configuration, paging throws(FieldError) in
                SourceSpec.Kind.paginated(configuration, try RequestBodyDecoding.paging(paging, configuration: configuration))
            }),
        KindDeclaration(
            kind: "filtered",
            members: ObjectDeclaration(
                .required("source", Shape.sourceName, doc: "the source whose rows are filtered"),
                .optional("filter", FilterDecoding.predicateShape.documented(.anyOf([.ref("Predicate"), .null]))),
                .optional("match", FilterDecoding.matchShape.documented(.anyOf([.ref("MatchQuery"), .null]))),
                .optional("fill", FilterDecoding.fillShape, doc: FilterDecoding.fillDoc),
                as: { SourceSpec.Kind.filtered(source: $0, filter: $1, match: $2, fill: $3) })),
    ]

    /// SourceSpec: one branch a kind, each the common members (its kind as a constant) and its own.
    static var schema: Schema {
        .oneOf(
            kindDeclarations.map { declaration in
                let common = Self.common.members.map { member in
                    member.name == "kind"
                        ? Member(name: "kind", schema: .constant(JSON(declaration.kind)), isRequired: true, description: nil) : member
                }
                return ObjectDeclaration<Void>(members: common + declaration.members.members) { _ throws(FieldError) in }.schema()
            }
        ).described("createSource params, by kind")
    }

    /// `[{keyPath, ascending?}]`.
    static let sortDescriptor = ObjectDeclaration(
        .required("keyPath", Shape.keyPath.documented(SchemaComponents.keyPath)),
        .flag("ascending", default: true, doc: "descending when false"),
        as: { SortDescriptor(keyPath: $0, ascending: $1) })

    static let sortDescriptors = Shape.array(
        of: sortDescriptor.shape(expected: "an object {keyPath, ascending}").documented(.ref("SortDescriptor")),
        expected: "an array of {keyPath, ascending}")

    private static func cacheKey(_ params: JSON, _ configuration: RemoteConfiguration) -> PageCacheKey {
        var material = params
        for member in membersOutsideCacheKey { material = material.removing(member) }
        let label = URLResolution.redacted(
            URLResolution.requestURL(
                baseURL: configuration.baseURL, apiPath: configuration.apiPath,
                query: []))
        return PageCacheKey(material: "datasourced-cache-key-1 " + material.text(format: .sortedKeys), label: label)
    }
}

extension SourceSpec {
    /// Decodes `createSource` params as the daemon does (benchmarks and tests of the model
    /// use it to build sources from protocol JSON).
    package static func decoding(createSourceParams params: JSON) throws -> SourceSpec {
        do {
            var reader = try ObjectReader(params, field: "")
            let decoded = try CreateSourceParams(&reader)
            try reader.finish()
            return decoded.spec
        } catch {
            throw error.responseError
        }
    }
}
