import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `willDisplayObjectAtIndexPath`: a row is shown: near either end of a paginated source's loaded rows the
/// page next to them loads; on a counted list's far unloaded row, that row's page (a jump).
enum WillDisplayObjectAtIndexPathRequest: AnsweredAtOnce {
    static let name = "willDisplayObjectAtIndexPath"
    static let section = "loading"
    typealias Params = DisplayParams
    typealias Result = DisplayResult

    static func handle(_ daemon: Daemon, _ params: DisplayParams) throws -> DisplayResult {
        let source = try daemon.source(params.source)
        try source.validate(params.indexPath)
        if let paginated = source as? PaginatedDataSource, let refusal = paginated.displayRefusal(at: params.indexPath) {
            throw FieldError(
                field: "indexPath", expected: "a loaded row, or an unloaded one within jumpThreshold rows of them",
                got: [JSON(params.indexPath.section), JSON(params.indexPath.item)], message: refusal)
        }
        let cycles = source.cyclesStarted
        source.willDisplayObject(at: params.indexPath)
        return DisplayResult(fetchStarted: source.cyclesStarted != cycles && source.isFetching)
    }

    static let summary =
        "a row is shown: near either end of a paginated source's loaded rows the page next to them loads; on a counted list's far unloaded row, that row's page (a jump)"
    static let resultSchema: Schema = .object(
        [
            "fetchStarted": .boolean
        ],
        required: ["fetchStarted"])
}

/// `willDisplayObjectAtIndexPath`: no revision to ask for.
struct DisplayParams: DeclaredParams {
    var source: String
    var indexPath: IndexPath
    static let declaration = ObjectDeclaration(.source(), .indexPath(doc: "the row shown"), as: DisplayParams.init)
}

struct DisplayResult: WireEncodable {
    let fetchStarted: Bool
    var json: JSON { ["fetchStarted": JSON(fetchStarted)] }
}
