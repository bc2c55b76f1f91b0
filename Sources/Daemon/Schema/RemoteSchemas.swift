import WireSchema

// Components of Protocol/openrpc.json: what a remote or paginated source is configured with.
extension SchemaComponents {
    static let headers: Schema = .map(
        of: .anyOf([
            .string,
            .object(
                [
                    "env": .string(minLength: 1).described("a variable of the daemon's environment, read when each request is made"),
                    "prefix": .string,
                ],
                required: ["env"]),
            .object(
                [
                    "file": .string(minLength: 1).described(
                        "an absolute path or one from ~/: a regular file of at most 65536 bytes, read when each request is made, its trailing line break removed"
                    ),
                    "prefix": .string,
                ],
                required: ["file"]),
        ]).described("a string, or where the value is read from (Protocol.md, \"Credentials from the environment or a file\")"))

    static let queryParameters: Schema = .map(of: .type("string", "number", "boolean"))

    static let tLSFiles: Schema = .type("object").with {
        $0.properties = [
            ("caFile", .string(minLength: 1)),
            ("certificateFile", .string(minLength: 1)),
            ("keyFile", .string(minLength: 1)),
        ]
        $0.dependentRequired = [("certificateFile", ["keyFile"]), ("keyFile", ["certificateFile"])]
        $0.additionalProperties = false
    }.described(
        "PEM files for HTTPS: caFile is trusted in addition to the base roots (SSL_CERT_FILE / SSL_CERT_DIR, else the system store); certificateFile and keyFile, given together, are the client certificate. Paths are absolute or start with ~/; each file is checked at createSource."
    )

    static let placeholderStorageOptions: Schema = .anyOf([
        .integer(in: 0...14),
        .array(of: .oneOfValues(["loading", "noResults", "errors"])),
    ])

    static let fieldSpec: Schema = .anyOf([
        .string,
        .object(
            [
                "keyPath": keyPath,
                "type": .oneOfValues(["any", "string", "number", "integer", "boolean", "date", "url", "object", "array"]),
                "default": .anything,
                "mapping": .ref("Mapping"),
                "items": .ref("FieldSpec"),
            ]),
    ])

    static let mapping: Schema = .map(of: .ref("FieldSpec"))

    static let pagination: Schema = .object(
        [
            "strategy": .oneOfValues(["pageNumber", "offset", "cursor", "nextURL", "linkHeader"]),
            "offsetKey": .string(minLength: 1),
            "limitKey": .string(minLength: 1),
            "nextOffsetPath": keyPath,
            "cursorKey": .string(minLength: 1),
            "cursorPath": keyPath,
            "cursorFromLastObject": keyPath,
            "hasMorePath": keyPath,
            "prevCursorPath": .string(minLength: 1).described(
                "(cursor) where a response gives the cursor of the page before it; a dot-separated key path"),
            "previousURLPath": .string(minLength: 1).described(
                "(nextURL) where a response gives the URL of the page before it; a dot-separated key path"),
            "nextURLPath": keyPath,
            "totalPath": keyPath,
            "totalHeader": .string(minLength: 1),
            "maxPages": .integer(in: 1...1000000),
            "maxPagesWithoutNewObjects": .integer(in: 1...1000),
            "endOnNotFound": .boolean,
            "allowCrossOrigin": .boolean,
            "duplicates": .oneOfValues(["dropLater", "keep"]),
            "retryAfter": .object(
                [
                    "maxRetries": .integer(in: 0...10),
                    "maxDelaySeconds": .number(in: 0...3600),
                ]),
            "metadataHeader": .string(minLength: 1, maxLength: 256, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$").described(
                "a response header holding the page metadata as JSON (flask-smorest's X-Pagination)"),
            "requestIn": .oneOfValues(["query", "body"]).described(
                "where the page values go: the query string, or the JSON body at the key paths requestKeys, cursorKey, offsetKey and limitKey name; default body with POST, query with GET"
            ),
        ])

}
