import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `objectsInSection`: a slice of a section, at a revision.
enum ObjectsInSectionRequest: AnsweredAtOnce {
    static let name = "objectsInSection"
    static let section = "reading"
    typealias Params = ObjectsInSectionParams
    typealias Result = SectionSlice

    static func handle(_ daemon: Daemon, _ params: ObjectsInSectionParams) throws -> SectionSlice {
        let source = try daemon.source(params.source)
        let objects = try source.objects(inSection: params.section, start: params.start, count: params.count)
        // A read of a counted slice is rows on screen: the window keeps pages around them.
        if params.count != nil, !objects.isEmpty {
            source.didRead(IndexPath(section: params.section, item: params.start + objects.count / 2))
        }
        return SectionSlice(
            section: params.section, start: params.start, objects: objects,
            numberOfObjects: source.numberOfObjects(inSection: params.section), revision: source.revision,
            matches: params.withMatches ? objects.map { MatchEncoding.json(of: $0, in: source) } : nil,
            pending: params.withPending ? objects.map { PendingEncoding.ids(of: $0, in: source) } : nil)
    }

    static let summary = "a slice of a section, at a revision"
    static let resultSchema: Schema = .object(
        [
            "section": .integer(in: 0...Int.max),
            "start": .integer(in: 0...Int.max),
            "objects": .array(of: .ref("Row")),
            "numberOfObjects": .integer(in: 0...Int.max),
            "revision": .integer(in: 0...Int.max),
            "matches": .array(of: .ref("Matches")),
            "pending": .array(of: PendingEncoding.schema).described("with withPending: each row's pending mutations, parallel to objects"),
        ],
        required: ["section", "start", "objects", "numberOfObjects", "revision"])
}

struct ObjectsInSectionParams: DeclaredParams {
    var source: String
    var section: Int
    var start: Int
    var count: Int?
    var withMatches: Bool
    var withPending: Bool
    static let declaration = ObjectDeclaration(
        .source(), .required("section", .integer(in: 0...Int.max)),
        .optional("start", .integer(in: 0...Int.max), default: 0, doc: "the first row of the slice"),
        .optional("count", .integer(in: 0...Int.max), doc: "the most rows answered; absent: to the end of the section"),
        .flag(
            "withMatches", default: false,
            doc: "also answer how each row matches its filtered source's query (matches, parallel to objects)"),
        .flag("withPending", default: false, doc: "also answer each row's pending mutations (pending, parallel to objects)"),
        as: ObjectsInSectionParams.init)
}

/// `objectsInSection`: a slice of one section, and the revision it was read at.
struct SectionSlice: WireEncodable {
    let section: Int
    let start: Int
    let objects: [JSON]
    let numberOfObjects: Int
    let revision: Int
    /// With `withMatches`: how each row matches, parallel to `objects`.
    let matches: [JSON]?
    /// With `withPending`: each row's pending mutations, parallel to `objects`.
    var pending: [JSON]?

    var json: JSON {
        var members: [(String, JSON)] = [
            ("section", JSON(section)), ("start", JSON(start)), ("objects", .array(objects)),
            ("numberOfObjects", JSON(numberOfObjects)), ("revision", JSON(revision)),
        ]
        if let matches { members.append(("matches", .array(matches))) }
        if let pending { members.append(("pending", .array(pending))) }
        return .object(members)
    }
}
