import DataSources
import JSONKit
import WireSchema

/// `actions: {NAME: {method, path, body?, headers?, values?, optimistic, result?,
/// invalidates?, idempotencyKey?}}` of remote and paginated sources.
enum ActionDecoding {
    /// The most actions a source declares, and the most values an action does.
    static let maximumActions = 100
    static let maximumValues = 100

    static let methodShape = enumeration(Action.Method.self, expected: "one of \"POST\", \"PUT\", \"PATCH\", \"DELETE\"")
    static let optimisticShape = enumeration(Action.Optimistic.self, expected: "one of \"update\", \"remove\", \"insert\", \"none\"")
    static let valueKindShape = enumeration(
        Action.Value.Kind.self, expected: "one of \"string\", \"integer\", \"number\", \"boolean\", \"object\", \"array\"")

    static func enumeration<Case: RawRepresentable & CaseIterable>(_: Case.Type, expected: String) -> Shape<Case>
    where Case.RawValue == String {
        Shape.nonEmptyString.documented(.oneOfValues(Case.allCases.map { JSON($0.rawValue) })).map {
            name, value, field throws(FieldError) -> Case in
            guard let known = Case(rawValue: name) else { throw FieldError(field: field, expected: expected, got: value) }
            return known
        }
    }

    static let templateShape = Shape<Template>(
        .string.described("a template: {keyPath} is the row's value, {$values.NAME} a value of the call"),
        expected: "a string with {keyPath} and {$values.NAME} placeholders"
    ) { value, field throws(FieldError) in
        let text = try Decode.string(value, field)
        do throws(TemplateProblem) {
            return try Template(text)
        } catch {
            throw FieldError(
                field: field, expected: "a string with {keyPath} and {$values.NAME} placeholders", got: value,
                message: "\"\(field)\" is not a template: \(error.reason)")
        }
    }

    static let resultShape = Shape<Action.Result>(
        .string(minLength: 1).described("a key path to the server's version of the object, \"response\" for the whole body, or \"none\""),
        expected: "a key path, \"response\" or \"none\""
    ) { value, field throws(FieldError) in
        switch try Decode.string(value, field, nonEmpty: true) {
        case "response": return .response
        case "none": return .none
        case let path: return .keyPath(JSONKeyPath(path))
        }
    }

    static let value = ObjectDeclaration(
        .required("type", valueKindShape), .flag("required", default: false, doc: "whether the call must pass it"),
        as: { Action.Value(kind: $0, isRequired: $1) })

    static let valuesShape = Shape<[(name: String, value: Action.Value)]>(
        .map(of: value.schema()), expected: "an object of value declarations {type, required?}"
    ) { json, field throws(FieldError) in
        guard let members = json.objectMembers else { throw .mistyped(field, expected: "an object", got: json) }
        if members.count > maximumValues {
            throw FieldError(field: field, expected: "at most \(maximumValues) values", got: JSON(members.count))
        }
        var values: [(name: String, value: Action.Value)] = []
        for (name, declaration) in members {
            values.append((name, try value.shape(expected: "an object {type, required?}").decode(declaration, "\(field).\(name)")))
        }
        return values
    }

    static let headersShape = Shape<[(name: String, value: Template)]>(
        .map(of: templateShape.schema), expected: "an object of header names to templates"
    ) { json, field throws(FieldError) in
        guard let members = json.objectMembers else { throw .mistyped(field, expected: "an object", got: json) }
        var headers: [(name: String, value: Template)] = []
        for (name, template) in members {
            guard !name.isEmpty, name.utf8.allSatisfy({ $0 > 32 && $0 < 127 && $0 != UInt8(ascii: ":") }) else {
                throw FieldError(field: "\(field).\(name)", expected: "a header name (visible ASCII, no colon)", got: JSON(name))
            }
            headers.append((name, try templateShape.decode(template, "\(field).\(name)")))
        }
        return headers
    }

    /// An action without its name (the member it is under).
    struct Declared: Sendable {
        var method: Action.Method?
        var path: Template?
        var graphql: Action.GraphQL?
        var body: JSON?
        var headers: [(name: String, value: Template)]
        var values: [(name: String, value: Action.Value)]
        var optimistic: Action.Optimistic
        var result: Action.Result
        var invalidates: [String]
        var idempotencyKey: Bool
    }

    static let graphqlAction = ObjectDeclaration(
        .required("query", Shape.nonEmptyString, doc: "the GraphQL mutation"),
        .optional(
            "variables", RequestBodyDecoding.objectShape, default: JSON.object([]), defaultText: "{}",
            doc: "a JSON template, as body is"),
        as: { Action.GraphQL(query: $0, variables: $1) })

