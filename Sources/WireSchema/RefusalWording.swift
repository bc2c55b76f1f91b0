import DataSources
import JSONKit

extension FieldError {
    /// The model's refusal as a client reads it: the parameter, what it accepts, what it got,
    /// a sentence naming them, and what the client may want next (the existing names, the
    /// valid range's size).
    package init(_ refusal: Refusal) {
        let maximum = DataSource.maximumObjectsPerRead
        switch refusal {
        case .noSuchSource(let argument, let name, let existing):
            self.init(
                field: argument, expected: "the name of an existing source", got: JSON(name),
                message: "\"\(argument)\": no source named \"\(name)\"\(existing.isEmpty ? " (there are none)" : "")",
                context: [("name", JSON(name)), ("sources", .array(existing.prefix(100).map { JSON($0) }))])
        case .nameTaken(let name):
            self.init(
                field: "name", expected: "a name no other source has", got: JSON(name),
                message: "a source named \"\(name)\" already exists", context: [("name", JSON(name))])
        case .listedTwice(let argument, let name):
            self.init(
                field: argument, expected: "a source not listed before", got: JSON(name),
                message: "\"\(argument)\": \"\(name)\" is listed twice")
        case .kindNotServed(let kind, let served):
            let kinds = served.joined(separator: ", ")
            self.init(
                field: "kind", expected: "one of \(kinds)", got: JSON(kind),
                message: "\"kind\" must be one of \(kinds): this registry serves no remote sources")
        case .builtOnItself(let argument, let name):
            self.init(
                field: argument, expected: "the name of another, existing source", got: JSON(name),
                message: "\"\(argument)\": a source cannot be built on itself (\"\(name)\" → \"\(name)\" is a cycle)",
                context: [("cycle", [JSON(name), JSON(name)])])
        case .stillUsed(let name, let parents):
            self.init(
                field: "name", expected: "a source no other source is built on (or \"cascade\": true)", got: JSON(name),
                message:
                    "\"\(name)\" is used by \(parents.map { "\"\($0)\"" }.joined(separator: ", ")); destroy them first or pass \"cascade\": true",
                context: [("parents", .array(parents.map { JSON($0) }))])
        case .noSuchSection(let section, let numberOfSections):
            self.init(
                field: "section", expected: "a section in \(Self.rangeText(numberOfSections))", got: JSON(section),
                message: "\"section\" \(section) is out of range: \(Self.rangeText(numberOfSections))",
                context: [("numberOfSections", JSON(numberOfSections))])
        case .indexPathSectionOutOfRange(let indexPath, let numberOfSections):
            self.init(
                field: "indexPath", expected: "a section in \(Self.rangeText(numberOfSections))", got: Self.json(indexPath),
                message:
                    "\"indexPath\" \(indexPath): section \(indexPath.section) is out of range: \(Self.rangeText(numberOfSections))",
                context: [("numberOfSections", JSON(numberOfSections))])
        case .indexPathItemOutOfRange(let indexPath, let count):
            self.init(
                field: "indexPath", expected: "an item in \(Self.rangeText(count)) for section \(indexPath.section)",
                got: Self.json(indexPath),
                message:
                    "\"indexPath\" \(indexPath): item \(indexPath.item) is out of range for section \(indexPath.section): \(Self.rangeText(count))",
                context: [("numberOfObjects", JSON(count))])
        case .outOfRange(let argument, let value, let valid, let after, let numberOfObjects):
            let range = "\(valid.lowerBound)...\(valid.upperBound)" + (after.map { " (from index \($0))" } ?? "")
            self.init(
                field: argument, expected: "an integer in \(range)", got: JSON(value),
                message: "\"\(argument)\" \(value) is out of range: \(range)", context: [("numberOfObjects", JSON(numberOfObjects))])
        case .readTooLong(let count, let rows, let numberOfObjects):
            self.init(
                field: "count", expected: "at most \(maximum) rows a read", got: count.map { JSON($0) } ?? JSON("nothing"),
                message: "\"count\" would read \(rows) rows, more than the \(maximum) a read answers: read a slice at a time",
                context: [("maxObjectsPerRead", JSON(maximum)), ("numberOfObjects", JSON(numberOfObjects))])
        case .tooLongToReadWhole(let source, let rows):
            self.init(
                field: "source", expected: "a source of at most \(maximum) rows to read whole", got: JSON(source),
                message:
                    "\"\(source)\" has \(rows) rows, more than the \(maximum) a read answers: read it a slice at a time with objectsInSection",
                context: [("maxObjectsPerRead", JSON(maximum)), ("numberOfObjects", JSON(rows))])
        case .noObjectWithIdentity(let position, let identity):
            self.init(
                field: "objects[\(position)]", expected: "an object with the identity of an object in the source", got: identity,
                message: "no object with the identity of objects[\(position)] (\(identity))", context: [("identity", identity)])
        case .noActions(let source, let kind):
            self.init(
                field: "source", expected: "a remote or paginated source", got: JSON(source),
                message: "\"\(source)\" is a \(kind) source: actions are a remote or paginated source's")
        case .noSuchAction(let name, let declared):
            let names = declared.map { "\"\($0)\"" }.joined(separator: ", ")
            self.init(
                field: "action", expected: declared.isEmpty ? "an action the source declares (it declares none)" : "one of \(names)",
                got: JSON(name),
                message: "\"action\": the source declares no action \"\(name)\"\(declared.isEmpty ? " (it declares none)" : "")",
                context: [("actions", .array(declared.map { JSON($0) }))])
        case .identityNeeded(let action, let optimistic):
            self.init(
                field: "identity", expected: "the identity of the row to change", got: "nothing",
                message: "\"identity\" is required: \"\(action)\" is an \(optimistic) of a row")
        case .noRowWithIdentity(let identity):
            self.init(
                field: "identity", expected: "the identity of a row of the source", got: identity,
                message: "\"identity\": no row of the source has the identity \(identity.text().prefix(200))")
        case .valueNotDeclared(let name, let declared):
            self.init(
                field: "values.\(name)",
                expected: declared.isEmpty ? "no values (the action declares none)" : "one of \(declared.joined(separator: ", "))",
                got: JSON(name), message: "\"values.\(name)\": the action declares no such value")
        case .valueRefused(let name, let type, let got):
            self.init(
                field: "values.\(name)", expected: "a value of type \(type)", got: got.map { JSON($0.kind.rawValue) } ?? "nothing",
                message: got == nil
                    ? "\"values.\(name)\" is required: a value of type \(type)" : "\"values.\(name)\" must be of type \(type)")
        case .tooManyPendingMutations(let limit):
            self.init(
                field: "source", expected: "a source with fewer than \(limit) pending mutations", got: JSON(limit),
                message: "the source holds \(limit) pending mutations, as many as it may: wait for some to settle")
        case .noSuchMutation(let id, let pending):
            self.init(
                field: "mutation", expected: "the ID of a pending mutation of the source", got: JSON(id),
                message: "\"mutation\": the source has no pending mutation \"\(id)\"",
                context: [("pending", .array(pending.prefix(100).map { JSON($0) }))])
        case .mutationInFlight(let id):
            self.init(
                field: "mutation", expected: "a mutation not yet sent, or queued", got: JSON(id),
                message: "\"mutation\" \"\(id)\" is in flight: its answer settles it (didSettleMutation)")
        }
    }

    private static func rangeText(_ count: Int) -> String { count == 0 ? "none (it is empty)" : "0..<\(count)" }

    private static func json(_ indexPath: IndexPath) -> JSON { [JSON(indexPath.section), JSON(indexPath.item)] }
}
