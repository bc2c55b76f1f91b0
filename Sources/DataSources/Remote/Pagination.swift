import JSONKit

/// How a paginated source asks for pages and reads where it is.
public struct PaginatorConfiguration: Sendable {
    /// Names in the response metadata (and, unless `requestKeys` says otherwise, in the query).
    public struct Keys: Sendable {
        public var pageSize = "page_size"
        public var currentPage = "page"
        public var numberOfPages = "number_of_pages"
        public var numberOfTotalObjects = "total_count"

        public init() {}
    }

    public var keys = Keys()
    /// Query parameter names for the page number and page size.
    public var pageQueryKey: String
    public var pageSizeQueryKey: String
    /// Sent under `pageSizeQueryKey` when set (the original never sent it).
    public var pageSize: Int?
    public var firstPage = 1
    /// Leaves room to count pages up without overflow (the wire layer enforces it).
    public static let maximumFirstPage = 1 << 31
    public static let maximumPageSize = 1 << 31
    /// Where the metadata sits in the response; nil for the top level.
    public var metadataKeyPath: KeyPath?

    public init(keys: Keys = Keys(), pageQueryKey: String? = nil, pageSizeQueryKey: String? = nil, pageSize: Int? = nil,
                firstPage: Int = 1, metadataKeyPath: KeyPath? = nil) {
        self.keys = keys
        self.pageQueryKey = pageQueryKey ?? keys.currentPage
        self.pageSizeQueryKey = pageSizeQueryKey ?? keys.pageSize
        self.pageSize = pageSize
        self.firstPage = firstPage
        self.metadataKeyPath = metadataKeyPath
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
        /// Counts from the server: a negative one is ignored, as if absent.
        func integer(_ key: String) -> Int? {
            guard let value = container?[key] else { return nil }
            let number = value.integerValue ?? value.stringValue.flatMap { Int($0) }
            return number.flatMap { $0 >= 0 ? $0 : nil }
        }
        return PageMetadata(pageSize: integer(keys.pageSize), currentPage: integer(keys.currentPage),
                            numberOfPages: integer(keys.numberOfPages), numberOfTotalResults: integer(keys.numberOfTotalObjects))
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
        if received == 0 || page == Int.max { return false }
        if let numberOfPages, page - firstPage >= numberOfPages - 1 { return false }
        if let numberOfTotalResults, loaded >= numberOfTotalResults { return false }
        return true
    }
}
