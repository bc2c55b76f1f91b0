#if canImport(Glibc)
import Glibc
#endif
import Basics
import DataSources
import JSONKit

/// The origins the person allowed each credential to go to: header values read from an
/// environment variable or a file (`{"env"}`, `{"file"}`) are sent only there. A list spec is
/// data people share, so a spec that names `{"env": "AWS_SECRET_ACCESS_KEY"}` and a host of its
/// own sends nothing until the person says yes (as VS Code's workspace trust and `direnv allow`
/// ask first). Clients ask, then call `allowCredential`, which writes the file.
///
/// The file is `$XDG_CONFIG_HOME/datasourced/allowed-credentials.json` (by default
/// `~/.config/datasourced/`), mode 0600, in a directory of mode 0700:
///
///     {"version": 1, "allowed": [{"env": "GITHUB_TOKEN", "origin": "https://api.github.com"},
///                                {"file": "/home/me/.config/gl/token", "origin": "https://gitlab.com"}]}
///
/// Files are held by their path with `~` expanded. It is looked at before each request that
/// would send such a value, and read again when it changed (another daemon, or the person,
/// allowed or removed an entry). A file that is not a regular file, not the
/// daemon's user's, writable by others, larger than `maximumFileBytes` or not of this form
/// allows nothing (and is logged once, saying why); its entries past `maximumEntries` are not read.
package final class CredentialAllowances: CredentialPolicy {
    package struct Entry: Hashable, Sendable {
        package enum Credential: Hashable, Sendable {
            case environment(String)
            /// The path with `~` expanded.
            case file(String)
        }
        package let credential: Credential
        /// As `URLResolution.shownOrigin` writes it.
        package let origin: String

        package init(credential: Credential, origin: String) {
            self.credential = credential
            self.origin = origin
        }

        /// A file's entry names it with its links resolved, as `allows` looks it up.
        var resolved: Entry {
            guard case .file(let path) = credential else { return self }
            return Entry(credential: .file(ExternalValues.resolvedPath(path)), origin: origin)
        }

        var json: JSON {
            switch credential {
            case .environment(let name): ["env": JSON(name), "origin": JSON(origin)]
            case .file(let path): ["file": JSON(path), "origin": JSON(origin)]
            }
        }
    }

    /// Why the file could not be written, for the `-32603` answer.
    package struct WriteProblem: Error, Sendable {
        package let message: String
    }

    package static let fileName = "allowed-credentials.json"
    /// An allowances file is a few lines; a larger one is not read (into memory or at all).
    package static let maximumFileBytes = 1 << 20
    package static let maximumEntries = 10_000

    /// The file; nil when the daemon has neither `XDG_CONFIG_HOME` nor a home directory.
    package let path: String?
    private let warn: @Sendable (String) -> Void

    private struct State {
        var entries: Set<Entry> = []
        /// What the file was when last read (device, inode, size, modification time); nil before.
        var stamp: [Int]?
        var warned: String?
    }
    private let state = LockedValue(State())

    package init(path: String?, warn: @escaping @Sendable (String) -> Void = { _ in }) {
        self.path = path
        self.warn = warn
    }

    /// `$XDG_CONFIG_HOME/datasourced/allowed-credentials.json`, else under `~/.config`; nil
    /// when neither is known. XDG_CONFIG_HOME counts only when absolute (the XDG spec).
    package static func defaultPath(environment: (String) -> String?) -> String? {
        if let configured = environment("XDG_CONFIG_HOME"), configured.hasPrefix("/") {
            return configured + "/datasourced/" + fileName
        }
        guard let home = environment("HOME"), home.hasPrefix("/") else { return nil }
        return home + "/.config/datasourced/" + fileName
    }

    // MARK: Reading

    package func allows(_ source: ExternalHeader.Source, to origin: String) -> Bool {
        let entry: Entry
        switch source {
        case .environment(let name): entry = Entry(credential: .environment(name), origin: origin)
        case .file(_, let path): entry = Entry(credential: .file(ExternalValues.resolvedPath(path)), origin: origin)
        }
        // Looked at again for every request (a stat; a read only when it changed): an
        // allowance the person removes from the file stops the next request.
        return state.withLock { state in
            refresh(&state)
            return state.entries.contains(entry)
        }
    }

    /// Every allowance now in the file.
    package var entries: Set<Entry> {
        state.withLock { state in
            refresh(&state)
            return state.entries
        }
    }

    /// Reads the file again when it changed since it was last read.
    private func refresh(_ state: inout State) {
        guard let path else { return }
        var status = stat()
        guard lstat(path, &status) == 0 else {
            state.entries = []
            state.stamp = nil
            return
        }
        let stamp = [
            Int(truncatingIfNeeded: status.st_dev), Int(truncatingIfNeeded: status.st_ino), Int(truncatingIfNeeded: status.st_size),
            status.st_mtim.tv_sec, status.st_mtim.tv_nsec,
        ]
        guard stamp != state.stamp else { return }
        state.stamp = stamp
        switch Self.read(path) {
        case .success(let entries):
            state.entries = entries
            state.warned = nil
        case .failure(let problem):
            state.entries = []
            if state.warned != problem.message {
                state.warned = problem.message
                warn("the credential allowances in \(path) are not used: \(problem.message)")
            }
        }
    }

    /// The entries of the file at `path`, or why none can be trusted.
    static func read(_ path: String) -> Result<Set<Entry>, WriteProblem> {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW)
        guard descriptor >= 0 else { return .failure(WriteProblem(message: "it cannot be opened: \(String(cString: strerror(errno)))")) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return .failure(WriteProblem(message: String(cString: strerror(errno)))) }
        guard status.st_mode & S_IFMT == S_IFREG else { return .failure(WriteProblem(message: "it is not a regular file")) }
        guard status.st_uid == geteuid() else { return .failure(WriteProblem(message: "it belongs to another user")) }
        guard status.st_mode & 0o022 == 0 else {
            return .failure(
                WriteProblem(message: "others may write it (mode \(String(status.st_mode & 0o777, radix: 8)); it must be 0600)"))
        }
        let bytes: [UInt8]
        do {
            guard let read = try FileDescriptor(rawValue: descriptor).readToEnd(atMost: maximumFileBytes) else {
                return .failure(WriteProblem(message: "it is larger than \(maximumFileBytes) bytes"))
            }
            bytes = read
        } catch {
            return .failure(WriteProblem(message: "it cannot be read: \(String(cString: strerror(error.rawValue)))"))
        }
        if bytes.allSatisfy({ $0 == 32 || $0 == 9 || $0 == 10 || $0 == 13 }) { return .success([]) }
        return parse(bytes)
    }

    /// The file's form: `{"version": 1, "allowed": [ENTRY...]}`, each entry exactly one of
    /// `env` or `file` and an `origin`. A malformed entry is a malformed file: a file the
    /// person edited by hand and got wrong is reported, not half used.
    static func parse(_ bytes: [UInt8]) -> Result<Set<Entry>, WriteProblem> {
        if let depth = bytes.withUnsafeBytes({ JSON.nestingDepthExceeding(8, in: $0) }) {
            return .failure(WriteProblem(message: "it nests deeper than 8 levels (at byte \(depth))"))
        }
        let document: JSON
        do {
            document = try JSON.parse(bytes)
        } catch {
            return .failure(WriteProblem(message: "it is not JSON: \(error.description)"))
        }
        guard document["version"]?.integerValue == 1 else { return .failure(WriteProblem(message: "\"version\" is not 1")) }
        guard let allowed = document["allowed"]?.arrayValue else { return .failure(WriteProblem(message: "\"allowed\" is not an array")) }
        var entries: Set<Entry> = []
        for (index, item) in allowed.prefix(maximumEntries).enumerated() {
            guard let entry = entry(item) else {
                return .failure(
                    WriteProblem(
                        message:
                            "allowed[\(index)] is not {\"env\": NAME, \"origin\": ORIGIN} or {\"file\": ABSOLUTE_PATH, \"origin\": ORIGIN}")
                )
            }
            entries.insert(entry)
        }
        return .success(entries)
    }

    private static func entry(_ item: JSON) -> Entry? {
        guard let members = item.objectMembers, members.count == 2, let given = item["origin"]?.stringValue,
            let origin = origin(given)
        else { return nil }
        if let name = item["env"]?.stringValue, ExternalValues.isVariableName(name) {
            return Entry(credential: .environment(name), origin: origin)
        }
        if let path = item["file"]?.stringValue, path.hasPrefix("/"), path.utf8.count <= 4096, !path.utf8.contains(0) {
            return Entry(credential: .file(path), origin: origin)
        }
        return nil
    }

    /// `text` as an origin in the form allowances hold (`https://api.github.com`), or nil when
    /// it is not one: an http or https URL with a host, an optional port in 1...65535, and no
    /// user, path (but `/`), query or fragment.
    package static func origin(_ text: String) -> String? {
        guard text.utf8.count <= 2048, !text.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } ?? false })
        else { return nil }
        let lower = text.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://") else { return nil }
        var rest = Substring(text.drop(while: { $0 != ":" }).dropFirst(3))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.isEmpty, !rest.contains(where: { "/?#@\\".contains($0) }) else { return nil }
        guard URLResolution.authorityProblem(in: text) == nil else { return nil }
        return URLResolution.shownOrigin(of: text)
    }

    // MARK: Writing

    /// Adds `entry` to the file (made if missing, with its directory), under an exclusive lock
    /// of the directory, so that daemons allowing at once lose none of each other's entries.
    /// The new file is written beside the old one and renamed over it: a reader sees the old
    /// file or the new one, never a part.
    package func allow(_ entry: Entry) throws(WriteProblem) {
        guard let path else {
            throw WriteProblem(message: "the daemon has no place for credential allowances: set HOME or XDG_CONFIG_HOME")
        }
        let directory = String(path[..<path.lastIndex(of: "/")!])
        try Self.makeDirectory(directory)
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryDescriptor >= 0 else {
            throw WriteProblem(message: "\(directory) cannot be opened: \(String(cString: strerror(errno)))")
        }
        defer { close(directoryDescriptor) }
        // Not waited on for good: this runs on the main loop, and the daemon holding the lock
        // may be stopped (Ctrl-Z). Two seconds, then the client is told.
        var attempts = 0
        while flock(directoryDescriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, attempts < 100 else {
                throw WriteProblem(
                    message: errno == EWOULDBLOCK
                        ? "\(directory) is locked by another daemon writing its allowances; try again"
                        : "\(directory) cannot be locked: \(String(cString: strerror(errno)))")
            }
            attempts += 1
            usleep(20_000)
        }
        var current: Set<Entry> = []
        var status = stat()
        if lstat(path, &status) == 0 {
            switch Self.read(path) {
            case .success(let entries): current = entries
            case .failure(let problem): throw WriteProblem(message: "\(path) is not written over: \(problem.message)")
            }
        } else if errno != ENOENT {
            throw WriteProblem(message: "\(path) cannot be read: \(String(cString: strerror(errno)))")
        }
        let entry = entry.resolved
        guard !current.contains(entry) else { return state.withLock { refresh(&$0) } }
        guard current.count < Self.maximumEntries else {
            throw WriteProblem(message: "\(path) already holds \(Self.maximumEntries) allowances, the most it may")
        }
        current.insert(entry)
        try Self.write(current, to: path)
        state.withLock { refresh(&$0) }
    }

    /// The directory and its missing parents, each made mode 0700.
    private static func makeDirectory(_ directory: String) throws(WriteProblem) {
        var status = stat()
        if stat(directory, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFDIR else { throw WriteProblem(message: "\(directory) is not a directory") }
            return
        }
        if let slash = directory.lastIndex(of: "/"), slash != directory.startIndex {
            try makeDirectory(String(directory[..<slash]))
        }
        guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
            throw WriteProblem(message: "\(directory) cannot be made: \(String(cString: strerror(errno)))")
        }
    }

    private static func write(_ entries: Set<Entry>, to path: String) throws(WriteProblem) {
        // In a stable order: a file people read and diff.
        let sorted = entries.map(\.json).sorted { $0.text() < $1.text() }
        let document: JSON = ["version": 1, "allowed": .array(sorted)]
        var bytes = document.encoded(format: .pretty)
        bytes.append(10)
        // A name no other daemon, nor this one after a crash, has left behind.
        let temporary = path + ".\(getpid()).\(UInt64.random(in: 0...UInt64.max)).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw WriteProblem(message: "\(temporary) cannot be made: \(String(cString: strerror(errno)))") }
        var written = false
        defer {
            if !written { unlink(temporary) }
        }
        do {
            defer { close(descriptor) }
            do {
                _ = try FileDescriptor(rawValue: descriptor).writeAll(bytes)
            } catch {
                throw WriteProblem(message: "\(temporary) cannot be written: \(error)")
            }
            guard fsync(descriptor) == 0 else {
                throw WriteProblem(message: "\(temporary) cannot be written: \(String(cString: strerror(errno)))")
            }
        }
        guard rename(temporary, path) == 0 else {
            throw WriteProblem(message: "\(path) cannot be replaced: \(String(cString: strerror(errno)))")
        }
        written = true
    }
}