    static let action = ObjectDeclaration(
        .optional("method", methodShape, doc: "required unless graphql is given"),
        .optional(
            "path", templateShape,
            doc: "required unless graphql is given: against the source's baseURL; {keyPath} is the row's value, percent-encoded"),
        .optional("body", Shape.anything, doc: "a JSON template: a string that is exactly one placeholder becomes its value, typed"),
        .optional("headers", headersShape, doc: "sent with the source's own headers; templates allowed"),
        .optional("values", valuesShape, doc: "what the call passes ($values.NAME), declared"),
        .required("optimistic", optimisticShape, doc: "the change shown before the server answers"),
        .optional("result", resultShape, doc: "default \"response\": where the server's version of the object is in its answer"),
        .optional(
            "invalidates", Shape.array(of: .nonEmptyString, expected: "an array of source names"),
            doc: "sources revalidated once the server accepts"),
        .flag("idempotencyKey", default: true, doc: "each request carries an Idempotency-Key header, the same on every retry"),
        .optional(
            "graphql", graphqlAction.shape(expected: "an object {query, variables?}"),
            doc: "a GraphQL mutation, POSTed to the source's URL as {query, variables}, in place of method, path and body"),
        as: { method, path, body, headers, values, optimistic, result, invalidates, idempotencyKey, graphql in
            Declared(
                method: method, path: path, graphql: graphql, body: body, headers: headers ?? [], values: values ?? [],
                optimistic: optimistic, result: result ?? .response, invalidates: invalidates ?? [], idempotencyKey: idempotencyKey)
        })

    static let actionsShape = Shape<[Action]>(
        .map(of: action.schema()).described("each action by its name (performAction's action)"),
        expected: "an object of actions by name"
    ) { json, field throws(FieldError) in
        guard let members = json.objectMembers else { throw .mistyped(field, expected: "an object of actions by name", got: json) }
        if members.count > maximumActions {
            throw FieldError(field: field, expected: "at most \(maximumActions) actions", got: JSON(members.count))
        }
        var actions: [Action] = []
        for (name, member) in members {
            let at = "\(field).\(name)"
            guard !name.isEmpty else { throw FieldError(field: at, expected: "a non-empty action name", got: JSON(name)) }
            let declared = try action.shape(expected: "an action {method, path, optimistic, ...}").decode(member, at)
            let (method, path) = try requestOf(declared, at: at)
            let made = Action(
                name: name, method: method, path: path, body: declared.body, headers: declared.headers,
                values: declared.values, optimistic: declared.optimistic, result: declared.result, invalidates: declared.invalidates,
                sendsIdempotencyKey: declared.idempotencyKey, graphql: declared.graphql)
            try check(made, at: at)
            actions.append(made)
        }
        return actions
    }

    /// `actions` checked as `actionsShape` checks it, kept as sent (`updateSource` puts it in
    /// the source's params, which are then read whole).
    static let actionsValue = Shape<JSON>(actionsShape.schema, expected: actionsShape.expected) { value, field throws(FieldError) in
        _ = try actionsShape.decode(value, field)
        return value
    }

    /// A request's method and path: given, or for a GraphQL mutation a POST to the source's URL.
    private static func requestOf(_ declared: Declared, at field: String) throws(FieldError) -> (Action.Method, Template) {
        guard declared.graphql != nil else {
            guard let method = declared.method else {
                throw .missing("\(field).method", expected: "one of \"POST\", \"PUT\", \"PATCH\", \"DELETE\"")
            }
            guard let path = declared.path else {
                throw .missing("\(field).path", expected: "a string with {keyPath} and {$values.NAME} placeholders")
            }
            return (method, path)
        }
        for (member, given) in [("method", declared.method != nil), ("path", declared.path != nil), ("body", declared.body != nil)]
        where given {
            throw FieldError(
                field: "\(field).\(member)", expected: "no \(member) with graphql (the mutation is POSTed to the source's URL)",
                got: JSON(member),
                message:
                    "\"\(field).\(member)\" cannot go with \"graphql\": the mutation is POSTed to the source's URL as {query, variables}")
        }
        do throws(TemplateProblem) {
            return (.post, try Template(""))
        } catch {
            preconditionFailure("an empty template is a template")
        }
    }

    /// What a declaration alone can tell is wrong: a `$values` name not declared, a body on
    /// DELETE, a `{keyPath}` where no row is (an insert).
    static func check(_ action: Action, at field: String) throws(FieldError) {
        let declared = Set(action.values.map(\.name))
        for case .value(let name) in action.placeholders where !declared.contains(name) {
            throw FieldError(
                field: "\(field).values", expected: "a declaration of every value the templates use", got: JSON(name),
                message: "\"\(field)\" uses {$values.\(name)}, which its \"values\" do not declare")
        }
        if action.method == .delete, action.body != nil {
            throw FieldError(
                field: "\(field).body", expected: "no body with DELETE", got: "DELETE",
                message: "\"\(field).body\": a DELETE is sent without a body")
        }
        if action.optimistic == .insert, let path = action.placeholders.first(where: { if case .row = $0 { true } else { false } }) {
            throw FieldError(
                field: "\(field).path", expected: "no {keyPath} in an insert (it has no row yet)", got: JSON("\(path)"),
                message: "\"\(field)\": an insert has no row for {keyPath}; pass what it needs as $values")
        }
    }

    /// The `{keyPath}`s of `actions` that the source's rows cannot have: with a mapping, a
    /// row has only the mapping's fields.
    static func checkRowPaths(_ actions: [Action], mapping: ObjectMapping?, field: String) throws(FieldError) {
        guard let mapping else { return }
        let names = Set(mapping.fields.map(\.name))
        for action in actions {
            for case .row(let path) in action.placeholders where !names.contains(path.components.first ?? "") {
                throw FieldError(
                    field: "\(field).\(action.name)", expected: "{keyPath}s among the mapping's fields", got: JSON(path.description),
                    message:
                        "\"\(field).\(action.name)\" uses {\(path)}, which no mapped row has (the mapping makes \(names.sorted().joined(separator: ", ")))"
                )
            }
        }
    }
}
