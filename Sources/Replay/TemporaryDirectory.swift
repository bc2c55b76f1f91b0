#if canImport(Glibc)
import Glibc
#endif

/// A directory of one's own under $TMPDIR (or /tmp), removed with what it holds.
package struct TemporaryDirectory {
    package let path: String

    /// nil when no directory could be made (the caller goes on without one).
    package init?(prefix: String) {
        let base = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(base)/\(prefix).XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else { return nil }
        path = String(cString: made)
    }

    /// Removes the files in it (it holds no directories), then the directory.
    package func remove() {
        guard let directory = opendir(path) else { return }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if name != ".", name != ".." { unlink("\(path)/\(name)") }
        }
        closedir(directory)
        rmdir(path)
    }
}
