import Basics
import DataSources
import JSONKit
import WireSchema

extension RemoteConfigurationDecoding {
    /// A paginated source's paging as decoded, before the request's method and body settle
    /// the rest (`RequestBodyDecoding.paging`).
    struct Paging: Sendable {
        var paginator: PaginatorConfiguration
        /// `pagination.requestIn`, when given.
        var requestIn: PageValuesPlace?
        /// Whether `pagination.strategy` was given (a GraphQL source takes none).
        var strategyGiven: Bool
        /// `initialPage`, `initialOffset`, `initialCursor`: checked against the strategy once it is settled.
        var initialPage: Int?
        var initialOffset: Int?
        var initialCursor: String?

        /// The paginator, its strategy settled, with where a run starts.
        func settled(_ paginator: PaginatorConfiguration) throws(FieldError) -> PaginatorConfiguration {
            var paginator = paginator
            paginator.initialPosition = try RemoteConfigurationDecoding.initialPosition(
                page: initialPage, offset: initialOffset, cursor: initialCursor, paginator: paginator)
            return paginator
        }
    }

    /// What `pagination` holds: the paginator, and what the rest is settled from.
    struct PaginationMembers: Sendable {
        var paginator = PaginatorConfiguration()
        var requestIn: PageValuesPlace?
        var strategyGiven = false
    }

    /// A paginated source's own members (after a remote source's), declared once.
    static let pagingMembers = ObjectDeclaration(
        .optional(
            "paginatorKeys", paginatorKeys.shape(expected: "an object {pageSize?, currentPage?, numberOfPages?, numberOfTotalObjects?}")),
        .optional("requestKeys", requestKeys.shape(expected: "an object {currentPage?, pageSize?, cursor?}")),
        .optional("pageSize", .integer(in: 1...PaginatorConfiguration.maximumPageSize)),
        .optional("firstPage", .integer(in: 0...PaginatorConfiguration.maximumFirstPage), default: 1),
        .optional("metadataKeyPath", optionalKeyPath),
        .optional("prefetchDistance", .integer(in: 0...PaginatorConfiguration.maximumPrefetchDistance), default: 0),
        .optional("pagination", paginationShape),
        .optional(
            "initialPage", .integer(in: 0...PaginatorConfiguration.maximumFirstPage),
            doc: "(pageNumber) the page a run starts at, firstPage or later"),
        .optional(
            "initialOffset", .integer(in: 0...PaginatorConfiguration.maximumInitialOffset), doc: "(offset) the offset a run starts at"),
        .optional("initialCursor", Shape.nonEmptyString, doc: "(cursor) the cursor a run starts at"),
        .optional("window", windowShape, doc: "the most pages and objects held; pages far from the rows displayed are dropped, whole"),
        .optional(
            "placeholders", placeholdersShape,
            doc:
                "counted: with a known total the list has its full size at once, unloaded rows being {\"$placeholder\": \"unloaded\", \"index\": N}"
        ),
        .optional(
            "jumpThreshold", .integer(in: 1...PaginatorConfiguration.maximumJumpThreshold),
            doc: "rows: a displayed unloaded row farther than this from the loaded ones loads its own page (a jump); default two pages"),
        as: {
            keys, requestKeys, pageSize, firstPage, metadataKeyPath, prefetchDistance, pagination, initialPage, initialOffset,
            initialCursor, window, placeholders, jumpThreshold throws(FieldError) in
            // The strategy's members come with `pagination`; the rest are set over them.
            var paginator = pagination?.paginator ?? PaginatorConfiguration()
            paginator.keys = keys ?? PaginatorConfiguration.Keys()
            paginator.pageQueryKey = requestKeys?.currentPage ?? paginator.keys.currentPage
            paginator.pageSizeQueryKey = requestKeys?.pageSize ?? paginator.keys.pageSize
            if let cursorKey = requestKeys?.cursor {
                guard case .cursor(_, let cursorPath, let fromLastObject, let hasMorePath) = paginator.strategy else {
                    throw FieldError(
                        field: "requestKeys.cursor", expected: "a cursor key with the cursor strategy", got: JSON(cursorKey),
                        message:
                            "\"requestKeys.cursor\" needs pagination.strategy \"cursor\"; this source's strategy is \(paginator.strategy.name)"
                    )
                }
                paginator.strategy = .cursor(
                    cursorKey: cursorKey, cursorPath: cursorPath, fromLastObject: fromLastObject, hasMorePath: hasMorePath)
            }
            paginator.pageSize = pageSize
            paginator.firstPage = firstPage
            paginator.metadataKeyPath = metadataKeyPath ?? nil
            paginator.prefetchDistance = prefetchDistance
            paginator.window = window
            if let placeholders { paginator.placeholderMode = placeholders }
            paginator.jumpThreshold = jumpThreshold
            return Paging(
                paginator: paginator, requestIn: pagination?.requestIn, strategyGiven: pagination?.strategyGiven ?? false,
                initialPage: initialPage, initialOffset: initialOffset, initialCursor: initialCursor)
        })

