import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `objectAtIndexPath`: one row; with withRevision, withMatches or withPending, {object, revision?, matches?, pending?}.
enum ObjectAtIndexPathRequest: AnsweredAtOnce {
    static let name = "objectAtIndexPath"
    static let section = "reading"
    typealias Params = IndexPathParams
    typealias Result = ObjectRead

    static func handle(_ daemon: Daemon, _ params: IndexPathParams) throws -> ObjectRead {
        let source = try daemon.source(params.source)
        let object = try source.object(at: params.indexPath)
        source.didRead(params.indexPath)
        // Optional.none spelt out: a bare nil here would be JSON's null literal.
        let matches: JSON? = params.withMatches ? .some(MatchEncoding.json(of: object, in: source)) : .none
        let pending: JSON? = params.withPending ? .some(PendingEncoding.ids(of: object, in: source)) : .none
        return ObjectRead(object: object, revision: params.withRevision ? source.revision : nil, matches: matches, pending: pending)
    }

    static let summary = "one row; with withRevision, withMatches or withPending, {object, revision?, matches?, pending?}"
    static let resultSchema: Schema = .anyOf([
        .ref("Row"),
        .object(
            [
                "object": .ref("Row"),
                "revision": .integer(in: 0...Int.max),
                "matches": .ref("Matches"),
                "pending": PendingEncoding.schema,
            ],
            required: ["object"]),
    ])
}

struct IndexPathParams: DeclaredParams {
    var source: String
    var indexPath: IndexPath
    var withRevision: Bool
    var withMatches: Bool
    var withPending: Bool
    static let declaration = ObjectDeclaration(
        .source(), .indexPath(), .flag("withRevision", default: false, doc: "answer {object, revision}"),
        .flag("withMatches", default: false, doc: "also answer how the row matches its filtered source's query (matches)"),
        .flag("withPending", default: false, doc: "also answer the IDs of the row's pending mutations (pending)"),
        as: IndexPathParams.init)
}

/// `objectAtIndexPath`: the row as it is (the 1.0 shape), or with `withRevision` or
/// `withMatches` `{object, revision?, matches?}`.
struct ObjectRead: WireEncodable {
    let object: JSON
    let revision: Int?
    /// nil: not asked; `.null`: asked, no match to show.
    let matches: JSON?
    /// With `withPending`: the row's pending mutations, oldest first.
    var pending: JSON?

    var json: JSON {
        guard revision != nil || matches != nil || pending != nil else { return object }
        var members: [(String, JSON)] = [("object", object)]
        if let revision { members.append(("revision", JSON(revision))) }
        if let matches { members.append(("matches", matches)) }
        if let pending { members.append(("pending", pending)) }
        return .object(members)
    }
}

/// `withPending`: the IDs of a row's pending mutations (`performAction`), oldest first; empty
/// for a row none changes. A derived source's row is its remote sources' (a sectioned or
/// filtered view, a multi source): their pending mutations of it are its.
enum PendingEncoding {
    static func ids(of row: JSON, in source: DataSource) -> JSON {
        .array(ids(of: row, in: source, depth: 0).map { JSON($0) })
    }

    private static func ids(of row: JSON, in source: DataSource, depth: Int) -> [String] {
        if let remote = source as? RemoteCollection { return remote.pendingMutationIDs(of: row) }
        // Sources are built on existing ones only, so the walk ends; the bound is a guard.
        guard depth < 64 else { return [] }
        return source.children.flatMap { ids(of: row, in: $0, depth: depth + 1) }
    }

    static let schema: Schema = .array(of: .string).described("the row's pending mutations, oldest first")
}
