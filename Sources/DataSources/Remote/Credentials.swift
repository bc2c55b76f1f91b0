#if canImport(Glibc)
import Glibc
#endif
import Basics
import JSONKit

/// A header whose value is read when each request is made, from the daemon's environment
/// (`{"env": "GITHUB_TOKEN", "prefix": "Bearer "}`) or from a file (`{"file": "~/.config/x/token"}`):
/// a token stays out of the client's configuration, and a rotated one is used by the next
/// request. What is read is a secret whatever the header's name: it is kept out of errors,
/// logs, recordings and `describeSource` as the values of secret headers are.
package struct ExternalHeader: Sendable, Equatable {
    package enum Source: Sendable, Equatable {
        /// A variable of the daemon's environment.
        case environment(String)
        /// A file: the path as the client gave it (what messages name) and as opened (`~` expanded).
        case file(given: String, path: String)
    }

    package var name: String
    package var source: Source
    /// Sent before the value read (`"Bearer "`).
    package var prefix: String

    package init(name: String, source: Source, prefix: String = "") {
        self.name = name
        self.source = source
        self.prefix = prefix
    }

    /// Where the value comes from, for messages: never the value itself.
    package var description: String {
        switch source {
        case .environment(let variable):
            return "the environment variable \(variable)"
        case .file(let given, let path):
            return given == path ? "the file \(given)" : "the file \(given) (\(path))"
        }
    }

    /// What the variable or file holds (without the prefix), or why it cannot be read.
    package func read() -> Result<String, ExternalValues.Problem> {
        let bytes: [UInt8]
        switch source {
        case .environment(let variable):
            guard let value = ExternalValues.environmentBytes(variable) else {
                return .failure(ExternalValues.Problem(message: "\(description) is not set"))
            }
            bytes = value
        case .file(_, let path):
            switch ExternalValues.readFile(path) {
            case .success(let read): bytes = read
            case .failure(let reason): return .failure(ExternalValues.Problem(message: "\(description) \(reason.message)"))
            }
        }
        switch ExternalValues.headerValue(bytes) {
        case .success(let value): return .success(value)
        case .failure(let reason): return .failure(ExternalValues.Problem(message: "\(description) \(reason.message)"))
        }
    }
}

extension ExternalHeader.Source {
    /// As clients name it, and as `allowCredential` takes it: `{"env": NAME}`, or `{"file": PATH}`
    /// with the path as the list spec gave it.
    package var reference: JSON {
        switch self {
        case .environment(let variable): ["env": JSON(variable)]
        case .file(let given, _): ["file": JSON(given)]
        }
    }

    /// For messages: `the environment variable NAME`, `the file PATH`.
    package var description: String {
        switch self {
        case .environment(let variable): "the environment variable \(variable)"
        case .file(let given, let path):
            ExternalValues.resolvedPath(path) == path || ExternalValues.resolvedPath(path) == given
                ? "the file \(given)" : "the file \(given) (\(ExternalValues.resolvedPath(path)))"
        }
    }
}

/// Which values read from the environment or a file may be sent to which origins: the ones the
/// person allowed (the daemon's allowances file). A source whose request would send one that is
/// not allowed fails it with kind `credentialNotAllowed`, before anything is sent.
package protocol CredentialPolicy: Sendable {
    /// Whether `source`'s value may go to `origin` (`scheme://host[:port]`, as
    /// `URLResolution.shownOrigin` writes it). Called on the main loop, once a request.
    func allows(_ source: ExternalHeader.Source, to origin: String) -> Bool
}

