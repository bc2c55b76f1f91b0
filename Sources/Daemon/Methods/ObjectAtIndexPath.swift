import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `objectAtIndexPath`: one row; with withRevision or withMatches, {object, revision?, matches?}.
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
        return ObjectRead(object: object, revision: params.withRevision ? source.revision : nil, matches: matches)
    }

    static let summary = "one row; with withRevision or withMatches, {object, revision?, matches?}"
    static let resultSchema: Schema = .anyOf([
        .ref("Row"),
        .object(
            [
                "object": .ref("Row"),
                "revision": .integer(in: 0...Int.max),
                "matches": .ref("Matches"),
            ],
            required: ["object"]),
    ])
}

struct IndexPathParams: DeclaredParams {
    var source: String
    var indexPath: IndexPath
    var withRevision: Bool
    var withMatches: Bool
    static let declaration = ObjectDeclaration(
        .source(), .indexPath(), .flag("withRevision", default: false, doc: "answer {object, revision}"),
        .flag("withMatches", default: false, doc: "also answer how the row matches its filtered source's query (matches)"),
        as: IndexPathParams.init)
}

/// `objectAtIndexPath`: the row as it is (the 1.0 shape), or with `withRevision` or
/// `withMatches` `{object, revision?, matches?}`.
struct ObjectRead: WireEncodable {
    let object: JSON
    let revision: Int?
    /// nil: not asked; `.null`: asked, no match to show.
    let matches: JSON?

    var json: JSON {
        guard revision != nil || matches != nil else { return object }
        var members: [(String, JSON)] = [("object", object)]
        if let revision { members.append(("revision", JSON(revision))) }
        if let matches { members.append(("matches", matches)) }
        return .object(members)
    }
}
