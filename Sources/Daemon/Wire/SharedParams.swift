import DataSources
import JSONKit
import WireSchema

// Params and results that several methods share; each method's own are in its file under
// Methods/. Indices and counts are checked against the rows that exist by the model, which
// never adds two client numbers without checking.

/// `{source}`: the methods that read or drive one whole source.
struct SourceParams: DeclaredParams {
    var source: String
    static let declaration = ObjectDeclaration(.source(), as: SourceParams.init)
}

/// `replaceObjects`, `updateObjects`: `{source, objects}`.
struct ObjectsParams: DeclaredParams {
    var source: String
    var objects: [JSON]
    static let declaration = ObjectDeclaration(
        .source(), .required("objects", .array, doc: "the objects, as the source will hold them"), as: ObjectsParams.init)
}

/// `$/cancelRequest` (a notification): `{id}`, the id of the request to cancel.
struct CancelRequestParams {
    let id: JSON

    init(_ params: JSON?) throws(FieldError) {
        var reader = try ObjectReader(params, field: "")
        guard let id = reader.value("id") else { throw .missing("id", expected: "the id of a request: a string or a number") }
        guard [.string, .integer, .real].contains(id.kind) else {
            throw .mistyped("id", expected: "the id of a request: a string or a number", got: id)
        }
        self.id = id
        try reader.finish()
    }
}

/// A read that answers its value as it is, or with `withRevision: true` as
/// `{member: value, "revision": N}`.
struct RevisionedRead: WireEncodable {
    let member: String
    let value: JSON
    /// nil: the plain value (the 1.0 shape).
    let revision: Int?

    var json: JSON {
        guard let revision else { return value }
        return [member: value, "revision": JSON(revision)]
    }
}
