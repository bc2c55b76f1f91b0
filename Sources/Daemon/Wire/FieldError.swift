import DataSources
import JSONKit
import JSONRPC

/// Every `-32602` the daemon sends is made here, from a `FieldError` (DataSources), always
/// with `data: {field, expected, got}` and the error's context.
extension FieldError {
    var responseError: ResponseError {
        .invalidParams(message, data: .object([("field", JSON(field)), ("expected", JSON(expected)), ("got", got)] + context))
    }
}

extension ResponseError {
    init(_ error: FieldError) { self = error.responseError }
}