    private static let paginatorKeys = ObjectDeclaration(
        .optional("pageSize", Shape.nonEmptyString), .optional("currentPage", Shape.nonEmptyString),
        .optional("numberOfPages", Shape.nonEmptyString), .optional("numberOfTotalObjects", Shape.nonEmptyString),
        as: { pageSize, currentPage, numberOfPages, numberOfTotalObjects in
            var keys = PaginatorConfiguration.Keys()
            keys.pageSize = pageSize ?? keys.pageSize
            keys.currentPage = currentPage ?? keys.currentPage
            keys.numberOfPages = numberOfPages ?? keys.numberOfPages
            keys.numberOfTotalObjects = numberOfTotalObjects ?? keys.numberOfTotalObjects
            return keys
        })

    private static let requestKeys = ObjectDeclaration(
        .optional("currentPage", Shape.nonEmptyString), .optional("pageSize", Shape.nonEmptyString),
        .optional("cursor", Shape.nonEmptyString, doc: "(cursor) the name the cursor is sent under, as pagination.cursorKey"),
        as: { (currentPage: $0, pageSize: $1, cursor: $2) })

    /// `pagination`: the strategy, the members of that strategy, and the rules every
    /// strategy shares (read by hand: which members exist depends on the strategy).
    private static let paginationShape = Shape<PaginationMembers>(.ref("Pagination"), expected: "an object {strategy, ...}") {
        value, field throws(FieldError) in
        var reader = try ObjectReader(value, field: field, expected: "an object {strategy, ...}")
        var members = PaginationMembers()
        members.strategyGiven = reader.rawValue("strategy") != nil
        try pagination(&reader, into: &members.paginator)
        members.requestIn = try reader.optional("requestIn") { value, field throws(FieldError) in
            guard let place = value.stringValue.flatMap(PageValuesPlace.init(rawValue:)) else {
                throw FieldError(field: field, expected: "\"query\" or \"body\"", got: value)
            }
            return place
        }
        // Unknown members first: a misspelt "cursorPath" is named as such.
        try reader.finish()
        let paginator = members.paginator
        if case .cursor(_, nil, nil, _) = paginator.strategy {
            throw FieldError(
                field: reader.path("cursorPath"), expected: "one of cursorPath and cursorFromLastObject", got: "nothing",
                message:
                    "a cursor strategy needs \"pagination.cursorPath\" (where the next cursor is) or \"pagination.cursorFromLastObject\" (the identity sent as the cursor)"
            )
        }
        return members
    }

    private static let window = ObjectDeclaration(
        .optional("maxPages", .integer(in: 1...PaginatorConfiguration.maximumPagesLimit)),
        .optional("maxObjects", .integer(in: 1...PaginatorConfiguration.maximumWindowObjects)),
        as: { PaginatorConfiguration.Window(maximumPages: $0, maximumObjects: $1) })

