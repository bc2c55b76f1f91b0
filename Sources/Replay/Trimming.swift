import JSONKit
import TranscriptFormat

/// Makes a recorded session small enough for a bug report: cut after the step that matters,
/// then drop the fixture routes the shortened session never requests.
package enum Trimming {
    package struct TrimError: Error, CustomStringConvertible {
        package let description: String
    }

    /// Steps that only listen: they belong to the step before them (its answers, events and requests).
    private static let listeningSteps: Set = ["expect", "expectUnordered", "expectExit", "comment", "requested"]

    /// The transcript's steps through `last` (0-based, as `replay` numbers them), and the
    /// expectations right after it: what the daemon said before the client's next move.
    package static func cut(_ document: JSON, throughStep last: Int) throws(TrimError) -> JSON {
        guard let steps = document["steps"]?.arrayValue else { throw TrimError(description: "the transcript has no \"steps\" array") }
        guard steps.indices.contains(last) else {
            throw TrimError(description: "step \(last) is not in the transcript (steps 0...\(steps.count - 1))")
        }
        var end = last + 1
        while end < steps.count, let kind = steps[end].objectKeys.first, listeningSteps.contains(kind) { end += 1 }
        return document.setting("steps", to: .array(steps[..<end]))
    }

    /// GET requests with these targets (`/items?page=2`), for `droppingUnusedFixtures`.
    package static func droppingUnusedFixtures(_ document: JSON, requested targets: [String]) -> JSON {
        droppingUnusedFixtures(document, requested: targets.map { FixtureServer.ReceivedRequest(target: $0, headers: []) })
    }

    /// The transcript without the fixture routes it never uses. A held route (a recorded
    /// exchange) is used when a step names it (`requested`, `release`); any other route when
    /// a request in `requested` (in the order the fixture server received them while the
    /// transcript was replayed) was answered by it: matched as the server matches, method
    /// and body included.
    package static func droppingUnusedFixtures(_ document: JSON, requested: [FixtureServer.ReceivedRequest]) -> JSON {
        guard let routes = document["fixtures"]?.arrayValue else { return document }
        // The transcript was just replayed, so its routes parse; if not, none is dropped.
        guard let parsed = try? FixtureRoute.routes(parsing: .array(routes)) else { return document }
        let steps = document["steps"]?.arrayValue ?? []
        let namedHolds = Set(steps.compactMap { $0["requested"]?.stringValue ?? $0["release"]?.stringValue })
        var uses = [Int](repeating: 0, count: routes.count)
        for request in requested {
            let (path, query) = FixtureServer.split(request.target)
            let body = request.body.isEmpty ? nil : try? JSON.parse(request.body)
            let match = parsed.indices.first { index in
                if let times = parsed[index].times, uses[index] >= times { return false }
                return parsed[index].matches(method: request.method, path: path, query: query, body: body)
            }
            if let match { uses[match] += 1 }
        }
        let kept = routes.indices.filter { index in
            if let hold = routes[index]["hold"]?.stringValue { return namedHolds.contains(hold) }
            return uses[index] > 0
        }
        return document.setting("fixtures", to: .array(kept.map { routes[$0] }))
    }

    /// A transcript laid out as the recorder writes it: one route and one step per line.
    package static func text(_ document: JSON) -> String {
        var lines = ["{"]
        let members = document.objectMembers ?? []
        for (index, (key, value)) in members.enumerated() {
            let comma = index == members.count - 1 ? "" : ","
            if (key == "steps" || key == "fixtures"), let elements = value.arrayValue, !elements.isEmpty {
                lines.append("  \(JSON(key).text()): [")
                lines += elements.enumerated().map { "    \($1.text())\($0 == elements.count - 1 ? "" : ",")" }
                lines.append("  ]\(comma)")
            } else {
                lines.append("  \(JSON(key).text()): \(value.text())\(comma)")
            }
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }
}