/// Reading header values from the environment and from files, with the checks a value read
/// from outside needs before it goes into a request.
package enum ExternalValues {
    /// Why a value cannot be read: names the variable or the file, never what it holds (or,
    /// from the functions below, the phrase that follows the name).
    package struct Problem: Error, Sendable, Equatable {
        package let message: String
    }

    /// A token file is small: a larger one is a mistake (a wrong path), not read into memory.
    package static let maximumFileBytes = 64 << 10
    /// Longer paths are refused before any system call (PATH_MAX).
    static let maximumPathBytes = 4096

    /// Replaces the daemon's environment for what runs in a task (tests read variables they
    /// set here, with no `setenv` racing other threads' `getenv`); nil: the process's own.
    @TaskLocal package static var environmentOverride: [String: String]?

    /// The variable's bytes, nil when it is not set.
    static func environmentBytes(_ name: String) -> [UInt8]? {
        if let environmentOverride { return environmentOverride[name].map { Array($0.utf8) } }
        guard let value = getenv(name) else { return nil }
        return Array(UnsafeBufferPointer(start: UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self), count: strlen(value)))
    }

    /// Whether `name` can name an environment variable (POSIX leaves the rest to `=` and NUL).
    package static func isVariableName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 256 && !name.utf8.contains(UInt8(ascii: "=")) && !name.utf8.contains(0)
    }

    /// The value to send: without its trailing line break (what `echo` and editors leave),
    /// non-empty, UTF-8, and free of control characters, which would end the header line early.
    static func headerValue(_ bytes: [UInt8]) -> Result<String, Problem> {
        var end = bytes.count
        while end > 0, bytes[end - 1] == UInt8(ascii: "\n") || bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        let trimmed = bytes[..<end]
        if trimmed.isEmpty { return .failure(Problem(message: "is empty")) }
        if trimmed.contains(where: { ($0 < 0x20 && $0 != UInt8(ascii: "\t")) || $0 == 0x7F }) {
            return .failure(Problem(message: "holds a line break or another control character, which a header value cannot carry"))
        }
        guard let text = String(validating: trimmed, as: UTF8.self) else { return .failure(Problem(message: "is not UTF-8 text")) }
        return .success(text)
    }

    /// `given` as the daemon opens it: `~` and `~/...` are under the home directory; other
    /// paths must be absolute, as the daemon's working directory is not the client's.
    package static func expandedPath(_ given: String) -> Result<String, Problem> {
        if given.isEmpty { return .failure(Problem(message: "is empty")) }
        if given.utf8.contains(0) { return .failure(Problem(message: "holds a NUL byte")) }
        var path = given
        if given == "~" || given.hasPrefix("~/") {
            guard let home = homeDirectory() else {
                return .failure(Problem(message: "starts with ~, but the daemon has no home directory (HOME is not set)"))
            }
            path = home + given.dropFirst()
        } else if given.hasPrefix("~") {
            return .failure(Problem(message: "starts with ~name, which is not expanded: write the path in full, or from ~/"))
        } else if !given.hasPrefix("/") {
            return .failure(
                Problem(message: "is relative: write an absolute path, or one from ~/ (the daemon's working directory is not the client's)")
            )
        }
        if path.utf8.count > maximumPathBytes { return .failure(Problem(message: "is longer than \(maximumPathBytes) bytes")) }
        return .success(path)
    }

    /// `path` with every symbolic link and `..` resolved (realpath), as credential allowances
    /// hold files: a link a cloned repository ships (`token -> ~/.git-credentials`) is asked
    /// about, and allowed, as the file it leads to. The path as it is when it cannot be resolved.
    package static func resolvedPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func homeDirectory() -> String? {
        if let home = environmentBytes("HOME"), !home.isEmpty { return String(decoding: home, as: UTF8.self) }
        var entry = passwd(), result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(getuid(), &entry, &buffer, buffer.count, &result) == 0, result != nil, let directory = entry.pw_dir else {
            return nil
        }
        let home = String(cString: directory)
        return home.isEmpty ? nil : home
    }

    /// The bytes of a regular file of at most `maximumFileBytes`, or why not (a phrase that
    /// follows the file's name). Opened without blocking: a FIFO is refused, not waited on.
    static func readFile(_ path: String) -> Result<[UInt8], Problem> {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else { return .failure(Problem(message: reason(errno))) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return .failure(Problem(message: reason(errno))) }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: return .failure(Problem(message: "is a directory, not a file"))
        default: return .failure(Problem(message: "is not a regular file (a device, a FIFO or a socket)"))
        }
        guard status.st_size <= maximumFileBytes else { return .failure(Problem(message: "is larger than \(maximumFileBytes) bytes")) }
        // Read to the end, not to st_size: the file may grow meanwhile, and some report 0.
        let bytes: [UInt8]
        do {
            guard let read = try FileDescriptor(rawValue: descriptor).readToEnd(atMost: maximumFileBytes) else {
                return .failure(Problem(message: "is larger than \(maximumFileBytes) bytes"))
            }
            bytes = read
        } catch {
            return .failure(Problem(message: reason(error.rawValue)))
        }
        return .success(bytes)
    }

    private static func reason(_ code: Int32) -> String {
        switch code {
        case ENOENT: "does not exist"
        case ENOTDIR: "does not exist (a part of its path is not a directory)"
        case EACCES, EPERM: "cannot be read: permission denied"
        case ELOOP: "cannot be opened: too many symbolic links"
        default: "cannot be read: \(String(cString: strerror(code)))"
        }
    }
}

