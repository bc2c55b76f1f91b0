import JSONKit

/// Rows that stand for something other than data, rendered by clients like any other
/// object: `{"$placeholder": "loading"}`, `{"$placeholder": "noResults"}`,
/// `{"$placeholder": "error", "error": {...}}`, and a counted list's rows not loaded yet:
/// `{"$placeholder": "unloaded", "index": N}`.
package enum Placeholder: String, Sendable, CaseIterable {
    case loading, noResults, error, unloaded

    package static let key = "$placeholder"

    package static let loadingRow: JSON = [key: "loading"]
    package static let noResultsRow: JSON = [key: "noResults"]

    /// What a counted list keeps for every row not loaded: one value shared by all of them (a
    /// million unloaded rows are a million references to it, not a million objects), given
    /// its `index` only when read (`unloadedRow(index:)`).
    package static let unloadedStored: JSON = [key: "unloaded"]

    /// The unloaded row at `index`, as clients read it.
    package static func unloadedRow(index: Int) -> JSON { [key: "unloaded", "index": JSON(index)] }

    /// An error row, given the error as the wire shows it.
    package static func errorRow(_ error: JSON) -> JSON { [key: "error", "error": error] }

    /// The kind of placeholder a row is, or nil for data. Asked of every row of a list that
    /// is sectioned, so the member is read in place.
    package static func kind(of row: JSON) -> Placeholder? {
        guard row.isObject else { return nil }
        var kind: Placeholder?
        row.withScalar(at: keyPath) { value in
            if case .string(let name) = value { kind = Placeholder(rawValue: String(decoding: name, as: UTF8.self)) }
        }
        return kind
    }

    private static let keyPath = JSONKeyPath(key)
    /// `key`, for asking whether a row has it (every row hashed for its identity is asked).
    static let memberName = JSON.MemberName(key)
}

/// Which placeholders a remote source stores: the seed's bit values (`2` loading, `4` no
/// results, `8` errors; default `6`) or the same as an array of names.
package struct PlaceholderStorageOptions: OptionSet, Sendable {
    package let rawValue: Int
    package init(rawValue: Int) { self.rawValue = rawValue }

    package static let loading = PlaceholderStorageOptions(rawValue: 1 << 1)
    package static let noResults = PlaceholderStorageOptions(rawValue: 1 << 2)
    package static let errors = PlaceholderStorageOptions(rawValue: 1 << 3)
    package static let standard: PlaceholderStorageOptions = [.loading, .noResults]

    /// The options by their names on the wire, in the order the wire lists them.
    package static let names: [(String, PlaceholderStorageOptions)] = [
        ("loading", .loading), ("noResults", .noResults), ("errors", .errors),
    ]
}
