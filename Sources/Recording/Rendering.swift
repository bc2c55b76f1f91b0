import DataSources
import JSONKit

/// Turns what the session said into what the recording holds: secrets out, the APIs' origins
/// as `${fixtures}`, and in expectations the matching forms for what legitimately differs
/// between runs.
///
/// Row values (`objects`, `object`, `values`, a failed response's `body`) keep their URLs'
/// origins: they come from response bodies, which replay serves as recorded, so the replayed
/// daemon says them unchanged. Everything the daemon derives from a source's configuration
/// (error URLs, `describeSource`) names the fixture server instead.
struct Rendering {
    var secrets: Secrets
    var urls = URLRewriting()

    enum Role {
        /// A client message: sent as written.
        case sent
        /// A daemon message: a pattern (`$` strings escaped, matching forms applied).
        case expected
        /// A response body served by the fixture server: values only, origins kept.
        case responseBody
    }

    /// Members holding rows: their strings come from clients or response bodies.
    private static let rowMembers: Set = ["objects", "object", "values"]
    /// Members of a fetch error that quote the server's response.
    private static let quotedMembers: Set = ["body", "serverMessage"]
    private static let fetchErrorKinds = Set(FetchError.Kind.allCases.map(\.rawValue))

    /// Remembers the secrets found in `value`; true when there were new ones (what was
    /// rendered before must be rendered again).
    mutating func learn(from value: JSON) -> Bool {
        var found: [String] = []
        _ = walk(value, role: .sent, keepOrigins: false, found: &found)
        return found.reduce(false) { secrets.learn($1) || $0 }
    }

    mutating func learn(fromText text: String) -> Bool {
        var found: [String] = []
        _ = string(text, role: .sent, keepOrigins: false, found: &found)
        return found.reduce(false) { secrets.learn($1) || $0 }
    }

    func render(_ value: JSON, role: Role) -> JSON {
        var found: [String] = []
        return walk(value, role: role, keepOrigins: role == .responseBody, found: &found)
    }

    /// A text body (not JSON, or JSON whose exact bytes matter) as the fixture serves it.
    func renderBodyText(_ text: String) -> String {
        var found: [String] = []
        return string(text, role: .responseBody, keepOrigins: true, found: &found)
    }

    private func walk(_ value: JSON, role: Role, keepOrigins: Bool, found: inout [String]) -> JSON {
        switch value.kind {
        case .string:
            return JSON(string(value.stringValue ?? "", role: role, keepOrigins: keepOrigins, found: &found))
        case .array:
            return .array((value.arrayValue ?? []).map { walk($0, role: role, keepOrigins: keepOrigins, found: &found) })
        case .object:
            let isPlaceholderRow = value["$placeholder"] != nil
            let isFetchError =
                value["kind"]?.stringValue.map(Rendering.fetchErrorKinds.contains) == true && value["message"]?.stringValue != nil
            var members: [(String, JSON)] = []
            for (key, member) in value.objectMembers ?? [] {
                if (key == "headers" || key == "queryParameters"), let named = member.objectMembers {
                    members.append(
                        (
                            key,
                            .object(
                                named.map { name, setting in
                                    guard secrets.isSecret(name: name) else {
                                        return (name, walk(setting, role: role, keepOrigins: keepOrigins, found: &found))
                                    }
                                    found.append(setting.stringValue ?? setting.text())
                                    return (name, JSON(Secrets.placeholder))
                                })
                        ))
                    continue
                }
                var keep = keepOrigins
                if Rendering.rowMembers.contains(key) { keep = true }
                if isPlaceholderRow, key == "error" { keep = role == .responseBody }
                if isFetchError, Rendering.quotedMembers.contains(key) { keep = true }
                members.append((key, walk(member, role: role, keepOrigins: keep, found: &found)))
            }
            let rendered = JSON.object(members)
            return role == .expected && isFetchError ? Rendering.fetchErrorPattern(rendered) : rendered
        default:
            return value
        }
    }

    private func string(_ text: String, role: Role, keepOrigins: Bool, found: inout [String]) -> String {
        // Escaped before `${fixtures}` is put in, so the replayer still substitutes it.
        var result = role == .expected && text.hasPrefix("$") ? "$" + text : text
        let rewritten = urls.rewrite(result, replacingOrigins: !keepOrigins, isSecretName: secrets.isSecret(name:))
        found += rewritten.secrets
        result = secrets.scrubbed(rewritten.text)
        return result
    }

    /// A fetch error as a pattern. Transport failures, timeouts and bodies over the limit are
    /// reproduced by the fixture server (a reset connection, a response held past the
    /// deadline, a body one byte too large), not with the same words; a `Retry-After` given
    /// as a date is a number of seconds from now.
    private static func fetchErrorPattern(_ error: JSON) -> JSON {
        var pattern = error
        switch error["kind"]?.stringValue {
        case "transport":
            var members: [(String, JSON)] = [("$partial", true), ("kind", "transport")]
            if let url = error["url"] { members.append(("url", url)) }
            return .object(members)
        case "timeout", "tooLarge":
            // The replayed body is just over the limit, not the recorded size.
            pattern = pattern.setting("message", to: "$string")
        default:
            break
        }
        if pattern["retryAfterSeconds"] != nil { pattern = pattern.setting("retryAfterSeconds", to: "$number") }
        return pattern
    }
}
