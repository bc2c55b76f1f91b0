import JSONKit

/// What makes a repeated GET conditional: the validators a response gave (`ETag`,
/// `Last-Modified`). A server that finds them current answers `304 Not Modified`, with no body.
public struct Validators: Sendable, Equatable {
    public var etag: String?
    public var lastModified: String?

    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// A response's validators; a `304` may send only some (the others stay as they were).
    init(headers response: DecodedResponse, keeping previous: Validators? = nil) {
        etag = response.headerValues("etag").first ?? previous?.etag
        lastModified = response.headerValues("last-modified").first ?? previous?.lastModified
    }

    public var isEmpty: Bool { etag == nil && lastModified == nil }

    /// `If-None-Match` and `If-Modified-Since`; HTTP has servers prefer the first.
    var conditionalHeaders: [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = []
        if let etag { headers.append(("If-None-Match", etag)) }
        if let lastModified { headers.append(("If-Modified-Since", lastModified)) }
        return headers
    }
}

/// A remote or paginated source's loaded pages as the persisted cache keeps them: each page's
/// request, validators and rows, and the paging state needed to go on from the last one.
struct CachedPages {
    struct Page {
        var request: PaginatedDataSource.PageRequest
        var validators: Validators
        /// The rows kept from the page (later duplicates already dropped).
        var rows: [JSON]
        /// How many objects the server sent (duplicates included).
        var received: Int
        /// The request after this page, as its response said; nil: none.
        var next: PaginatedDataSource.PageRequest?
        var metadata: PageMetadata
    }

    var pages: [Page]
    var currentPage: Int
    var duplicatesDropped: Int

    /// Bumped when the layout changes: an entry of another format is ignored (and replaced).
    static let format = 1

    func encoded() -> [UInt8] {
        let pages = self.pages.map { page -> JSON in
            var members: [(String, JSON)] = [("request", page.request.json), ("received", JSON(page.received)),
                                             ("rows", .array(page.rows)), ("metadata", page.metadata.json)]
            if let next = page.next { members.append(("next", next.json)) }
            if let etag = page.validators.etag { members.append(("etag", JSON(etag))) }
            if let lastModified = page.validators.lastModified { members.append(("lastModified", JSON(lastModified))) }
            return .object(members)
        }
        let document: JSON = ["format": JSON(Self.format), "pages": .array(pages), "currentPage": JSON(currentPage),
                              "duplicatesDropped": JSON(duplicatesDropped)]
        return document.encoded()
    }

    /// Nil for bytes this version did not write (another format, a damaged payload).
    init?(payload: [UInt8]) {
        guard let document = try? JSON.parse(payload), document["format"]?.integerValue == Self.format,
              let pages = document["pages"]?.arrayValue, !pages.isEmpty,
              let currentPage = document["currentPage"]?.integerValue,
              let duplicatesDropped = document["duplicatesDropped"]?.integerValue else { return nil }
        var decoded: [Page] = []
        for page in pages {
            guard let request = page["request"].flatMap(PaginatedDataSource.PageRequest.init(json:)),
                  let rows = page["rows"]?.arrayValue, let received = page["received"]?.integerValue, received >= 0,
                  let metadata = page["metadata"].flatMap(PageMetadata.init(json:)) else { return nil }
            let next = page["next"].flatMap(PaginatedDataSource.PageRequest.init(json:))
            if page["next"] != nil, next == nil { return nil }
            decoded.append(Page(request: request,
                                validators: Validators(etag: page["etag"]?.stringValue, lastModified: page["lastModified"]?.stringValue),
                                rows: rows.map { $0.packed() }, received: received, next: next, metadata: metadata))
        }
        self.init(pages: decoded, currentPage: currentPage, duplicatesDropped: duplicatesDropped)
    }

    init(pages: [Page], currentPage: Int, duplicatesDropped: Int) {
        self.pages = pages
        self.currentPage = currentPage
        self.duplicatesDropped = duplicatesDropped
    }
}

extension PaginatedDataSource.PageRequest {
    var json: JSON {
        switch self {
        case .first: ["first": true]
        case .page(let number): ["page": JSON(number)]
        case .offset(let offset): ["offset": JSON(offset)]
        case .cursor(let cursor): ["cursor": JSON(cursor)]
        case .url(let url): ["url": JSON(url)]
        }
    }

    init?(json: JSON) {
        if json["first"]?.boolValue == true {
            self = .first
        } else if let number = json["page"]?.integerValue {
            self = .page(number)
        } else if let offset = json["offset"]?.integerValue, offset >= 0 {
            self = .offset(offset)
        } else if let cursor = json["cursor"]?.stringValue {
            self = .cursor(cursor)
        } else if let url = json["url"]?.stringValue {
            self = .url(url)
        } else {
            return nil
        }
    }
}

extension PageMetadata {
    var json: JSON {
        var members: [(String, JSON)] = []
        if let pageSize { members.append(("pageSize", JSON(pageSize))) }
        if let currentPage { members.append(("currentPage", JSON(currentPage))) }
        if let numberOfPages { members.append(("numberOfPages", JSON(numberOfPages))) }
        if let numberOfTotalResults { members.append(("numberOfTotalResults", JSON(numberOfTotalResults))) }
        return .object(members)
    }

    init?(json: JSON) {
        guard json.isObject else { return nil }
        self.init(pageSize: json["pageSize"]?.integerValue, currentPage: json["currentPage"]?.integerValue,
                  numberOfPages: json["numberOfPages"]?.integerValue, numberOfTotalResults: json["numberOfTotalResults"]?.integerValue)
    }
}
