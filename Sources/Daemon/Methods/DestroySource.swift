import DataSources
import JSONKit
import WireSchema
import JSONRPC

/// `destroySource`: destroys a source (and, with cascade, the sources built on it).
enum DestroySourceRequest: AnsweredAtOnce {
    static let name = "destroySource"
    typealias Params = DestroySourceParams
    typealias Result = DestroyedSources

    static func handle(_ daemon: Daemon, _ params: DestroySourceParams) throws -> DestroyedSources {
        // The rows of each source destroyed, the ones built on it with `cascade` included.
        let rowsBefore = Dictionary(daemon.registry.all.map { ($0.name, $0.totalObjectCount) }, uniquingKeysWith: +)
        let names = try daemon.registry.destroy(params.name, cascade: params.cascade)
        let rows = names.reduce(0) { $0.addingReportingOverflow(rowsBefore[$1] ?? 0).partialValue }
        // malloc keeps what the rows took for reuse: without this, a source of millions of rows
        // destroyed would leave the daemon at its peak size for good.
        if rows >= Daemon.largeSourceRows { daemon.freedLargeMessage = true }
        for name in names {
            daemon.refreshTimers.disarm(name)
            daemon.debounceTimers.disarm(name)
            daemon.sourceParams[name] = nil
        }
        return DestroyedSources(names: names)
    }

    static let summary = "destroys a source (and, with cascade, the sources built on it)"
    static let resultSchema: Schema = .object(
        [
            "destroyed": .array(of: .string)
        ],
        required: ["destroyed"])
}

struct DestroySourceParams: DeclaredParams {
    var name: String
    var cascade: Bool
    static let declaration = ObjectDeclaration(
        .required("name", .string, doc: "the source to destroy"),
        .flag("cascade", default: false, doc: "also destroy the sources built on it; else a source with dependents is refused"),
        as: DestroySourceParams.init)
}

struct DestroyedSources: WireEncodable {
    let names: [String]
    var json: JSON { ["destroyed": .array(names.map { JSON($0) })] }
}
