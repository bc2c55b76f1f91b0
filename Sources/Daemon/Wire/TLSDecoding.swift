#if canImport(Glibc)
import Glibc
#endif
import Basics
import DataSources
import JSONKit
import WireSchema

/// `remoteConfiguration.tls: {caFile?, certificateFile?, keyFile?}`: paths of PEM files,
/// each checked here, when the source is created, so that a missing, unreadable or non-PEM
/// file is refused as a bad member (`-32602` naming it) rather than failing every fetch.
///
/// The check is of the file's shape, not a parse of its certificates: the daemon core does
/// not link the TLS library (it builds and is fuzzed without SwiftNIO; HTTP is injected).
/// The files are read in full by HTTPGet when a request is made (so a renewed certificate
/// is picked up); what passes the shape check and still cannot be used there (a corrupt
/// certificate, a key that is not the certificate's) fails the fetch with kind `tls`,
/// naming the member.
enum TLSDecoding {
    static let expectation = "an object {caFile?, certificateFile?, keyFile?}"

    static let shape = Shape<TLSFiles?>(.ref("TLSFiles"), expected: expectation, decode: files)
    /// A bundle of every package root is about 200 KB.
    static let maximumFileSize = 16 << 20

    static func files(_ value: JSON, _ field: String) throws(FieldError) -> TLSFiles? {
        var reader = try ObjectReader(value, field: field, expected: expectation)
        let caFile = try reader.optional("caFile") { value, field throws(FieldError) in
            try pemFile(value, field, holding: .certificates)
        }
        let certificateFile = try reader.optional("certificateFile") { value, field throws(FieldError) in
            try pemFile(value, field, holding: .certificates)
        }
        let keyFile = try reader.optional("keyFile") { value, field throws(FieldError) in
            try pemFile(value, field, holding: .privateKey)
        }
        try reader.finish()
        if certificateFile != nil, keyFile == nil {
            throw FieldError(
                field: reader.path("keyFile"), expected: "the PEM file of the client certificate's private key", got: "nothing",
                message:
                    "\"\(reader.path("certificateFile"))\" needs \"\(reader.path("keyFile"))\": the PEM file of the client certificate's private key"
            )
        }
        if keyFile != nil, certificateFile == nil {
            throw FieldError(
                field: reader.path("certificateFile"), expected: "the PEM file of the client certificate", got: "nothing",
                message: "\"\(reader.path("keyFile"))\" needs \"\(reader.path("certificateFile"))\": the PEM file of the client certificate"
            )
        }
        let files = TLSFiles(caFile: caFile, certificateFile: certificateFile, keyFile: keyFile)
        return files.isEmpty ? nil : files
    }

    enum Content {
        case certificates, privateKey

        var expected: String {
            switch self {
            case .certificates: "a path to a readable PEM file of one or more certificates"
            case .privateKey: "a path to a readable PEM file of an unencrypted private key"
            }
        }
    }

    /// The path, `~/` expanded, once its file is found to hold PEM `content`.
    static func pemFile(_ value: JSON, _ field: String, holding content: Content) throws(FieldError) -> String {
        let given = try Decode.string(value, field, nonEmpty: true)
        let path: String
        if given.hasPrefix("~/") {
            guard let home = getenv("HOME").map({ String(cString: $0) }), home.hasPrefix("/") else {
                throw FieldError(
                    field: field, expected: content.expected, got: value,
                    message: "\"\(field)\" starts with ~/, but the daemon has no HOME to expand it with")
            }
            path = home + given.dropFirst()
        } else {
            path = given
        }
        guard path.hasPrefix("/") else {
            // Relative to what? The daemon's working directory is its client's business.
            throw FieldError(field: field, expected: "an absolute path, or one starting with ~/", got: value)
        }
        func refuse(_ problem: String) -> FieldError {
            FieldError(field: field, expected: content.expected, got: value, message: "\"\(field)\" names \(path), which \(problem)")
        }
        let text: [UInt8]
        switch contents(of: path) {
        case .success(let bytes): text = bytes
        case .failure(let problem): throw refuse(problem.text)
        }
        switch content {
        case .certificates:
            guard let blocks = pemBlocks(text, labels: ["CERTIFICATE"]) else {
                throw refuse("holds a \"-----BEGIN CERTIFICATE-----\" block that is not base64 or has no END line")
            }
            guard blocks > 0 else { throw refuse("holds no PEM certificate (a \"-----BEGIN CERTIFICATE-----\" block)") }
        case .privateKey:
            if contains(text, "-----BEGIN ENCRYPTED PRIVATE KEY-----") || contains(text, "Proc-Type: 4,ENCRYPTED") {
                throw refuse("holds an encrypted private key: the daemon has no passphrase to decrypt it with; give it the key unencrypted")
            }
            guard let blocks = pemBlocks(text, labels: ["PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY"]) else {
                throw refuse("holds a PEM private key block that is not base64 or has no END line")
            }
            guard blocks > 0 else { throw refuse("holds no PEM private key (a \"-----BEGIN PRIVATE KEY-----\" block)") }
        }
        return path
    }

