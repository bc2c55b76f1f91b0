import JSONKit

/// One of a source's `actions`: a request that changes a row on the server, and the change
/// shown at once while it is in flight.
package struct Action: Sendable {
    package enum Method: String, Sendable, CaseIterable {
        case post = "POST", put = "PUT", patch = "PATCH", delete = "DELETE"
    }

    /// The change shown before the server answers.
    package enum Optimistic: String, Sendable, CaseIterable {
        /// The row takes the call's values merged in.
        case update
        case remove
        /// A new row made of the call's values, with a temporary identity.
        case insert
        case none

        /// Whether the call names a row (`identity`).
        package var needsRow: Bool { self == .update || self == .remove }
    }

    /// Where the server's version of the object is in its answer.
    package enum Result: Sendable, Equatable {
        case keyPath(JSONKeyPath)
        /// The whole body.
        case response
        /// The answer is not read: the optimistic row stays.
        case none
    }

    /// A value the call passes (`$values.NAME`), declared.
    package struct Value: Sendable {
        package enum Kind: String, Sendable, CaseIterable {
            case string, integer, number, boolean, object, array

            package func accepts(_ value: JSON) -> Bool {
                switch self {
                case .string: value.stringValue != nil
                case .integer: value.integerValue != nil
                case .number: value.isNumber
                case .boolean: value.boolValue != nil
                case .object: value.isObject
                case .array: value.arrayValue != nil
                }
            }
        }

        package let kind: Kind
        package let isRequired: Bool

        package init(kind: Kind, isRequired: Bool) {
            self.kind = kind
            self.isRequired = isRequired
        }
    }

    /// A GraphQL mutation (on a GraphQL source): POSTed to the source's URL as
    /// `{"query", "variables"}`, the variables a JSON template as a body is.
    package struct GraphQL: Sendable {
        package let query: String
        package let variables: JSON

        package init(query: String, variables: JSON) {
            self.query = query
            self.variables = variables
        }
    }

    package let name: String
    package let method: Method
    package let path: Template
    /// A JSON template: a string that is exactly one placeholder becomes that value with its
    /// JSON type; other strings have their placeholders written in.
    package let body: JSON?
    package let headers: [(name: String, value: Template)]
    package let values: [(name: String, value: Value)]
    package let optimistic: Optimistic
    package let result: Result
    /// Sources revalidated once the server accepts the action.
    package let invalidates: [String]
    /// Whether each request carries an `Idempotency-Key` header (fixed when the call is made).
    package let sendsIdempotencyKey: Bool
    /// Set for a GraphQL mutation, which has no path or body of its own.
    package let graphql: GraphQL?

    package init(
        name: String, method: Method, path: Template, body: JSON?, headers: [(name: String, value: Template)],
        values: [(name: String, value: Value)], optimistic: Optimistic, result: Result, invalidates: [String],
        sendsIdempotencyKey: Bool, graphql: GraphQL? = nil
    ) {
        self.name = name
        self.method = method
        self.path = path
        self.body = body
        self.headers = headers
        self.values = values
        self.optimistic = optimistic
        self.result = result
        self.invalidates = invalidates
        self.sendsIdempotencyKey = sendsIdempotencyKey
        self.graphql = graphql
    }

    /// Every placeholder of the path, the body and the headers.
    package var placeholders: [Template.Placeholder] {
        path.placeholders + headers.flatMap(\.value.placeholders) + (body.map(Template.placeholders(inBody:)) ?? [])
            + (graphql.map { Template.placeholders(inBody: $0.variables) } ?? [])
    }

    /// Why `values` (the call's, an object) do not fit the declaration: a value not
    /// declared, a required one missing, or one of another type.
    package func refusal(of values: JSON) -> Refusal? {
        for (name, _) in values.objectMembers ?? [] where !self.values.contains(where: { $0.name == name }) {
            return .valueNotDeclared(name: name, declared: self.values.map(\.name))
        }
        for (name, declaration) in self.values {
            guard let value = values[name], !value.isNull else {
                if declaration.isRequired { return .valueRefused(name: name, type: declaration.kind.rawValue, got: nil) }
                continue
            }
            if !declaration.kind.accepts(value) { return .valueRefused(name: name, type: declaration.kind.rawValue, got: value) }
        }
        return nil
    }
}

