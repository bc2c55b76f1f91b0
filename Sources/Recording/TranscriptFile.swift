#if canImport(Glibc)
import Glibc
#endif

/// The recording's file, replaced whole each time: the text goes to a temporary file beside
/// it, which is then renamed over it, so a reader (or a crash) never sees half a transcript.
struct TranscriptFile: Sendable {
    struct WriteError: Error, CustomStringConvertible {
        let description: String
    }

    let path: String
    let warn: @Sendable (String) -> Void

    /// Writes `text`; a failure is reported once per call through `warn`, and serving goes on.
    func write(_ text: String) {
        do {
            try writeOrThrow(text)
        } catch {
            warn("recording: \(error)")
        }
    }

    func writeOrThrow(_ text: String) throws(WriteError) {
        let temporary = "\(path).partial-\(getpid())"
        // Only the user may read it: a session holds their data, if not their secrets.
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw WriteError(description: "cannot write \(temporary): \(String(cString: strerror(errno)))") }
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                let reason = String(cString: strerror(errno))
                close(descriptor)
                unlink(temporary)
                throw WriteError(description: "cannot write \(temporary): \(reason)")
            }
            written += count
        }
        close(descriptor)
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw WriteError(description: "cannot replace \(path): \(reason)")
        }
    }
}