/// What one request sends besides the configuration's own headers, read as it is made.
struct RequestCredentials {
    /// Every header of the request: the configured ones, those read, and Basic authorization.
    var headers: [(name: String, value: String)]
    /// The values read and the Basic credentials: kept out of errors and recordings.
    var secrets: [String]
    /// Lower-cased names of the headers that go to the source's own origin only: secret ones,
    /// those read from the environment or a file, Basic authorization. A redirect to another
    /// origin drops them.
    var originBound: Set<String> = []
    /// What the values read add to the cache key (nil when the source reads none): two tokens
    /// never share an entry. The store keeps only a SHA-256 hash of the key.
    var cacheMaterial: String?
}

extension RemoteConfiguration {
    /// Where this source's requests start: the base URL with `apiPath` resolved against it
    /// (a full URL there replaces the base's origin). Its credentials go there only.
    package var ownOrigin: String? {
        URLResolution.origin(of: URLResolution.requestURL(baseURL: baseURL, apiPath: apiPath, query: []))
    }

    /// The headers `url` is requested with, the external values read now; or, when one cannot
    /// be read (a variable unset, a file gone since `createSource`) or may not go to `url`'s
    /// origin (`policy`; nil: every one configured may go to the source's own origin), the
    /// failure of the fetch.
    ///
    /// A URL on another origin than the source's own (a next URL that `allowCrossOrigin` lets
    /// leave) gets the configured headers that are not secret, and nothing else: no value
    /// read from outside, no secret header, no Basic authorization.
    func credentials(for url: String, policy: (any CredentialPolicy)? = nil) -> Result<RequestCredentials, FetchError> {
        guard let origin = URLResolution.origin(of: url), origin == ownOrigin else {
            return .success(
                RequestCredentials(
                    headers: headers.filter { !Self.isSecretHeader($0.name) }, secrets: [],
                    cacheMaterial: externalCacheMaterial()))
        }
        if let policy {
            let shown = URLResolution.shownOrigin(of: url) ?? origin
            if let refused = externalHeaders.first(where: { !policy.allows($0.source, to: shown) }) {
                var error = FetchError(
                    kind: .credentialNotAllowed,
                    message:
                        "header \"\(refused.name)\" was not sent: \(refused.source.description) is not allowed to go to \(shown); allow it with allowCredential (clients ask you first)"
                )
                // A file is named as it is opened, links resolved: what the person is asked
                // about is the file that would be sent.
                if case .file(_, let path) = refused.source {
                    let resolved = ExternalValues.resolvedPath(path)
                    error.credential = .file(given: resolved, path: resolved)
                } else {
                    error.credential = refused.source
                }
                error.origin = shown
                return .failure(error)
            }
        }
        let read: [ReadHeader]
        switch readExternalHeaders() {
        case .failure(let error): return .failure(error)
        case .success(let values): read = values
        }
        var headers = self.headers + read.map { ($0.name, $0.value) }
        // What was read, as sent and on its own: a server may echo the token without its "Bearer ".
        var secrets = read.flatMap { $0.value == $0.read ? [$0.value] : [$0.value, $0.read] }
        var originBound = Set(self.headers.map { $0.name.lowercased() }.filter(Self.isSecretHeader))
        originBound.formUnion(read.map { $0.name.lowercased() })
        // Basic authorization from `user:password@` in the base URL, as curl sends it: to the
        // base URL's origin only, and not over an Authorization header the source sets.
        if let basic = BasicCredentials(url: baseURL), origin == URLResolution.origin(of: baseURL),
            !headers.contains(where: { $0.name.lowercased() == "authorization" })
        {
            headers.append(("Authorization", "Basic " + basic.token))
            secrets.append(basic.token)
            if !basic.password.isEmpty { secrets.append(basic.password) }
            originBound.insert("authorization")
        }
        return .success(
            RequestCredentials(
                headers: headers, secrets: secrets, originBound: originBound,
                cacheMaterial: externalHeaders.isEmpty ? nil : Self.cacheMaterial(read.map(\.value))))
    }

