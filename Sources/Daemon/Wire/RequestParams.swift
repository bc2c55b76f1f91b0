import DataSources
import JSONKit

// The params of every method but `createSource` (see SourceSpecDecoding.swift), decoded
// and range-checked. Indices and counts are checked against the rows that exist by the
// model, which never adds two client numbers without checking.

/// `{clientInfo?: {name?, version?}, capabilities?: {changeValues?}}`.
struct InitializeParams: WireParams {
    var clientName: String?
    var clientVersion: String?
    /// The most bytes of row values a `didChange` may carry; nil: none.
    var changeValuesLimit: Int?

    static let defaultChangeValuesLimit = 1 << 20
    static let maximumChangeValuesLimit = 64 << 20

    init(_ reader: inout ObjectReader) throws(FieldError) {
        if var client = try reader.optionalObject("clientInfo", expected: "an object {name?, version?}") {
            clientName = try client.optionalString("name")
            clientVersion = try client.optionalString("version")
            try client.finish()
        }
        // Client capabilities this daemon does not know are ignored, as in LSP: a newer
        // client must be able to talk to an older daemon.
        if var capabilities = try reader.optionalObject("capabilities", expected: "an object of client capabilities") {
            if let value = capabilities.value("changeValues") {
                let field = capabilities.path("changeValues")
                if let enabled = value.boolValue {
                    changeValuesLimit = enabled ? Self.defaultChangeValuesLimit : nil
                } else {
                    var options = try ObjectReader(value, field: field, expected: "a boolean or an object {maxBytes?}")
                    changeValuesLimit = try options.optionalInteger("maxBytes", in: 0...Self.maximumChangeValuesLimit) ?? Self.defaultChangeValuesLimit
                    try options.finish()
                }
            }
        }
    }
}

struct PingParams: WireParams {
    var delayMilliseconds: Int
    init(_ reader: inout ObjectReader) throws(FieldError) {
        delayMilliseconds = try reader.optionalInteger("delayMilliseconds", in: 0...60_000) ?? 0
    }
}

/// `{source}`: the methods that read or drive one whole source.
struct SourceParams: WireParams {
    var source: String
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
    }
}

struct DestroySourceParams: WireParams {
    var name: String
    var cascade: Bool
    init(_ reader: inout ObjectReader) throws(FieldError) {
        name = try reader.string("name")
        cascade = try reader.optionalBool("cascade") ?? false
    }
}

struct SectionParams: WireParams {
    var source: String
    var section: Int
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
        section = try reader.integer("section", in: 0...Int.max)
    }
}

struct ObjectsInSectionParams: WireParams {
    var source: String
    var section: Int
    var start: Int
    var count: Int?
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
        section = try reader.integer("section", in: 0...Int.max)
        start = try reader.optionalInteger("start", in: 0...Int.max) ?? 0
        count = try reader.optionalInteger("count", in: 0...Int.max)
    }
}

struct IndexPathParams: WireParams {
    var source: String
    var indexPath: IndexPath
    var withRevision: Bool
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
        indexPath = try reader.required("indexPath", inPlace: Decode.indexPath(inPlace:), Decode.indexPath, expected: "[section, item], an array of two non-negative integers")
        withRevision = try reader.optionalBool("withRevision") ?? false
    }
}

/// `willDisplayObjectAtIndexPath`: no revision to ask for.
struct DisplayParams: WireParams {
    var source: String
    var indexPath: IndexPath
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
        indexPath = try reader.required("indexPath", inPlace: Decode.indexPath(inPlace:), Decode.indexPath, expected: "[section, item], an array of two non-negative integers")
    }
}

struct IndexPathForObjectParams: WireParams {
    var source: String
    var object: JSON
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
        // Any JSON value, null included, is an object a source may hold.
        guard let object = reader.rawValue("object") else { throw .missing("object", expected: "a JSON value") }
        self.object = object
    }
}

struct AllObjectsParams: WireParams {
    var source: String
    var withRevision: Bool
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
        withRevision = try reader.optionalBool("withRevision") ?? false
    }
}

/// `replaceObjects`, `updateObjects`: `{source, objects}`.
struct ObjectsParams: WireParams {
    var source: String
    var objects: [JSON]
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
        objects = try reader.required("objects", { value, field throws(FieldError) in try Decode.array(value, field) }, expected: "an array")
    }
}

struct InsertObjectsParams: WireParams {
    var source: String
    var objects: [JSON]
    var index: Int?
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
        objects = try reader.required("objects", { value, field throws(FieldError) in try Decode.array(value, field) }, expected: "an array")
        index = try reader.optionalInteger("index", in: 0...Int.max)
    }
}

struct RemoveObjectsParams: WireParams {
    var source: String
    var index: Int
    var count: Int
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
        index = try reader.integer("index", in: 0...Int.max)
        count = try reader.optionalInteger("count", in: 0...Int.max) ?? 1
    }
}

struct FetchDataParams: WireParams {
    var source: String
    var wait: Bool
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
        wait = try reader.optionalBool("wait") ?? false
    }
}

/// `setRefreshInterval`: `{source, seconds}`, seconds a number or null (no refreshes).
struct SetRefreshIntervalParams: WireParams {
    var source: String
    var seconds: Double?
    init(_ reader: inout ObjectReader) throws(FieldError) {
        source = try reader.string("source")
        // null is a value here (no refreshes), not an absent member.
        guard let value = reader.rawValue("seconds") else { throw .missing("seconds", expected: "a number of seconds in 1...86400, or null") }
        seconds = try RemoteConfigurationDecoding.refreshInterval(value, "seconds")
    }
}

/// `$/cancelRequest` (a notification): `{id}`, the id of the request to cancel.
struct CancelRequestParams {
    let id: JSON

    init(_ params: JSON?) throws(FieldError) {
        var reader = try ObjectReader(params, field: "")
        guard let id = reader.value("id") else { throw .missing("id", expected: "the id of a request: a string or a number") }
        guard [.string, .integer, .real].contains(id.kind) else {
            throw .mistyped("id", expected: "the id of a request: a string or a number", got: id)
        }
        self.id = id
        try reader.finish()
    }
}
