import JSONKit

/// Rows that stand for something other than data, rendered by clients like any other
/// object: `{"$placeholder": "loading"}`, `{"$placeholder": "noResults"}`,
/// `{"$placeholder": "error", "error": {...}}`.
public enum Placeholder: String, Sendable, CaseIterable {
    case loading, noResults, error

    public static let key = "$placeholder"

    public static let loadingRow: JSON = [key: "loading"]
    public static let noResultsRow: JSON = [key: "noResults"]

    public static func errorRow(_ error: JSON) -> JSON { [key: "error", "error": error] }

    /// The kind of placeholder a row is, or nil for data.
    public static func kind(of row: JSON) -> Placeholder? {
        guard row.isObject, let name = row[key]?.stringValue else { return nil }
        return Placeholder(rawValue: name)
    }
}

/// Which placeholders a remote source stores: the seed's bit values (`2` loading, `4` no
/// results, `8` errors; default `6`) or the same as an array of names.
public struct PlaceholderStorageOptions: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let loading = PlaceholderStorageOptions(rawValue: 1 << 1)
    public static let noResults = PlaceholderStorageOptions(rawValue: 1 << 2)
    public static let errors = PlaceholderStorageOptions(rawValue: 1 << 3)
    public static let standard: PlaceholderStorageOptions = [.loading, .noResults]

    static let names: [(String, PlaceholderStorageOptions)] = [("loading", .loading), ("noResults", .noResults), ("errors", .errors)]

    /// Reads `2|4|8` bits or `["loading", "noResults", "errors"]`; nil with what was expected otherwise.
    public init?(json: JSON) {
        if let bits = json.integerValue {
            guard bits >= 0, bits & ~0b1110 == 0 else { return nil }
            self.init(rawValue: bits)
            return
        }
        guard let names = json.arrayValue else { return nil }
        var options: PlaceholderStorageOptions = []
        for name in names {
            guard let text = name.stringValue, let option = Self.names.first(where: { $0.0 == text })?.1 else { return nil }
            options.insert(option)
        }
        self = options
    }

    public static let expected = "an integer made of the bits 2 (loading), 4 (noResults) and 8 (errors), or an array of \"loading\", \"noResults\", \"errors\""

    public var json: JSON { .array(Self.names.filter { contains($0.1) }.map { JSON($0.0) }) }
}