    struct Problem: Error {
        let text: String
    }

    /// The file's bytes, at most `maximumFileSize` of them; errors in words.
    static func contents(of path: String) -> Result<[UInt8], Problem> {
        // Non-blocking: a FIFO must be refused below, not wait for a writer on the main loop.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            switch errno {
            case ENOENT: return .failure(Problem(text: "does not exist"))
            case EACCES, EPERM: return .failure(Problem(text: "cannot be read (permission denied)"))
            case ENOTDIR: return .failure(Problem(text: "does not exist (a part of the path is not a directory)"))
            case let code: return .failure(Problem(text: "cannot be read (\(String(cString: strerror(code)).lowercased()))"))
            }
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return .failure(Problem(text: "cannot be read")) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            return .failure(Problem(text: status.st_mode & S_IFMT == S_IFDIR ? "is a directory, not a file" : "is not a regular file"))
        }
        guard status.st_size <= maximumFileSize else {
            return .failure(Problem(text: "is larger than \(maximumFileSize >> 20) MiB: not a PEM file"))
        }
        do {
            // Grown past the limit since fstat: refused as it would have been then.
            guard let bytes = try FileDescriptor(rawValue: descriptor).readToEnd(atMost: maximumFileSize) else {
                return .failure(Problem(text: "is larger than \(maximumFileSize >> 20) MiB: not a PEM file"))
            }
            return .success(bytes)
        } catch {
            return .failure(Problem(text: "cannot be read (\(error.description.lowercased()))"))
        }
    }

    /// The number of `-----BEGIN <label>-----` ... `-----END <label>-----` blocks for any of
    /// `labels`, each holding base64 (whole groups of four, whitespace between); nil when one
    /// does not.
    static func pemBlocks(_ text: [UInt8], labels: [String]) -> Int? {
        var count = 0
        var rest = text[...]
        while let (label, begin) = firstBegin(in: rest, labels: labels) {
            let end = Array("-----END \(label)-----".utf8)
            guard let close = range(of: end, in: rest[begin...]) else { return nil }
            var symbols = 0
            var padding = false
            for byte in rest[begin..<close.lowerBound] {
                switch byte {
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"): continue
                case UInt8(ascii: "="): padding = true
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "+"), UInt8(ascii: "/"):
                    if padding { return nil }
                default: return nil
                }
                symbols += 1
            }
            guard symbols > 0, symbols % 4 == 0 else { return nil }
            count += 1
            rest = rest[close.upperBound...]
        }
        return count
    }

    /// The first BEGIN line among `labels`, and where its block's content starts.
    private static func firstBegin(in text: ArraySlice<UInt8>, labels: [String]) -> (String, Int)? {
        var best: (String, Int, Int)?
        for label in labels {
            if let found = range(of: Array("-----BEGIN \(label)-----".utf8), in: text), best.map({ found.lowerBound < $0.1 }) ?? true {
                best = (label, found.lowerBound, found.upperBound)
            }
        }
        return best.map { ($0.0, $0.2) }
    }

    private static func range(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Range<Int>? {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        var start = haystack.startIndex
        while start + needle.count <= haystack.endIndex {
            if haystack[start] == needle[0], haystack[start..<start + needle.count].elementsEqual(needle) {
                return start..<start + needle.count
            }
            start += 1
        }
        return nil
    }

    private static func contains(_ text: [UInt8], _ needle: String) -> Bool {
        range(of: Array(needle.utf8), in: text[...]) != nil
    }
}
