import DataSources
import JSONKit
import JSONRPC
import WireSchema

/// Every `-32602` the daemon sends is made here, from a `FieldError` (WireSchema), always
/// with `data: {field, expected, got}` and the error's context.
extension FieldError {
    var responseError: ResponseError {
        .invalidParams(message, data: .object([("field", JSON(field)), ("expected", JSON(expected)), ("got", got)] + context))
    }
}

extension ResponseError {
    init(_ error: FieldError) { self = error.responseError }
}
