import JSONKit
#if canImport(Glibc)
import Glibc
#endif

/// What makes a repeated GET conditional: the validators a response gave (`ETag`,
/// `Last-Modified`). A server that finds them current answers `304 Not Modified`, with no body.
package struct Validators: Sendable, Equatable {
    package var etag: String?
    package var lastModified: String?

    package init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// A response's validators; a `304` may send only some (the others stay as they were).
    init(headers response: DecodedResponse, keeping previous: Validators? = nil) {
        etag = response.headerValues("etag").first ?? previous?.etag
        lastModified = response.headerValues("last-modified").first ?? previous?.lastModified
    }

    package var isEmpty: Bool { etag == nil && lastModified == nil }

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
///
/// The file is input (another process or a person can edit it, a disk can flip a byte), so
/// an entry is read as a response is: `decode` checks its shape and range-checks every
/// number, and the source then checks that it is a run it could have made itself
/// (`RemoteCollection.cacheProblem(in:)`). Stored, an entry is a head and its pages, each
/// stored on its own (saving the page after the last writes that page and the head, not the
/// list), each a header line then a document packed as the daemon holds rows (JSONKit's
/// PackedPortable.swift: the layout of Packed.swift, keys inline), so that reopening a list
/// copies its rows rather than parsing and packing them:
///
///     datasourced-pages 4 fnv1a64w:<16 hex digits>\n<{"pages": N, "currentPage": N, "duplicatesDropped": N}>
///     datasourced-page 4 fnv1a64w:<16 hex digits>\n<{"request": ..., "rows": [...], ...}>   (one per page)
///
/// Each checksum (FNV-1a, 64 bits, by 8-byte words over the packed bytes as stored) finds
/// accidental damage: any one byte changed always changes it, and other damage goes
/// unnoticed with a chance of one in 2^64. It is no seal: whoever can write the file can write a matching checksum.
/// What such an entry can do is bounded by the checks after it (every length and offset of
/// the packed bytes range-checked, no credentials read from it, a next URL stays at the
/// source's origin, every number fits, as many pages as the head says).
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
        /// The rows' identity hashes, once the source reading the entry has worked them out
        /// (`RemoteCollection.cachedPages()`), for its checks, its duplicates and its change
        /// set alike. Never stored: hashes are keyed anew in every process.
        var hashes: [Int] = []

        /// The page's bytes as stored: its header line and packed document.
        func encoded() -> [UInt8] {
            var members: [(String, JSON)] = [
                ("request", request.withoutCredentials.json), ("received", JSON(received)), ("rows", .array(rows)),
                ("metadata", metadata.json),
            ]
            if let next { members.append(("next", next.withoutCredentials.json)) }
            if let etag = validators.etag { members.append(("etag", JSON(etag))) }
            if let lastModified = validators.lastModified { members.append(("lastModified", JSON(lastModified))) }
            return CachedPages.sealed(JSON.packedObject(members).portablePacked(), prefix: CachedPages.pageHeaderPrefix)
        }
    }

    var pages: [Page]
    var currentPage: Int
    var duplicatesDropped: Int

    /// Bumped when the layout changes: an entry of another format is dropped (and replaced).
    /// 1: JSON alone, with URLs as requested (credentials included); 2: the header line;
    /// 3: the document packed, not JSON text; 4: a head and pages stored one by one.
    static let format = 4
    static let headerPrefix = "datasourced-pages "
    static let pageHeaderPrefix = "datasourced-page "
    /// The checksum by words (`FNV1a64`); format 2's was "fnv1a64:", byte by byte.
    static let checksumPrefix = "fnv1a64w:"
    /// The deepest a stored document may nest whatever the limits say: jansson's parser
    /// refused deeper JSON when entries were JSON, and reading is recursive.
    static let deepestDocument = 2048

    /// Why an entry cannot be used, for the warning that drops it.
    struct Problem: Error, Equatable {
        let reason: String
    }

    /// The entry to store, made page by page as the store writes it; the first `unchanged`
    /// pages are as the entry stored holds them.
    func entryPages(unchanged: Int = 0) -> EntryPages {
        EntryPages(count: pages.count, unchanged: unchanged, head: head, page: { page(at: $0) })
    }

    /// The head's bytes: its header line (format, checksum), then the packed document of how
    /// many pages follow and where the run stands.
    func head() -> [UInt8] {
        Self.head(pageCount: pages.count, currentPage: currentPage, duplicatesDropped: duplicatesDropped)
    }

    static func head(pageCount: Int, currentPage: Int, duplicatesDropped: Int) -> [UInt8] {
        let document = JSON.packedObject([
            ("pages", JSON(pageCount)), ("currentPage", JSON(currentPage)), ("duplicatesDropped", JSON(duplicatesDropped)),
        ])
        return sealed(document.portablePacked())
    }

    /// Page `index`'s bytes. URLs are written without credentials: a restored request takes
    /// them from the source's configuration.
    func page(at index: Int) -> [UInt8] { pages[index].encoded() }

    /// The entry as a store holds it: its head and every page.
    func stored(at storedAt: Double) -> StoredPages {
        StoredPages(payload: head(), pages: pages.map { $0.encoded() }, storedAt: storedAt)
    }

    /// `body` after the header line of this format with its checksum: a head's, or with
    /// `pageHeaderPrefix` a page's.
    static func sealed(_ body: [UInt8], prefix: String = headerPrefix) -> [UInt8] {
        Array("\(prefix)\(format) \(checksumPrefix)\(hexadecimal(FNV1a64.hash(body)))\n".utf8) + body
    }

    /// The limits a response to the source is held to; an entry is held to the same.
    struct Limits {
        /// `limits.maxDepth`: how deep a response may nest.
        var maximumDepth: Int
        /// `limits.maxBodyBytes`: no page can have held more objects than its body had bytes.
        var maximumObjectsPerPage: Int

        init(_ configuration: RemoteConfiguration) {
            maximumDepth = configuration.maximumDepth
            maximumObjectsPerPage = configuration.maximumBodySize
        }
    }

    /// The entry `stored`, or why it cannot be used: another format, a checksum that does not
    /// match, packed bytes that do not hold together (what is wrong, and where), pages other
    /// than the head says, or a member of the wrong kind or out of range (named, with what
    /// was expected).
    static func decode(_ stored: StoredPages, limits: Limits) -> Result<CachedPages, Problem> {
        do throws(Problem) {
            let head = try decodeHead(stored.payload, limits: limits).get()
            guard head.pageCount == stored.pages.count else {
                throw Problem(reason: "its head says \(head.pageCount) pages, and \(stored.pages.count) are stored")
            }
            var decoded: [Page] = []
            decoded.reserveCapacity(head.pageCount)
            for (index, bytes) in stored.pages.enumerated() {
                decoded.append(try decodePage(bytes, index: index, limits: limits).get())
            }
            return .success(CachedPages(pages: decoded, currentPage: head.currentPage, duplicatesDropped: head.duplicatesDropped))
        } catch {
            return .failure(error)
        }
    }

    /// What an entry's head says: how many pages follow, and where the run stands.
    struct Head: Equatable {
        var pageCount: Int
        var currentPage: Int
        var duplicatesDropped: Int
    }

    /// The head `bytes` (`head()`), or why it cannot be used.
    static func decodeHead(_ bytes: [UInt8], limits: Limits) -> Result<Head, Problem> {
        do throws(Problem) {
            let head = try document(of: bytes, prefix: headerPrefix, depthLimit: 2, field: nil, limits: limits)
            guard head.isObject else { throw Problem(reason: "its head is not a JSON object") }
            guard let count = head["pages"]?.integerValue, count > 0 else {
                throw Self.expected("pages", "a positive integer", head["pages"])
            }
            guard let currentPage = head["currentPage"]?.integerValue else {
                throw Self.expected("currentPage", "an integer", head["currentPage"])
            }
            guard let duplicatesDropped = head["duplicatesDropped"]?.integerValue, duplicatesDropped >= 0 else {
                throw Self.expected("duplicatesDropped", "a non-negative integer", head["duplicatesDropped"])
            }
            return .success(Head(pageCount: count, currentPage: currentPage, duplicatesDropped: duplicatesDropped))
        } catch {
            return .failure(error)
        }
    }

    /// Page `index` of an entry read alone (`PageCacheStore.readPage`), or why it cannot be used.
    static func decodePage(_ bytes: [UInt8], index: Int, limits: Limits) -> Result<Page, Problem> {
        let field = "pages[\(index)]"
        let depthLimit = min(limits.maximumDepth.addingClamped(1), deepestDocument)
        do throws(Problem) {
            let json = try document(of: bytes, prefix: pageHeaderPrefix, depthLimit: depthLimit, field: field, limits: limits)
            return .success(try page(json, field: field, limits: limits))
        } catch {
            return .failure(error)
        }
    }

    /// The packed document of a head or of a page (`field`), its header and checksum checked.
    /// A row nests in a page's `{"rows": [` (two levels); in a bare-array response, in one.
    private static func document(
        of bytes: [UInt8], prefix: String, depthLimit: Int, field: String?, limits: Limits
    ) throws(Problem) -> JSON {
        func problem(_ reason: String) -> Problem { Problem(reason: field.map { "\($0): \(reason)" } ?? reason) }
        let body: ArraySlice<UInt8>
        switch checkedBody(of: bytes, prefix: prefix) {
        case .success(let checked): body = checked
        case .failure(let failure): throw problem(failure.reason)
        }
        let read = body.withUnsafeBytes { bytes in
            Result { () throws(PortablePackedError) in try JSON.portablePacked(bytes, maximumDepth: depthLimit) }
        }
        switch read {
        case .success(let value):
            return value
        case .failure(let error) where error.reason.hasPrefix("it nests deeper"):
            throw problem("it nests deeper than a response may (\(limits.maximumDepth) levels; at byte \(error.offset))")
        case .failure(let error):
            throw problem("its packed document is malformed: \(error)")
        }
    }

    /// The packed document after a header line of this format whose checksum matches it.
    private static func checkedBody(of payload: [UInt8], prefix headerPrefix: String) -> Result<ArraySlice<UInt8>, Problem> {
        let prefix = Array(headerPrefix.utf8)
        guard payload.starts(with: prefix) else {
            // Format 1 was JSON alone.
            return .failure(
                Problem(
                    reason: payload.first == UInt8(ascii: "{")
                        ? "it is in format 1; this version reads format \(format)"
                        : "it does not start with the header \"\(headerPrefix)\""))
        }
        // The header is short: a long search would be a read of a whole damaged entry.
        let searched = payload.prefix(128)
        guard let newline = searched.firstIndex(of: UInt8(ascii: "\n")) else {
            return .failure(Problem(reason: "its header line does not end"))
        }
        let fields = payload[prefix.count..<newline].split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        let version = fields.first.map { String(decoding: $0, as: UTF8.self) } ?? ""
        guard version == String(format) else {
            return .failure(Problem(reason: "it is in format \"\(version.prefix(20))\"; this version reads format \(format)"))
        }
        let checksumField = fields.count == 2 ? String(decoding: fields[1], as: UTF8.self) : ""
        let digits = checksumField.dropFirst(checksumPrefix.count)
        guard checksumField.hasPrefix(checksumPrefix), digits.count == 16, digits.allSatisfy(\.isHexDigit),
            let stored = UInt64(digits, radix: 16)
        else {
            return .failure(Problem(reason: "its header has no checksum \"\(checksumPrefix)\" and 16 hexadecimal digits"))
        }
        let body = payload[(newline + 1)...]
        let computed = FNV1a64.hash(body)
        guard computed == stored else {
            return .failure(
                Problem(reason: "its checksum does not match (stored \(hexadecimal(stored)), computed \(hexadecimal(computed)))"))
        }
        return .success(body)
    }

    static func hexadecimal(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    private static func page(_ page: JSON, field: String, limits: Limits) throws(Problem) -> Page {
        guard page.isObject else { throw expected(field, "an object", page) }
        guard let requestJSON = page["request"], let request = PaginatedDataSource.PageRequest(cached: requestJSON) else {
            throw expected("\(field).request", PaginatedDataSource.PageRequest.cachedExpectation, page["request"])
        }
        guard let rows = page["rows"]?.arrayValue, rows.count <= limits.maximumObjectsPerPage else {
            throw expected("\(field).rows", "an array of at most \(limits.maximumObjectsPerPage) rows (limits.maxBodyBytes)", page["rows"])
        }
        // What the server sent, duplicates included: at least the rows kept, at most what a body could hold.
        let receivedRange = rows.count...limits.maximumObjectsPerPage
        guard let received = page["received"]?.integerValue, receivedRange.contains(received) else {
            throw expected("\(field).received", "an integer in \(receivedRange.lowerBound)...\(receivedRange.upperBound)", page["received"])
        }
        guard let metadataJSON = page["metadata"] else { throw expected("\(field).metadata", "an object", nil) }
        let metadata = try PageMetadata(cached: metadataJSON, field: "\(field).metadata")
        var next: PaginatedDataSource.PageRequest?
        if let nextJSON = page["next"] {
            guard let request = PaginatedDataSource.PageRequest(cached: nextJSON), request != .first else {
                throw expected("\(field).next", PaginatedDataSource.PageRequest.cachedExpectation, nextJSON)
            }
            next = request
        }
        var validators = Validators()
        for (name, keyPath) in [("etag", \Validators.etag), ("lastModified", \Validators.lastModified)] {
            guard let value = page[name] else { continue }
            guard let text = value.stringValue, Validators.isHeaderValue(text) else {
                throw expected(
                    "\(field).\(name)", "a header value (at most \(Validators.maximumLength) bytes, no control characters)", value)
            }
            validators[keyPath: keyPath] = text
        }
        return Page(
            request: request, validators: validators, rows: rows.map { $0.packed() }, received: received, next: next, metadata: metadata)
    }

    /// "`field` must be `expectation`, got ...", with the value cut short: an entry may be large.
    static func expected(_ field: String, _ expectation: String, _ got: JSON?) -> Problem {
        let shown = got.map { String($0.description.prefix(80)) } ?? "nothing"
        return Problem(reason: "\(field) must be \(expectation), got \(shown)")
    }

    init(pages: [Page], currentPage: Int, duplicatesDropped: Int) {
        self.pages = pages
        self.currentPage = currentPage
        self.duplicatesDropped = duplicatesDropped
    }
}

