import CJansson

/// The one owner of one jansson reference.
///
/// jansson hands out three kinds of references: *new* ones (from constructors and
/// `json_loadb`), which the caller must release; *borrowed* ones (from getters such as
/// `json_object_get`), which are valid only while the parent lives; and it *steals* the
/// references passed to the `_new` setters. Every pointer that leaves jansson is wrapped
/// here at once, through the initialiser that names which kind it is, and released
/// exactly once in `deinit`. No other file in the package calls `json_incref` or
/// `json_decref`.
///
/// The tree behind a reference is frozen once wrapped: jansson's reference counts are
/// atomic but its mutations are not, so a value may cross threads only because nothing
/// mutates it after construction. It crosses them only inside a `JSON`, whose `Sendable`
/// says so.
final class Reference {
    let pointer: UnsafeMutablePointer<json_t>

    /// Takes over a new reference (the caller's count is moved here).
    init(new pointer: UnsafeMutablePointer<json_t>) {
        self.pointer = pointer
    }

    /// Adds a count for a borrowed reference, so the value outlives its parent.
    init(borrowed pointer: UnsafeMutablePointer<json_t>) {
        json_incref(pointer)
        self.pointer = pointer
    }

    deinit {
        json_decref(pointer)
    }
}

/// Unwraps a constructor result; jansson returns NULL only when malloc fails.
@inline(__always)
func newReference(_ pointer: UnsafeMutablePointer<json_t>?) -> Reference {
    guard let pointer else { fatalError("jansson: out of memory") }
    return Reference(new: pointer)
}

/// Calls `body` with a pointer to the UTF-8 bytes of `string` and their count; never a
/// null pointer, even for the empty string, since jansson dereferences what it is given.
@inline(__always)
func withCChars<R>(_ string: String, _ body: (UnsafePointer<CChar>, Int) -> R) -> R {
    var string = string
    return string.withUTF8 { utf8 in
        if let base = utf8.baseAddress {
            return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) { body($0, utf8.count) }
        }
        return withUnsafePointer(to: CChar(0)) { body($0, 0) }
    }
}
