import Basics
import JSONKit

/// What arrived for one request, as the HTTP layer hands it over.
package struct RemoteResponse: Sendable {
    /// The request's URL, without credentials.
    package let url: String
    /// The URL that answered after redirects (without credentials); nil when none was followed.
    package let finalURL: String?
    package let status: Int
    /// In the order received.
    package let headers: [(name: String, value: String)]
    package let body: [UInt8]

    package init(url: String, finalURL: String? = nil, status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        self.url = url
        self.finalURL = finalURL
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response with only a content type, for tests and fixtures.
    package init(url: String, status: Int, contentType: String?, body: [UInt8]) {
        self.init(url: url, status: status, headers: contentType.map { [("Content-Type", $0)] } ?? [], body: body)
    }

    /// Every value of a header, in order (names compare case-insensitively).
    package func headerValues(_ name: String) -> [String] {
        headers.values(ofHeader: name)
    }

    package var contentType: String? { headerValues("content-type").first }
}

/// Turns a response into rows: status and content type checks, jansson decoding, the
/// key path, and the mapping. Pure, so every rule is a one-line test.
package enum ResponseDecoding {
    static let jsonContentTypes: Set = ["application/json", "text/json", "text/javascript"]

    /// How much of a failed response's body an error carries.
    package static let bodyExcerptLimit = 2048
    /// How many characters of the server's own message an error carries.
    package static let serverMessageLimit = 500

    /// The decoded document (nil for an empty body), or why it is unusable. `secrets` are
    /// values (header values, credentials) that must not appear in an error's body excerpt.
    package static func document(
        _ response: RemoteResponse, maximumDepth: Int, maximumObjects: Int = RemoteConfiguration.defaultMaximumObjectsPerPage,
        secrets: [String] = []
    ) -> Result<JSON?, FetchError> {
        guard (200...299).contains(response.status) else {
            return .failure(httpFailure(response, secrets: secrets))
        }
        if response.body.allSatisfy({ $0 == 32 || $0 == 9 || $0 == 10 || $0 == 13 }) { return .success(nil) }
        let mediaType = response.contentType?.split(separator: ";").first.map { $0.trimmingSpaces().lowercased() } ?? ""
        guard jsonContentTypes.contains(mediaType) || mediaType.hasSuffix("+json") else {
            return .failure(
                FetchError(
                    kind: .decode, message: "expected a JSON content type, got \(response.contentType.map { "\"\($0)\"" } ?? "none")",
                    url: response.url, status: response.status))
        }
        if let depth = response.body.withUnsafeBytes({ JSON.nestingDepthExceeding(maximumDepth, in: $0) }) {
            var error = FetchError(
                kind: .tooLarge, message: "response nests deeper than \(maximumDepth) levels (at byte \(depth))",
                url: response.url, status: response.status)
            error.maxDepth = maximumDepth
            return .failure(error)
        }
        // Before jansson makes a node of each: the count, not the bytes, is what the rows cost;
        // and the values in all, whatever their shape (a page cut into arrays of fewer rows).
        let totalLimit = maximumObjects.multipliedClamped(by: RemoteConfiguration.valuesPerObject)
        if let found = response.body.withUnsafeBytes({
            JSON.tooManyValues(maximumObjects, totalLimit: totalLimit, in: $0, maximumDepth: maximumDepth)
        }) {
            let what =
                found.inAll
                ? "more than \(totalLimit) values in all (\(RemoteConfiguration.valuesPerObject) a row of limits.maxObjectsPerPage)"
                : "an array of more than \(maximumObjects) elements, more than limits.maxObjectsPerPage"
            var error = FetchError(
                kind: .tooLarge, message: "the response holds \(what) (at byte \(found.offset))", url: response.url,
                status: response.status)
            error.maxObjectsPerPage = maximumObjects
            return .failure(error)
        }
        do {
            // Inside `decode`, in the thread's scratch arena: its list is packed as rows and the
            // rest read for page metadata, then dropped.
            return .success(try JSON.parse(response.body))
        } catch  where error.message.hasPrefix("too big") || error.message.hasPrefix("real number overflow") {
            // Numbers beyond what jansson holds (unsigned 64-bit ids) are kept as strings of
            // their exact digits, rather than failing the page.
            if let quoted = JSON.quotingUnholdableNumbers(in: response.body), let document = try? JSON.parse(quoted) {
                return .success(document)
            }
            var failure = FetchError(
                kind: .decode, message: "malformed JSON: \(parseProblem(error, secrets: secrets))", url: response.url,
                status: response.status)
            failure.parsePosition = FetchError.ParsePosition(line: error.line, column: error.column, position: error.position)
            return .failure(failure)
        } catch {
            var failure = FetchError(
                kind: .decode, message: "malformed JSON: \(parseProblem(error, secrets: secrets))", url: response.url,
                status: response.status)
            failure.parsePosition = FetchError.ParsePosition(line: error.line, column: error.column, position: error.position)
            return .failure(failure)
        }
    }

    /// jansson's words for where a body stopped being JSON. They quote up to 20 bytes of the
    /// text there (`'}' expected near '"ghp_ab/cd+e'`), which may be the start of a secret the
    /// server echoed: with secrets in play the quote is left out (line, column and byte
    /// still say where), and what remains is redacted.
    static func parseProblem(_ error: JSONParseError, secrets: [String]) -> String {
        var text = error.description
        if !secrets.isEmpty, let near = text.firstRange(of: " near '"), let end = text[near.upperBound...].firstRange(of: "' at line ") {
            text.replaceSubrange(near.lowerBound..<end.upperBound, with: " at line ")
        }
        return SecretRedaction.redacted(text, secrets: secrets)
    }

    /// An HTTP error that says what the server said: the start of its body, its own message
    /// where a common field holds one, the final URL, and when to retry.
    static func httpFailure(_ response: RemoteResponse, secrets: [String]) -> FetchError {
        var error = FetchError(kind: .http, message: "HTTP status \(response.status)", url: response.url, status: response.status)
        error.finalURL = response.finalURL
        if !response.body.isEmpty {
            // Secrets of every length, as written or JSON-escaped, whole or cut by the limit
            // (SecretRedaction): a short one mangles the excerpt, but never shows.
            let excerpt = SecretRedaction.excerpt(of: response.body, byteLimit: bodyExcerptLimit, secrets: secrets)
            error.body = String(decoding: excerpt, as: UTF8.self)
            if response.body.count <= 1 << 20, let document = try? JSON.parse(response.body), let text = serverMessage(in: document) {
                error.serverMessage = SecretRedaction.excerpt(of: text, characterLimit: serverMessageLimit, secrets: secrets)
            }
        }
        let now = WallClock.secondsSince1970()
        let retryAfter = response.headerValues("retry-after").first.flatMap { RetryAfter.seconds($0, now: now) }
        if response.status == 429 || response.status == 503 { error.retryAfterSeconds = retryAfter }
        error.rateLimit = RateLimitStatus.read(from: response.headers, now: now)
        // A 429 is a rate limit by definition; a 403 is one when its headers say the limit is
        // spent (GitHub's primary limit) or ask to retry later (GitHub's secondary limits).
        if response.status == 429 || (response.status == 403 && (error.rateLimit?.remaining == 0 || retryAfter != nil)) {
            error.rateLimited = true
            error.retryAfterSeconds = retryAfter ?? error.rateLimit?.secondsUntilReset(now: now)
        }
        return error
    }

    /// The message an API put in its error body, from the first of: `detail` (Django REST
    /// framework, RFC 9457 problem details), `message` (GitHub), `error_description` (OAuth),
    /// `error` as a string, `error.message`, `_error.message` (Eve), `errors[0].message` (GraphQL),
    /// `errors[0].detail` (JSON:API), `title` (problem details without a detail), and the first
    /// string anywhere in `errors`, after the names leading to it (marshmallow and
    /// flask-smorest: `query.page_size: Must be <= 100`), then the first message of the first
    /// field of Django REST framework's validation errors (`title: This field may not be blank.`).
    static func serverMessage(in document: JSON) -> String? {
        func text(_ value: JSON?) -> String? { value?.stringValue.flatMap { $0.isEmpty ? nil : $0 } }
        for key in ["detail", "message", "error_description", "error"] {
            if let found = text(document[key]) { return found }
        }
        let candidates = [
            document["error"]?["message"], document["_error"]?["message"], document["errors"]?[0]?["message"],
            document["errors"]?[0]?["detail"], document["title"],
        ]
        for candidate in candidates {
            if let found = text(candidate) { return found }
        }
        if let found = document["errors"].flatMap({ firstString(in: $0) }) { return found }
        // Django REST framework's validation errors: each field's messages under its name
        // (`{"title": ["This field may not be blank."]}`, `non_field_errors`).
        if let (name, first) = document.objectMembers?.first, let message = text(first.arrayValue?.first) {
            return name == "non_field_errors" ? message : "\(name): \(message)"
        }
        return nil
    }

    /// The first non-empty string in `value`, depth first, after the object member names that
    /// lead to it (`query.page_size: ...`). Bounded: at most 64 levels and 10,000 values looked at.
    static func firstString(in value: JSON) -> String? {
        var budget = 10_000
        func search(_ value: JSON, names: [String], depth: Int) -> String? {
            budget -= 1
            guard budget >= 0, depth <= 64 else { return nil }
            switch value.kind {
            case .string:
                guard let text = value.stringValue, !text.isEmpty else { return nil }
                return names.isEmpty ? text : names.joined(separator: ".") + ": " + text
            case .array:
                for element in value.arrayValue ?? [] {
                    if let found = search(element, names: names, depth: depth + 1) { return found }
                }
            case .object:
                for (name, member) in value.objectMembers ?? [] {
                    if let found = search(member, names: names + [name], depth: depth + 1) { return found }
                }
            default:
                break
            }
            return nil
        }
        return search(value, names: [], depth: 0)
    }

    /// The list at `keyPath` (a single value there is a one-element list, as in the
    /// original), mapped. A missing key path is an error, not an empty list.
    /// `elementPath`: each element's row is the value there (a GraphQL edge's `node`); an
    /// element without one, or with null there, is skipped.
    package static func objects(
        in document: JSON?, keyPath: JSONKeyPath?, mapping: ObjectMapping?, url: String, status: Int,
        elementPath: JSONKeyPath? = nil
    ) -> Result<[JSON], FetchError> {
        guard let document else { return .success([]) }
        var found = document.cursor
        if let keyPath {
            guard let value = found.at(keyPath), !value.isNull else {
                var error = FetchError(
                    kind: .keyPath, message: "the response has no value at key path \"\(keyPath)\"", url: url, status: status)
                error.keyPath = keyPath.description
                return .failure(error)
            }
            found = value
        }
        // Rows are kept packed: a few times smaller than trees (see JSON.packed()), and
        // written from the document where it lies, with no value made per element.
        var rows: [JSON] = []
        var scratch = PackingScratch(), writer = PackedObjectWriter()
        func add(_ element: JSON.Cursor, index: Int) throws(FetchError) {
            if let elementPath {
                guard let row = element.at(elementPath), row.kind != .null else { return }
                return try addRow(row, index: index)
            }
            try addRow(element, index: index)
        }
        func addRow(_ element: JSON.Cursor, index: Int) throws(FetchError) {
            guard let mapping else { return rows.append(element.packed(using: &scratch)) }
            switch mapping.map(element, writer: &writer) {
            case .success(let object): rows.append(object.packed())
            case .failure(let issue): throw mappingError(issue, index: index, url: url, status: status)
            }
        }
        do throws(FetchError) {
            if found.kind == .array {
                try found.forEachElement { (index, element) throws(FetchError) in try add(element, index: index) }
            } else {
                try add(found, index: 0)  // a single value is a one-element list, as in the original
            }
        } catch {
            return .failure(error)
        }
        return .success(rows)
    }

    private static func mappingError(_ issue: ObjectMapping.Issue, index: Int, url: String, status: Int) -> FetchError {
        var error = FetchError(
            kind: .mapping, message: "object \(index): \"\(issue.field)\" must be \(issue.expected), got \(issue.got)",
            url: url, status: status)
        error.mapping = FetchError.MappingProblem(index: index, issue: issue)
        return error
    }

    /// Everything between the bytes and the rows, for one configuration; `url` (already
    /// redacted) is the one errors name.
    /// `conditional`: the request carried validators, so a `304` is an answer (nothing to
    /// parse: the rows held are current), not an error.
    /// `secrets`: values read for this request (from the environment or files), kept out of
    /// errors along with the configuration's own.
    package static func decode(
        _ response: RemoteResponse, configuration: RemoteConfiguration, url: String,
        conditional: Bool = false, secrets: [String] = []
    ) -> Result<DecodedResponse, FetchError> {
        if conditional, response.status == 304 {
            return .success(
                DecodedResponse(objects: [], document: nil, status: 304, headers: response.headers, finalURL: response.finalURL))
        }
        let named = RemoteResponse(
            url: url, finalURL: response.finalURL, status: response.status, headers: response.headers, body: response.body)
        func decoded() -> Result<DecodedResponse, FetchError> {
            if let graphql = configuration.graphql {
                return document(
                    named, maximumDepth: configuration.maximumDepth, maximumObjects: configuration.maximumObjectsPerPage,
                    secrets: configuration.secretValues + secrets
                ).flatMap { document in
                    GraphQLDecoding.decode(
                        document, graphql, mapping: configuration.mapping, response: named, secrets: configuration.secretValues + secrets)
                }
            }
            return document(
                named, maximumDepth: configuration.maximumDepth, maximumObjects: configuration.maximumObjectsPerPage,
                secrets: configuration.secretValues + secrets
            ).flatMap { document in
                objects(in: document, keyPath: configuration.keyPath, mapping: configuration.mapping, url: url, status: response.status)
                    .map {
                        DecodedResponse(
                            objects: $0, document: document.map { withoutTheList($0, keyPath: configuration.keyPath) },
                            status: response.status, headers: response.headers, finalURL: response.finalURL)
                    }
            }
        }
        // The page's tree is made, read and dropped in this scope, so it goes in the thread's
        // scratch arena (CJSONArena.h): its nodes freed without atomics, the memory used again
        // by the next page, in cache. Only packed values leave it (or, without a key path or
        // with a nested one, the document, which then keeps the arena until dropped: so a
        // document too large for an arena is parsed node by node, outside the scope).
        guard response.body.count <= JSON.largestArenaDocument else { return decoded() }
        return JSON.withScratchAllocation(decoded)
    }

    /// The document as page metadata needs it: without the list at a top-level key path,
    /// which the rows have been made from, and packed. The page's tree, and the arena it was
    /// parsed into, are then freed on this (the HTTP) thread, not held until the main loop is
    /// done with the metadata. (With another key path the document, and its arena, are
    /// passed on whole: the rows are not cut out of a nested list.)
    /// `decoded` with the page metadata read from the JSON in the response header `name`
    /// (flask-smorest's `X-Pagination`) instead of the body: every metadata path then reads
    /// from it. A response without the header has no metadata, as a body without those keys;
    /// one whose header is not JSON fails with kind `decode`, naming the header.
    package static func readingMetadata(
        fromHeader name: String, of decoded: DecodedResponse, maximumDepth: Int,
        url: String
    ) -> Result<DecodedResponse, FetchError> {
        guard !decoded.isNotModified else { return .success(decoded) }
        guard let value = decoded.headerValues(name).first else { return .success(decoded.replacingDocument(nil)) }
        let bytes = Array(value.utf8)
        if let depth = bytes.withUnsafeBytes({ JSON.nestingDepthExceeding(maximumDepth, in: $0) }) {
            var error = FetchError(
                kind: .tooLarge, message: "the \(name) header nests deeper than \(maximumDepth) levels (at byte \(depth))",
                url: url, status: decoded.status)
            error.maxDepth = maximumDepth
            return .failure(error)
        }
        do {
            return .success(decoded.replacingDocument(try JSON.parse(bytes)))
        } catch {
            return .failure(
                FetchError(kind: .decode, message: "the \(name) header is not JSON: \(error.description)", url: url, status: decoded.status)
            )
        }
    }

    static func withoutTheList(_ document: JSON, keyPath: JSONKeyPath?) -> JSON {
        guard let keyPath, keyPath.components.count == 1, document.isObject else { return document }
        return document.removing(keyPath.components[0]).packed()
    }
}