/// FNV-1a, 64 bits (Fowler, Noll, Vo; draft-eastlake-fnv), taken a little-endian 8-byte
/// word at a time (the last bytes, short of a word, one at a time): the cache entry's
/// checksum. A step is a bijection of the state for a given word, and distinct words give
/// distinct states (the prime is odd), so a change of one byte, which changes one word,
/// always changes the hash. By words, a 2 MB entry is checked in an eighth of the steps:
/// a list reopening waits for it.
enum FNV1a64 {
    static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    static let prime: UInt64 = 0x0000_0100_0000_01b3

    static func hash(_ bytes: some Collection<UInt8>) -> UInt64 {
        func run(_ buffer: UnsafeBufferPointer<UInt8>) -> UInt64 {
            var hash = offsetBasis
            let words = buffer.count / 8
            if let base = buffer.baseAddress {
                let raw = UnsafeRawPointer(base)
                for index in 0..<words {
                    let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self))
                    hash = (hash ^ word) &* prime
                }
            }
            for byte in buffer[(words * 8)...] { hash = (hash ^ UInt64(byte)) &* prime }
            return hash
        }
        return bytes.withContiguousStorageIfAvailable(run) ?? Array(bytes).withUnsafeBufferPointer(run)
    }
}

extension Validators {
    /// A response's header block is at most 80 KiB (the HTTP parser's limit), so no one value
    /// the server gave is longer.
    static let maximumLength = 80 << 10

