#if canImport(Glibc)
import Glibc
#endif
import DataSources
import NIOSSL
import Basics

/// What a GET over HTTPS trusts and presents, as AsyncHTTPClient's per-request TLS
/// configuration.
///
/// Trust: the source's `caFile`, added to the base roots. The base roots are the files named
/// by `SSL_CERT_FILE` and `SSL_CERT_DIR` when the daemon's environment sets either, as
/// OpenSSL, curl and Python's requests read them (they stand in for the system store); else
/// the system store. Verification is always full, host name included: nothing turns it off.
///
/// The PEM files are read here, when a request is made, and kept until they change (a
/// renewed certificate is picked up without a restart). AsyncHTTPClient keys its pooled
/// connections and TLS contexts by the configuration, so requests with the same files
/// share connections, and changed files get new ones.
final class TLSTrust: Sendable {
    /// `SSL_CERT_FILE` and `SSL_CERT_DIR`; nil when unset or empty.
    let environmentFile: String?
    let environmentDirectory: String?
    private let files = PEMFiles()

    init(environment: [String: String]) {
        environmentFile = environment["SSL_CERT_FILE"].flatMap { $0.isEmpty ? nil : $0 }
        environmentDirectory = environment["SSL_CERT_DIR"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The configuration for a GET of `url`; nil for plain HTTP, and for HTTPS with nothing
    /// to add to AsyncHTTPClient's default (the system store, no client certificate).
    func configuration(for tls: TLSFiles?, url: String, target: String) throws(FetchError) -> TLSConfiguration? {
        guard url.lowercased().hasPrefix("https:") else { return nil }
        let tls = tls ?? TLSFiles()
        guard tls.caFile != nil || tls.certificateFile != nil || environmentFile != nil || environmentDirectory != nil else { return nil }
        var configuration = TLSConfiguration.makeClientConfiguration()
        do throws(PEMFiles.Problem) {
            // SSL_CERT_FILE is read here only to be checked (and kept until it changes): it
            // goes in by path, as hashing a bundle of every package root on each request, to
            // find its pooled connections, would cost more than the request. A directory goes
            // in as trust roots (NIOSSL looks certificates up in it by hash, as OpenSSL does);
            // additional roots must be files.
            if let directory = environmentDirectory, let problem = PEMFiles.directoryProblem(directory) {
                throw PEMFiles.Problem(text: "SSL_CERT_DIR \(directory) \(problem)")
            }
            if let file = environmentFile { _ = try files.certificates(file, member: "SSL_CERT_FILE") }
            switch (environmentFile, environmentDirectory) {
            case (let file?, let directory?):
                configuration.trustRoots = .file(directory)
                configuration.additionalTrustRoots = [.file(file)]
            case (let file?, nil):
                configuration.trustRoots = .file(file)
            case (nil, let directory?):
                configuration.trustRoots = .file(directory)
            case (nil, nil):
                configuration.trustRoots = .default
            }
            if let caFile = tls.caFile {
                configuration.additionalTrustRoots.append(
                    .certificates(try files.certificates(caFile, member: "remoteConfiguration.tls.caFile")))
            }
            if let certificateFile = tls.certificateFile, let keyFile = tls.keyFile {
                configuration.certificateChain = try files.certificates(certificateFile, member: "remoteConfiguration.tls.certificateFile")
                    .map { .certificate($0) }
                configuration.privateKey = .privateKey(try files.privateKey(keyFile, member: "remoteConfiguration.tls.keyFile"))
            }
        } catch {
            throw FetchError(kind: .tls, message: "could not set up TLS for \(target): \(error.text)")
        }
        return configuration
    }
}

/// PEM files read once and kept until they change on disk (their size, inode or
/// modification time differs).
final class PEMFiles: Sendable {
    struct Problem: Error {
        let text: String
    }

    private struct Stamp: Equatable {
        var device: UInt64, inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int
    }

    private enum Material: Sendable {
        case certificates([NIOSSLCertificate])
        case key(NIOSSLPrivateKey)
    }

    /// A CA bundle of every package root is about 200 KB; anything past this is not a PEM file.
    static let maximumFileSize = 16 << 20
    /// Distinct paths kept; past it the cache starts over (sources name a handful).
    static let maximumEntries = 64

    private let cache = LockedValue<[String: (stamp: Stamp, material: Material)]>([:])

    func certificates(_ path: String, member: String) throws(Problem) -> [NIOSSLCertificate] {
        let material = try load(path, member: member) { bytes throws(Problem) in
            guard let certificates = try? NIOSSLCertificate.fromPEMBytes(bytes), !certificates.isEmpty else {
                throw Problem(text: "\(member) \(path) holds no PEM certificate that can be read")
            }
            return .certificates(certificates)
        }
        guard case .certificates(let certificates) = material else { throw Problem(text: "\(member) \(path) holds no PEM certificate") }
        return certificates
    }

    func privateKey(_ path: String, member: String) throws(Problem) -> NIOSSLPrivateKey {
        let material = try load(path, member: member) { bytes throws(Problem) in
            guard let key = try? NIOSSLPrivateKey(bytes: bytes, format: .pem) else {
                throw Problem(text: "\(member) \(path) holds no unencrypted PEM private key that can be read")
            }
            return .key(key)
        }
        guard case .key(let key) = material else { throw Problem(text: "\(member) \(path) holds no PEM private key") }
        return key
    }

    private func load(_ path: String, member: String, parse: ([UInt8]) throws(Problem) -> Material) throws(Problem) -> Material {
        // Non-blocking: a FIFO is refused below, not waited on.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw Problem(text: "\(member) \(path) \(Self.openProblem(errno))") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw Problem(text: "\(member) \(path) cannot be read") }
        guard status.st_mode & S_IFMT == S_IFREG else { throw Problem(text: "\(member) \(path) is not a file") }
        let stamp = Stamp(
            device: UInt64(status.st_dev), inode: UInt64(status.st_ino), size: Int64(status.st_size),
            seconds: status.st_mtim.tv_sec, nanoseconds: status.st_mtim.tv_nsec)
        if let kept = cache.withLock({ $0[path] }), kept.stamp == stamp { return kept.material }
        guard status.st_size <= Self.maximumFileSize else {
            throw Problem(text: "\(member) \(path) is larger than \(Self.maximumFileSize >> 20) MiB: not a PEM file")
        }
        let bytes: [UInt8]?
        do {
            bytes = try FileDescriptor(rawValue: descriptor).readToEnd(atMost: Self.maximumFileSize)
        } catch {
            throw Problem(text: "\(member) \(path) cannot be read")
        }
        // Grown past the limit since fstat: refused as it would have been then.
        guard let bytes else { throw Problem(text: "\(member) \(path) is larger than \(Self.maximumFileSize >> 20) MiB: not a PEM file") }
        let material = try parse(bytes)
        cache.withLock { cache in
            if cache.count >= Self.maximumEntries { cache.removeAll() }
            cache[path] = (stamp, material)
        }
        return material
    }

    private static func openProblem(_ code: Int32) -> String {
        switch code {
        case ENOENT: return "does not exist"
        case EACCES, EPERM: return "cannot be read (permission denied)"
        case ENOTDIR: return "does not exist (a part of the path is not a directory)"
        default: return "cannot be read (\(String(cString: strerror(code)).lowercased()))"
        }
    }

    /// Why `path` cannot serve as SSL_CERT_DIR; nil when it can.
    static func directoryProblem(_ path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else { return openProblem(errno) }
        guard status.st_mode & S_IFMT == S_IFDIR else { return "is not a directory" }
        guard access(path, R_OK | X_OK) == 0 else { return "cannot be read (permission denied)" }
        return nil
    }
}
