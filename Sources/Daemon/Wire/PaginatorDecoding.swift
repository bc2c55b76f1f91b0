import Basics
import DataSources
import JSONKit
import WireSchema

extension RemoteConfigurationDecoding {
    /// The paginated members: `paginatorKeys?`, `requestKeys?`, `pageSize?`, `firstPage?`, `metadataKeyPath?`.
    static func paginator(_ reader: inout ObjectReader) throws(FieldError) -> PaginatorConfiguration {
        var keys = PaginatorConfiguration.Keys()
        if var given = try reader.optionalObject(
            "paginatorKeys", expected: "an object {pageSize?, currentPage?, numberOfPages?, numberOfTotalObjects?}")
        {
            keys.pageSize = try given.optionalString("pageSize", nonEmpty: true) ?? keys.pageSize
            keys.currentPage = try given.optionalString("currentPage", nonEmpty: true) ?? keys.currentPage
            keys.numberOfPages = try given.optionalString("numberOfPages", nonEmpty: true) ?? keys.numberOfPages
            keys.numberOfTotalObjects = try given.optionalString("numberOfTotalObjects", nonEmpty: true) ?? keys.numberOfTotalObjects
            try given.finish()
        }
        var pageQueryKey: String?, pageSizeQueryKey: String?
        if var given = try reader.optionalObject("requestKeys", expected: "an object {currentPage?, pageSize?}") {
            pageQueryKey = try given.optionalString("currentPage", nonEmpty: true)
            pageSizeQueryKey = try given.optionalString("pageSize", nonEmpty: true)
            try given.finish()
        }
        let pageSize = try reader.optionalInteger("pageSize", in: 1...PaginatorConfiguration.maximumPageSize)
        let firstPage = try reader.optionalInteger("firstPage", in: 0...PaginatorConfiguration.maximumFirstPage) ?? 1
        let metadataKeyPath =
            try reader.optional("metadataKeyPath") { value, field throws(FieldError) in
                let text = try Decode.string(value, field)
                return text.isEmpty ? nil : JSONKeyPath(text)
            } ?? nil
        var paginator = PaginatorConfiguration(
            keys: keys, pageQueryKey: pageQueryKey, pageSizeQueryKey: pageSizeQueryKey, pageSize: pageSize,
            firstPage: firstPage, metadataKeyPath: metadataKeyPath)
        paginator.prefetchDistance =
            try reader.optionalInteger("prefetchDistance", in: 0...PaginatorConfiguration.maximumPrefetchDistance) ?? 0
        if var pagination = try reader.optionalObject("pagination", expected: "an object {strategy, ...}") {
            try Self.pagination(&pagination, into: &paginator)
            // Unknown members first: a misspelt "cursorPath" is named as such.
            try pagination.finish()
            if case .cursor(_, nil, nil, _) = paginator.strategy {
                throw FieldError(
                    field: pagination.path("cursorPath"), expected: "one of cursorPath and cursorFromLastObject", got: "nothing",
                    message:
                        "a cursor strategy needs \"pagination.cursorPath\" (where the next cursor is) or \"pagination.cursorFromLastObject\" (the identity sent as the cursor)"
                )
            }
        }
        paginator.initialPosition = try initialPosition(&reader, paginator: paginator)
        if var window = try reader.optionalObject("window", expected: "an object {maxPages?, maxObjects?}") {
            let pages = try window.optionalInteger("maxPages", in: 1...PaginatorConfiguration.maximumPagesLimit)
            let objects = try window.optionalInteger("maxObjects", in: 1...PaginatorConfiguration.maximumWindowObjects)
            try window.finish()
            guard pages != nil || objects != nil else {
                throw FieldError(
                    field: reader.path("window"), expected: "an object with maxPages or maxObjects", got: [:],
                    message: "\"window\" must give maxPages or maxObjects (or be left out: every page loaded is held)")
            }
            paginator.window = PaginatorConfiguration.Window(maximumPages: pages, maximumObjects: objects)
        }
        if let mode = try reader.optionalString("placeholders", nonEmpty: true) {
            guard let known = PaginatorConfiguration.PlaceholderMode(rawValue: mode) else {
                throw FieldError(
                    field: reader.path("placeholders"), expected: "\"trailing\" or \"counted\"", got: JSON(mode),
                    message: "\"placeholders\" must be \"trailing\" (the default) or \"counted\", got \"\(mode.prefix(100))\"")
            }
            paginator.placeholderMode = known
        }
        paginator.jumpThreshold = try reader.optionalInteger("jumpThreshold", in: 1...PaginatorConfiguration.maximumJumpThreshold)
        return paginator
    }

    /// `initialPage` (page numbers, from `firstPage` on), `initialOffset` (offsets),
    /// `initialCursor` (cursors): where a run starts; at most one, of the source's strategy.
    private static func initialPosition(
        _ reader: inout ObjectReader, paginator: PaginatorConfiguration
    ) throws(FieldError) -> PaginatorConfiguration.InitialPosition? {
        let page = try reader.optionalInteger("initialPage", in: paginator.firstPage...PaginatorConfiguration.maximumFirstPage)
        let offset = try reader.optionalInteger("initialOffset", in: 0...PaginatorConfiguration.maximumInitialOffset)
        let cursor = try reader.optionalString("initialCursor", nonEmpty: true)
        let given: [(field: String, strategy: String, position: PaginatorConfiguration.InitialPosition)] =
            [
                page.map { ("initialPage", "pageNumber", .page($0)) }, offset.map { ("initialOffset", "offset", .offset($0)) },
                cursor.map { ("initialCursor", "cursor", .cursor($0)) },
            ].compactMap { $0 }
        guard let first = given.first else { return nil }
        let strategy = paginator.strategy.name
        guard first.strategy == strategy else {
            let own = given.first { $0.strategy == strategy }.map(\.field) ?? Self.initialMember(of: strategy)
            throw FieldError(
                field: reader.path(first.field), expected: "\(first.field) only with the \(first.strategy) strategy",
                got: reader.value(first.field) ?? .null,
                message:
                    "\"\(first.field)\" needs pagination.strategy \"\(first.strategy)\"; this source's strategy is \(strategy)\(own.map { ", which starts from \"\($0)\"" } ?? ", which cannot start in the middle")"
            )
        }
        if given.count > 1 {
            throw FieldError(
                field: reader.path(given[1].field), expected: "one of initialPage, initialOffset and initialCursor",
                got: reader.value(given[1].field) ?? .null,
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