    /// Whether `text` can go back into a request header as it is: no CR, LF or other control
    /// character (a header of its own smuggled into the request), and not longer than a
    /// server could have sent.
    static func isHeaderValue(_ text: String) -> Bool {
        text.utf8.count <= maximumLength && text.utf8.allSatisfy { $0 == 9 || ($0 >= 32 && $0 != 127) }
    }
}

extension PaginatedDataSource.PageRequest {
    /// As the cache stores it and `describeSource` shows it (`nextPage`, `previousPage`).
    package var json: JSON {
        switch self {
        case .first: ["first": true]
        case .page(let number): ["page": JSON(number)]
        case .offset(let offset): ["offset": JSON(offset)]
        case .cursor(let cursor): ["cursor": JSON(cursor)]
        case .before(let cursor): ["before": JSON(cursor)]
        case .url(let url): ["url": JSON(url)]
        }
    }

    /// The request as the cache writes it: a URL without `user:password@`.
    var withoutCredentials: Self {
        if case .url(let url) = self { return .url(URLResolution.redacted(url)) }
        return self
    }

    static let cachedExpectation =
        "an object with one of {\"first\": true}, {\"page\": integer}, {\"offset\": non-negative integer}, "
        + "{\"cursor\": non-empty string}, {\"before\": non-empty string}, {\"url\": non-empty string without credentials}"

