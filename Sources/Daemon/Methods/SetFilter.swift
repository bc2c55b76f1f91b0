import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `setFilter`: changes a filtered source's filter or match query, with one didChange.
enum SetFilterRequest: AnsweredAtOnce {
    static let name = "setFilter"
    typealias Params = SetFilterParams
    typealias Result = SourceDescription

    static func handle(_ daemon: Daemon, _ params: SetFilterParams) throws -> SourceDescription {
        let filtered = try daemon.source(params.source, as: FilteredDataSource.self, "a filtered source", for: " to set its filter")
        if let fill = params.fill { filtered.setFill(fill) }
        filtered.setFilter(params.filter ?? filtered.filter, match: params.match ?? filtered.match)
        return filtered.describe()
    }

    static let summary = "changes a filtered source's filter or match query, with one didChange"
    static let resultSchema: Schema = .ref("SourceDescription")
}

/// `setFilter`: `{source, filter?, match?, fill?}`; each absent keeps what the source has,
/// null removes it.
struct SetFilterParams: DeclaredParams {
    var source: String
    /// nil: unchanged; `.some(nil)`: removed.
    var filter: Predicate??
    var match: MatchQuery??
    var fill: Int??
    static let declaration = ObjectDeclaration(
        .source(), .replacing("filter", FilterDecoding.predicateShape, doc: "the new filter; null removes it, absent keeps it"),
        .replacing("match", FilterDecoding.matchShape, doc: "the new match query; null removes it, absent keeps it"),
        .replacing("fill", FilterDecoding.fillShape, doc: "the new fill; null removes it, absent keeps it"),
        as: SetFilterParams.init)
}