/// A string with `{keyPath}` (a value of the row) and `{$values.NAME}` (a value of the call)
/// placeholders.
package struct Template: Sendable {
    package enum Placeholder: Sendable, Equatable {
        case row(JSONKeyPath)
        case value(String)
    }

    enum Piece: Sendable {
        case text(String)
        case placeholder(Placeholder)
    }

    let pieces: [Piece]
    package let text: String

    /// Why `text` is not a template: a brace not closed, or closed without one opened, or an
    /// empty placeholder.
    package init(_ text: String) throws(TemplateProblem) {
        self.text = text
        var pieces: [Piece] = []
        var literal = ""
        var rest = Substring(text)
        while let open = rest.firstIndex(where: { $0 == "{" || $0 == "}" }) {
            guard rest[open] == "{" else { throw TemplateProblem(text: text, reason: "a \"}\" closes no placeholder") }
            literal += rest[..<open]
            let afterOpen = rest.index(after: open)
            guard let close = rest[afterOpen...].firstIndex(of: "}") else {
                throw TemplateProblem(text: text, reason: "a \"{\" is not closed")
            }
            let name = rest[afterOpen..<close]
            if name.isEmpty || name.contains("{") { throw TemplateProblem(text: text, reason: "\"{\(name)}\" is not a placeholder") }
            if !literal.isEmpty { pieces.append(.text(literal)) }
            literal = ""
            if name.hasPrefix("$values.") {
                let valueName = String(name.dropFirst("$values.".count))
                guard !valueName.isEmpty else { throw TemplateProblem(text: text, reason: "\"{$values.}\" names no value") }
                pieces.append(.placeholder(.value(valueName)))
            } else if name.hasPrefix("$") {
                throw TemplateProblem(text: text, reason: "\"{\(name)}\": the placeholders are {keyPath} and {$values.NAME}")
            } else {
                pieces.append(.placeholder(.row(JSONKeyPath(String(name)))))
            }
            rest = rest[rest.index(after: close)...]
        }
        literal += rest
        if !literal.isEmpty { pieces.append(.text(literal)) }
        self.pieces = pieces
    }

    package var placeholders: [Placeholder] {
        pieces.compactMap {
            if case .placeholder(let placeholder) = $0 { return placeholder }
            return nil
        }
    }

    /// The one placeholder the whole text is, if it is one.
    var wholePlaceholder: Placeholder? {
        guard pieces.count == 1, case .placeholder(let placeholder) = pieces[0] else { return nil }
        return placeholder
    }

    /// The text with each placeholder's value written in (a string as it is, another value as
    /// JSON text), each passed through `escape`; the first placeholder with no value makes it nil.
    func rendered(row: JSON?, values: JSON, escape: (String) -> String = { $0 }) -> Swift.Result<String, Missing> {
        var text = ""
        for piece in pieces {
            switch piece {
            case .text(let literal): text += literal
            case .placeholder(let placeholder):
                guard let value = Template.value(of: placeholder, row: row, values: values) else { return .failure(Missing(placeholder)) }
                text += escape(value.stringValue ?? value.text())
            }
        }
        return .success(text)
    }

    static func value(of placeholder: Placeholder, row: JSON?, values: JSON) -> JSON? {
        switch placeholder {
        case .row(let path): row?.value(at: path).flatMap { $0.isNull ? nil : $0 }
        case .value(let name): values[name].flatMap { $0.isNull ? nil : $0 }
        }
    }

    /// Every placeholder in the strings of a body template.
    static func placeholders(inBody body: JSON) -> [Placeholder] {
        if let text = body.stringValue { return (try? Template(text))?.placeholders ?? [] }
        if let elements = body.arrayValue { return elements.flatMap(placeholders(inBody:)) }
        return (body.objectMembers ?? []).flatMap { placeholders(inBody: $0.value) }
    }

    /// A body template with its placeholders filled: a string that is one placeholder becomes
    /// the value itself (a number stays a number); an optional value the call left out makes
    /// such a member absent.
    static func renderedBody(_ body: JSON, row: JSON?, values: JSON) -> Swift.Result<JSON, Missing> {
        if let text = body.stringValue {
            guard let template = try? Template(text) else { return .success(body) }
            if let whole = template.wholePlaceholder {
                guard let value = value(of: whole, row: row, values: values) else { return .failure(Missing(whole)) }
                return .success(value)
            }
            return template.rendered(row: row, values: values).map { JSON($0) }
        }
        if let elements = body.arrayValue {
            var rendered: [JSON] = []
            for element in elements {
                switch renderedBody(element, row: row, values: values) {
                case .success(let value): rendered.append(value)
                case .failure(let missing): return .failure(missing)
                }
            }
            return .success(.array(rendered))
        }
        guard let members = body.objectMembers else { return .success(body) }
        var rendered: [(String, JSON)] = []
        for (name, member) in members {
            switch renderedBody(member, row: row, values: values) {
            case .success(let value): rendered.append((name, value))
            // An optional value left out: the member goes, so a PATCH changes only what was given.
            case .failure(let missing) where missing.isValue: continue
            case .failure(let missing): return .failure(missing)
            }
        }
        return .success(.object(rendered))
    }

    /// A placeholder that had no value.
    struct Missing: Error {
        let placeholder: Placeholder
        init(_ placeholder: Placeholder) { self.placeholder = placeholder }
        var isValue: Bool {
            if case .value = placeholder { return true }
            return false
        }
        var words: String {
            switch placeholder {
            case .row(let path): "the row has no value at \"\(path)\""
            case .value(let name): "the call passes no value \"\(name)\""
            }
        }
    }
}

package struct TemplateProblem: Error, Sendable {
    package let text: String
    package let reason: String
}
