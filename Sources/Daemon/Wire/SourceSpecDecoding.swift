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

    static let membersOutsideCacheKey: Set = ["name", "placeholderStorageOptions", "cache", "refreshIntervalSeconds", "prefetchDistance"]

    static let kinds = ["simple", "sectioned", "multi", "remote", "paginated", "filtered"]

    /// One OpenRPC param stands for the whole object: every member of SourceSpec is a param.
    static let members = [
        Member(
            name: "spec", schema: .ref("SourceSpec"), isRequired: true,
            description: "the params object itself (every member of SourceSpec is a param)")
    ]

    init(_ reader: inout ObjectReader) throws(FieldError) {
        let name = try reader.string("name", nonEmpty: true)
        guard let kindValue = reader.value("kind") else { throw .missing("kind", expected: "one of \(Self.kinds.joined(separator: ", "))") }
        let kindName = try Decode.string(kindValue, "kind")
        let identityKey = try reader.optionalKeyPath("identityKey")
        let kind: SourceSpec.Kind
        switch kindName {
        case "simple":
            let objects = try reader.optional("objects") { value, field throws(FieldError) in try Decode.array(value, field) } ?? []
            kind = .simple(objects: objects)
        case "sectioned":
            kind = .sectioned(
                source: try reader.required("source", Decode.sourceName, expected: "the name of an existing source"),
                sectioningKey: try reader.required("sectioningKey", Decode.keyPath, expected: "a non-empty key path string"),
                sortDescriptors: try reader.optional("sortDescriptors", Self.sortDescriptors) ?? [])
        case "multi":
            let names = try reader.required(
                "sources",
                { value, field throws(FieldError) in
                    try Decode.array(value, field, expected: "an array of source names").enumerated().map {
                        index, element throws(FieldError) in
                        try Decode.sourceName(element, "\(field)[\(index)]")
                    }
                }, expected: "an array of source names")
            kind = .multi(sources: names, preserveSections: try reader.optionalBool("preserveSections") ?? false)
        case "filtered":
            kind = .filtered(
                source: try reader.required("source", Decode.sourceName, expected: "the name of an existing source"),
                filter: try reader.optional("filter", FilterDecoding.predicate),
                match: try reader.optional("match", FilterDecoding.match))
        case "remote":
            let configuration = try RemoteConfigurationDecoding.configuration(&reader)
            kind = .remote(configuration)
            cacheKey = Self.cacheKey(reader.wholeObject, configuration)
        case "paginated":
            let configuration = try RemoteConfigurationDecoding.configuration(&reader)
            kind = .paginated(configuration, try RemoteConfigurationDecoding.paginator(&reader))
            cacheKey = Self.cacheKey(reader.wholeObject, configuration)
        default:
            throw FieldError(
                field: "kind", expected: "one of \(Self.kinds.joined(separator: ", "))", got: kindValue,
                message: "\"kind\" must be one of \(Self.kinds.joined(separator: ", ")), got \"\(kindName)\"")
        }
        spec = SourceSpec(name: name, identityKey: identityKey, kind: kind)
        wire = reader.wholeObject
    }

    private static func cacheKey(_ params: JSON, _ configuration: RemoteConfiguration) -> PageCacheKey {
        var material = params
        for member in membersOutsideCacheKey { material = material.removing(member) }
        let label = URLResolution.redacted(
            URLResolution.requestURL(
                baseURL: configuration.baseURL, apiPath: configuration.apiPath,
                query: []))
        return PageCacheKey(material: "datasourced-cache-key-1 " + material.text(format: .sortedKeys), label: label)
    }

    /// `[{keyPath, ascending?}]`.
    private static func sortDescriptors(_ value: JSON, _ field: String) throws(FieldError) -> [SortDescriptor] {
        var descriptors: [SortDescriptor] = []
        for (index, element) in try Decode.array(value, field, expected: "an array of {keyPath, ascending}").enumerated() {
            var reader = try ObjectReader(element, field: "\(field)[\(index)]", expected: "an object {keyPath, ascending}")
            let keyPath = try reader.required("keyPath", Decode.keyPath, expected: "a non-empty key path string")
            let ascending = try reader.optionalBool("ascending") ?? true
            try reader.finish()
            descriptors.append(SortDescriptor(keyPath: keyPath, ascending: ascending))
        }
        return descriptors
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