    /// A request as the cache wrote it: one member, of its kind and in range. Whether it
    /// fits the source (its strategy, its origin, the page before it) is the source's check.
    init?(cached json: JSON) {
        guard let members = json.objectMembers, members.count == 1 else { return nil }
        let (name, value) = members[0]
        switch name {
        case "first" where value.boolValue == true:
            self = .first
        case "page":
            guard let number = value.integerValue else { return nil }
            self = .page(number)
        case "offset":
            guard let offset = value.integerValue, offset >= 0 else { return nil }
            self = .offset(offset)
        case "cursor":
            guard let cursor = value.stringValue, !cursor.isEmpty else { return nil }
            self = .cursor(cursor)
        case "before":
            guard let cursor = value.stringValue, !cursor.isEmpty else { return nil }
            self = .before(cursor)
        case "url":
            guard let url = value.stringValue, !url.isEmpty, URLResolution.redacted(url) == url else { return nil }
            self = .url(url)
        default:
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

    /// Metadata as the cache wrote it: each count present is a non-negative integer, as the
    /// server's were once read (a negative one was dropped then, so none is written).
    init(cached json: JSON, field: String) throws(CachedPages.Problem) {
        guard json.isObject else { throw CachedPages.expected(field, "an object", json) }
        func count(_ key: String) throws(CachedPages.Problem) -> Int? {
            guard let value = json[key] else { return nil }
            guard let number = value.integerValue, number >= 0 else {
                throw CachedPages.expected("\(field).\(key)", "a non-negative integer", value)
            }
            return number
        }
        self.init(
            pageSize: try count("pageSize"), currentPage: try count("currentPage"),
            numberOfPages: try count("numberOfPages"), numberOfTotalResults: try count("numberOfTotalResults"))
    }
}

/// Where a warm open's time went, phase by phase (monotonic clock), for the store's debug
/// log: `Benchmarks/cache.py` reads the line to split the time it measures from outside.
struct WarmOpenCosts {
    private var last = Self.now()
    private var phases: [(name: String, nanoseconds: UInt64)] = []

    /// Ends the phase running since the last mark (or since this was made).
    mutating func mark(_ phase: String) {
        let now = Self.now()
        phases.append((phase, now &- last))
        last = now
    }

    /// "read=120 decode=4100 ...", in microseconds.
    var line: String { phases.map { "\($0.name)=\($0.nanoseconds / 1000)" }.joined(separator: " ") }

    private static func now() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
