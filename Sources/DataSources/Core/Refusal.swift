import JSONKit

/// Why the model refuses what it was asked, in the model's terms: which argument, what was
/// given and what exists. The model knows nothing of the wire; the daemon's wire layer words
/// each refusal as a `-32602` with `{field, expected, got}` (`FieldError(_: Refusal)`).
///
/// `argument` is the name the caller gave the value under (`source`, `sources[2]`, `index`):
/// the model is called with values a request named, and the refusal names them back.
package enum Refusal: Error, Sendable, Equatable {
    /// No source has this name; `existing` is every name, oldest first.
    case noSuchSource(argument: String, name: String, existing: [String])
    /// A source of this name exists already.
    case nameTaken(String)
    /// A composed source lists one child twice.
    case listedTwice(argument: String, name: String)
    /// The registry cannot make sources of this kind (no HTTP in this registry).
    case kindNotServed(kind: String, served: [String])
    /// A composed source names itself as its child.
    case builtOnItself(argument: String, name: String)
    /// A source others are built on, destroyed without cascading.
    case stillUsed(name: String, by: [String])
    /// A section that does not exist.
    case noSuchSection(Int, numberOfSections: Int)
    /// An index path whose section does not exist.
    case indexPathSectionOutOfRange(IndexPath, numberOfSections: Int)
    /// An index path whose item does not exist in its section.
    case indexPathItemOutOfRange(IndexPath, numberOfObjects: Int)
    /// A position or a count outside `valid`; `after` is the index a count is counted from.
    case outOfRange(argument: String, value: Int, valid: ClosedRange<Int>, after: Int?, numberOfObjects: Int)
    /// A read of more rows than one answer holds.
    case readTooLong(count: Int?, rows: Int, numberOfObjects: Int)
    /// `allObjects` of a source longer than one answer holds.
    case tooLongToReadWhole(source: String, rows: Int)
    /// An update whose object at `position` has no counterpart in the source.
    case noObjectWithIdentity(position: Int, identity: JSON)
    /// `performAction` on a source of a kind that has no actions (a local or composed one).
    case noActions(source: String, kind: String)
    /// An action the source does not declare; `declared` is every one it does.
    case noSuchAction(name: String, declared: [String])
    /// An action that changes a row, called without `identity`.
    case identityNeeded(action: String, optimistic: String)
    /// No row shown has this identity.
    case noRowWithIdentity(JSON)
    /// A value the action does not declare.
    case valueNotDeclared(name: String, declared: [String])
    /// A declared value missing (`got` nil) or of another type.
    case valueRefused(name: String, type: String, got: JSON?)
    /// As many mutations are pending on the source as it holds.
    case tooManyPendingMutations(limit: Int)
    /// No pending mutation of the source has this ID.
    case noSuchMutation(id: String, pending: [String])
    /// The mutation's request is on its way: only the server's answer settles it.
    case mutationInFlight(id: String)
}