    private static let windowShape = window.shape(expected: "an object {maxPages?, maxObjects?}").documented(
        window.schema().with {
            $0.required = nil
            $0.minProperties = 1
        }
    ).map { window, _, field throws(FieldError) in
        guard window.maximumPages != nil || window.maximumObjects != nil else {
            throw FieldError(
                field: field, expected: "an object with maxPages or maxObjects", got: [:],
                message: "\"window\" must give maxPages or maxObjects (or be left out: every page loaded is held)")
        }
        return window
    }

    private static let placeholdersShape = Shape.nonEmptyString.documented(.oneOfValues(["trailing", "counted"])).map {
        mode, _, field throws(FieldError) -> PaginatorConfiguration.PlaceholderMode in
        guard let known = PaginatorConfiguration.PlaceholderMode(rawValue: mode) else {
            throw FieldError(
                field: field, expected: "\"trailing\" or \"counted\"", got: JSON(mode),
                message: "\"placeholders\" must be \"trailing\" (the default) or \"counted\", got \"\(mode.prefix(100))\"")
        }
        return known
    }

    /// `initialPage` (page numbers, from `firstPage` on), `initialOffset` (offsets),
    /// `initialCursor` (cursors): where a run starts; at most one, of the source's strategy.
    static func initialPosition(
        page: Int?, offset: Int?, cursor: String?, paginator: PaginatorConfiguration
    ) throws(FieldError) -> PaginatorConfiguration.InitialPosition? {
        // Pages before firstPage do not exist: the range checked is the one the source has.
        if let page, page < paginator.firstPage {
            throw .invalid(
                "initialPage", expected: Decode.integerExpectation(paginator.firstPage...PaginatorConfiguration.maximumFirstPage),
                got: JSON(page))
        }
        let given: [(field: String, strategy: String, position: PaginatorConfiguration.InitialPosition, value: JSON)] =
            [
                page.map { ("initialPage", "pageNumber", .page($0), JSON($0)) },
                offset.map { ("initialOffset", "offset", .offset($0), JSON($0)) },
                cursor.map { ("initialCursor", "cursor", .cursor($0), JSON($0)) },
            ].compactMap { $0 }
        guard let first = given.first else { return nil }
        let strategy = paginator.strategy.name
        guard first.strategy == strategy else {
            let own = given.first { $0.strategy == strategy }.map(\.field) ?? Self.initialMember(of: strategy)
            throw FieldError(
                field: first.field, expected: "\(first.field) only with the \(first.strategy) strategy", got: first.value,
                message:
                    "\"\(first.field)\" needs pagination.strategy \"\(first.strategy)\"; this source's strategy is \(strategy)\(own.map { ", which starts from \"\($0)\"" } ?? ", which cannot start in the middle")"
            )
        }
        if given.count > 1 {
            throw FieldError(
                field: given[1].field, expected: "one of initialPage, initialOffset and initialCursor", got: given[1].value,
                message: "\"\(given[1].field)\" and \"\(first.field)\" both say where a run starts; give one")
        }
        return first.position
    }

    private static func initialMember(of strategy: String) -> String? {
        switch strategy {
        case "pageNumber": "initialPage"
        case "offset": "initialOffset"
        case "cursor": "initialCursor"
        default: nil
        }
    }

    static let strategies = ["pageNumber", "offset", "cursor", "nextURL", "linkHeader"]

    /// `pagination`: the strategy and its keys, and the rules every strategy shares.
    private static func pagination(_ reader: inout ObjectReader, into paginator: inout PaginatorConfiguration) throws(FieldError) {
        let strategy =
            try reader.optional("strategy") { value, field throws(FieldError) in
                let name = try Decode.string(value, field)
                guard strategies.contains(name) else {
                    throw FieldError(field: field, expected: "one of \(strategies.joined(separator: ", "))", got: value)
                }
                return name
            } ?? "pageNumber"
        switch strategy {
        case "offset":
            paginator.strategy = .offset(
                offsetKey: try reader.optionalString("offsetKey", nonEmpty: true) ?? "offset",
                limitKey: try reader.optionalString("limitKey", nonEmpty: true) ?? "limit",
                nextOffsetPath: try reader.optionalKeyPath("nextOffsetPath"))
        case "cursor":
            let cursorKey = try reader.optionalString("cursorKey", nonEmpty: true) ?? "cursor"
            let cursorPath = try reader.optionalKeyPath("cursorPath")
            let fromLastObject = try reader.optionalKeyPath("cursorFromLastObject")
            if cursorPath != nil, fromLastObject != nil {
                throw FieldError(
                    field: reader.path("cursorFromLastObject"), expected: "only one of cursorPath and cursorFromLastObject",
                    got: JSON(fromLastObject?.description ?? ""))
            }
            paginator.strategy = .cursor(
                cursorKey: cursorKey, cursorPath: cursorPath, fromLastObject: fromLastObject,
                hasMorePath: try reader.optionalKeyPath("hasMorePath"))
            paginator.previousCursorPath = try reader.optionalKeyPath("prevCursorPath")
        case "nextURL":
            paginator.strategy = .nextURL(
                path: try reader.optionalKeyPath("nextURLPath") ?? JSONKeyPath("next"),
                hasMorePath: try reader.optionalKeyPath("hasMorePath"))
            paginator.previousURLPath = try reader.optionalKeyPath("previousURLPath")
        case "linkHeader":
            paginator.strategy = .linkHeader
        default:
            paginator.strategy = .pageNumber
        }
        paginator.totalPath = try reader.optionalKeyPath("totalPath")
        paginator.totalHeader = try reader.optionalString("totalHeader", nonEmpty: true)
        paginator.metadataHeader = try reader.optional("metadataHeader", headerName)
        paginator.maximumPages =
            try reader.optionalInteger("maxPages", in: 1...PaginatorConfiguration.maximumPagesLimit) ?? paginator.maximumPages
        paginator.stalledPagesLimit = try reader.optionalInteger("maxPagesWithoutNewObjects", in: 1...1000) ?? paginator.stalledPagesLimit
        paginator.endOnNotFound = try reader.optionalBool("endOnNotFound") ?? paginator.endOnNotFound
        paginator.allowCrossOrigin = try reader.optionalBool("allowCrossOrigin") ?? paginator.allowCrossOrigin
        paginator.duplicates =
            try reader.optional("duplicates") { value, field throws(FieldError) in
                let names = PaginatorConfiguration.DuplicatePolicy.allCases.map(\.rawValue)
                guard let policy = value.stringValue.flatMap(PaginatorConfiguration.DuplicatePolicy.init(rawValue:)) else {
                    throw FieldError(field: field, expected: "one of \(names.joined(separator: ", "))", got: value)
                }
                return policy
            } ?? paginator.duplicates
        if var retry = try reader.optionalObject("retryAfter", expected: "an object {maxRetries?, maxDelaySeconds?}") {
            paginator.retryAfterRetries = try retry.optionalInteger("maxRetries", in: 0...10) ?? paginator.retryAfterRetries
            paginator.retryAfterMaximumSeconds =
                try retry.optionalNumber("maxDelaySeconds", in: 0...3600) ?? paginator.retryAfterMaximumSeconds
            try retry.finish()
        }
    }
}

extension RemoteConfigurationDecoding {
    /// A header's name: an RFC 9110 token.
    static func headerName(_ value: JSON, _ field: String) throws(FieldError) -> String {
        let expected = "a header name (letters, digits and !#$%&'*+-.^_`|~)"
        let name = try Decode.string(value, field, nonEmpty: true)
        guard name.utf8.count <= 256,
            name.utf8.allSatisfy({ byte in
                (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || "!#$%&'*+-.^_`|~".utf8.contains(byte)
            })
        else { throw .invalid(field, expected: expected, got: value) }
        return name
    }
}