    /// An external header as read for one request.
    struct ReadHeader {
        let name: String
        /// As sent: the prefix, then what was read.
        let value: String
        /// What the variable or file holds.
        let read: String
    }

    /// The external headers' values, read now.
    func readExternalHeaders() -> Result<[ReadHeader], FetchError> {
        var read: [ReadHeader] = []
        for header in externalHeaders {
            switch header.read() {
            case .success(let value):
                read.append(ReadHeader(name: header.name, value: header.prefix + value, read: value))
            case .failure(let problem):
                // `transport`: the request could not be made. The message says what to fix.
                return .failure(FetchError(kind: .transport, message: "header \"\(header.name)\" was not sent: \(problem.message)"))
            }
        }
        return .success(read)
    }

    /// The cache key's part for the values read now, nil when the source reads none or one
    /// cannot be read.
    func externalCacheMaterial() -> String? {
        guard !externalHeaders.isEmpty, case .success(let read) = readExternalHeaders() else { return nil }
        return Self.cacheMaterial(read.map(\.value))
    }

    private static func cacheMaterial(_ values: some Sequence<String>) -> String {
        // Each value with its length first: no two lists of values make the same text.
        values.map { "\($0.utf8.count):\($0)" }.joined(separator: "\n")
    }
}

/// `user:password@` of a URL's authority, percent-decoded, as `Authorization: Basic`.
struct BasicCredentials {
    let user: String
    let password: String

    init?(url: String) {
        guard let authority = URLResolution.Components(url).authority, let at = authority.lastIndex(of: "@") else { return nil }
        let userInfo = authority[..<at]
        let colon = userInfo.firstIndex(of: ":")
        let user = URLResolution.percentDecoded(userInfo[..<(colon ?? userInfo.endIndex)])
        let password = colon.map { URLResolution.percentDecoded(userInfo[userInfo.index(after: $0)...]) } ?? ""
        guard !user.isEmpty || !password.isEmpty else { return nil }
        self.user = user
        self.password = password
    }

    /// RFC 7617: base64 of `user:password`.
    var token: String { Base64.encoded(Array((user + ":" + password).utf8)) }
}

enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encoded(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var group: UInt32 = 0
            for offset in 0..<3 { group = group << 8 | UInt32(offset < count ? bytes[index + offset] : 0) }
            for position in 0..<4 {
                output.append(position <= count ? alphabet[Int(group >> UInt32(18 - 6 * position) & 63)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }
}
