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

    /// A POST's body as its fixture route matches it (`requestBody`): what the replayed daemon
    /// sends, built from the `send` step that configured it (rendered as `bodyConfigurations`
    /// says) and the page values of responses served as recorded. So members named like
    /// secrets are redacted at any depth, and every known secret (a header's token in GraphQL
    /// `variables`) is scrubbed from strings; page values (cursors) stay as they are, and
    /// origins too, as in a response body.
    func renderRequestBody(_ value: JSON) -> JSON {
        render(redactingSecretMembers(value), role: .responseBody)
    }

    /// Members whose bodies a source sends (`request.body`, `graphql.variables`).
    private static let bodyConfigurations: [String: String] = ["request": "body", "graphql": "variables"]

    /// `value` with the values of members named like secrets (`Secrets.isSecret(name:)`:
    /// the daemon's rule, `api_key` too, and `--redact` names) as the placeholder, at any depth.
    func redactingSecretMembers(_ value: JSON) -> JSON {
        value.replacingMembers(named: { secrets.isSecret(name: $0) }, with: JSON(Secrets.placeholder))
    }

    /// The values of members named like secrets in a request body, at any depth: learned, so
    /// they are scrubbed wherever else they appear.
    static func secretMemberValues(_ value: JSON, isSecret: (String) -> Bool) -> [String] {
        if let elements = value.arrayValue { return elements.flatMap { secretMemberValues($0, isSecret: isSecret) } }
        return (value.objectMembers ?? []).flatMap { name, member in
            isSecret(name) ? [member.stringValue ?? member.text()] : secretMemberValues(member, isSecret: isSecret)
        }
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
                // A client's body configuration, redacted by name as its route's body is: the
                // replayed daemon then sends the body the route holds (a short or non-string
                // secret, which scrubbing by value misses, included).
                if role == .sent, !keepOrigins, let inner = Rendering.bodyConfigurations[key], let body = member[inner] {
                    found += Rendering.secretMemberValues(body, isSecret: secrets.isSecret(name:))
                    let redacted = member.setting(inner, to: redactingSecretMembers(body))
                    members.append((key, walk(redacted, role: role, keepOrigins: keepOrigins, found: &found)))
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
