import JSONKit

/// How a paginated source asks for pages and reads where it is.
public struct PaginatorConfiguration: Sendable {
    /// Names in the response metadata (and, unless `requestKeys` says otherwise, in the query).
    public struct Keys: Sendable {
        public var pageSize = "page_size"
        public var currentPage = "page"
        public var numberOfPages = "number_of_pages"
        public var numberOfTotalObjects = "total_count"
    }

    public var keys = Keys()
    /// Query parameter names for the page number and page size.
    public var pageQueryKey: String
    public var pageSizeQueryKey: String
    /// Sent under `pageSizeQueryKey` when set (the original never sent it).
    public var pageSize: Int?
    public var firstPage = 1
    /// Where the metadata sits in the response; nil for the top level.
    public var metadataKeyPath: KeyPath?

    public init(params: JSON) throws(ConfigurationError) {
        if let given = params["paginatorKeys"] {
            guard given.isObject else {
                throw ConfigurationError(field: "paginatorKeys", expected: "an object {pageSize?, currentPage?, numberOfPages?, numberOfTotalObjects?}", got: given.kindDescription)
            }
            keys.pageSize = try Self.name(given, "pageSize", default: keys.pageSize, in: "paginatorKeys")
            keys.currentPage = try Self.name(given, "currentPage", default: keys.currentPage, in: "paginatorKeys")
            keys.numberOfPages = try Self.name(given, "numberOfPages", default: keys.numberOfPages, in: "paginatorKeys")
            keys.numberOfTotalObjects = try Self.name(given, "numberOfTotalObjects", default: keys.numberOfTotalObjects, in: "paginatorKeys")
        }
        pageQueryKey = keys.currentPage
        pageSizeQueryKey = keys.pageSize
        if let given = params["requestKeys"] {
            guard given.isObject else {
                throw ConfigurationError(field: "requestKeys", expected: "an object {currentPage?, pageSize?}", got: given.kindDescription)
            }
            pageQueryKey = try Self.name(given, "currentPage", default: pageQueryKey, in: "requestKeys")
            pageSizeQueryKey = try Self.name(given, "pageSize", default: pageSizeQueryKey, in: "requestKeys")
        }
        pageSize = try RemoteConfiguration.positiveInteger(params["pageSize"], field: "pageSize")
        if let given = params["firstPage"], !given.isNull {
            guard let number = given.integerValue, number >= 0 else {
                throw ConfigurationError(field: "firstPage", expected: "a non-negative integer", got: given.description)
            }
            firstPage = number
        }
        if let given = params["metadataKeyPath"], !given.isNull {
            guard let text = given.stringValue else {
                throw ConfigurationError(field: "metadataKeyPath", expected: "a dot-separated key path string", got: given.kindDescription)
            }
            metadataKeyPath = text.isEmpty ? nil : KeyPath(text)
        }
    }

    private static func name(_ object: JSON, _ key: String, default value: String, in parent: String) throws(ConfigurationError) -> String {
        guard let member = object[key], !member.isNull else { return value }
        guard let text = member.stringValue, !text.isEmpty else {
            throw ConfigurationError(field: "\(parent).\(key)", expected: "a non-empty string", got: member.kindDescription)
        }
        return text
    }

    /// The query parameters that ask for `page`.
    public func queryParameters(forPage page: Int) -> [(name: String, value: String)] {
        var parameters = [(name: pageQueryKey, value: String(page))]
        if let pageSize { parameters.append((pageSizeQueryKey, String(pageSize))) }
        return parameters
    }

    /// The page metadata in a response document, where present.
    public func metadata(in document: JSON?) -> PageMetadata {
        guard let document else { return PageMetadata() }
        let container: JSON?
        if let metadataKeyPath { container = document.value(at: metadataKeyPath) } else { container = document }
        func integer(_ key: String) -> Int? {
            guard let value = container?[key] else { return nil }
            if let integer = value.integerValue { return integer }
            if let text = value.stringValue { return Int(text) }
            return nil
        }
        return PageMetadata(pageSize: integer(keys.pageSize), currentPage: integer(keys.currentPage),
                            numberOfPages: integer(keys.numberOfPages), numberOfTotalResults: integer(keys.numberOfTotalObjects))
    }

    public var json: JSON {
        var members: [(String, JSON)] = [
            ("paginatorKeys", ["pageSize": JSON(keys.pageSize), "currentPage": JSON(keys.currentPage),
                               "numberOfPages": JSON(keys.numberOfPages), "numberOfTotalObjects": JSON(keys.numberOfTotalObjects)]),
            ("requestKeys", ["currentPage": JSON(pageQueryKey), "pageSize": JSON(pageSizeQueryKey)]),
            ("firstPage", JSON(firstPage)),
        ]
        if let metadataKeyPath { members.append(("metadataKeyPath", JSON(metadataKeyPath.description))) }
        return .object(members)
    }
}

/// What a response says about where the pagination stands.
public struct PageMetadata: Sendable, Equatable {
    public var pageSize: Int?
    public var currentPage: Int?
    public var numberOfPages: Int?
    public var numberOfTotalResults: Int?

    public init(pageSize: Int? = nil, currentPage: Int? = nil, numberOfPages: Int? = nil, numberOfTotalResults: Int? = nil) {
        self.pageSize = pageSize
        self.currentPage = currentPage
        self.numberOfPages = numberOfPages
        self.numberOfTotalResults = numberOfTotalResults
    }

    /// Whether another page may hold more objects after `page` brought `received` objects
    /// and `loaded` are loaded in all. An empty page ends it (the original's only rule);
    /// so does the metadata, without that wasted request.
    public func hasMorePages(after page: Int, firstPage: Int, received: Int, loaded: Int) -> Bool {
        if received == 0 { return false }
        if let numberOfPages, page - firstPage + 1 >= numberOfPages { return false }
        if let numberOfTotalResults, loaded >= numberOfTotalResults { return false }
        return true
    }
}
