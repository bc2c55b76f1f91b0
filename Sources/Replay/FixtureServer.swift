#if canImport(Glibc)
import Glibc
#endif
import JSONKit
import JSONRPC

/// A tiny HTTP/1.0 server on loopback that answers from a fixture table, so a transcript
/// carries the API it talks to. The table is specified in Protocol.md ("Fixtures").
public final class FixtureServer: @unchecked Sendable {
    public struct Route: Sendable {
        let path: String
        /// Query parameters that must be present with these values (others may be present too).
        let query: [(String, String)]
        let status: Int
        let headers: [(String, String)]
        let body: [UInt8]
        let delayMilliseconds: Int
        /// Send the body in this many pieces, `dripMilliseconds` apart.
        let dripChunks: Int
        let dripMilliseconds: Int
        /// Send the head and half the body, then reset the connection.
        let reset: Bool
        /// Matches only this many requests, then lets later routes answer.
        var times: Int? = nil
        /// Send no Content-Length: the body ends when the connection closes.
        var omitContentLength = false
    }

    public struct FormatError: Error, CustomStringConvertible { public let description: String }

    private let routes: [Route]
    private var useCounts: [Int: Int] = [:]
    private var countsLock = pthread_mutex_t()
    private let listener: Int32
    public let port: Int
    private let requests = Mailbox<String>()

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Parses `fixtures` (an array of routes) and starts serving on 127.0.0.1.
    public init(fixtures: JSON, port requestedPort: Int = 0) throws {
        guard let list = fixtures.arrayValue else { throw FormatError(description: "\"fixtures\" must be an array of routes") }
        routes = try list.enumerated().map { try FixtureServer.route($1, index: $0) }
        pthread_mutex_init(&countsLock, nil)
        signal(SIGPIPE, SIG_IGN)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(requestedPort).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 64) == 0 else {
            close(descriptor)
            throw FormatError(description: "cannot listen on 127.0.0.1:\(requestedPort): \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        listener = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
        let listener = self.listener
        startThread { [self] in
            while true {
                let connection = accept(listener, nil, nil)
                if connection < 0 {
                    if errno == EINTR { continue }
                    return
                }
                startThread { self.serve(connection) }
            }
        }
    }

    public func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// Request targets received so far (`/items?page=2`), oldest first, taken once.
    public func takeRequests() -> [String] { requests.takeAll(waitingAtMost: 0) }

    private static func route(_ json: JSON, index: Int) throws -> Route {
        func fail(_ message: String) -> FormatError { FormatError(description: "fixtures[\(index)]: \(message)") }
        guard json.isObject, let path = json["path"]?.stringValue, path.hasPrefix("/") else {
            throw fail("a route needs \"path\", a string starting with /")
        }
        var query: [(String, String)] = []
        if let given = json["query"] {
            guard let members = given.objectMembers else { throw fail("\"query\" must be an object") }
            for (name, value) in members { query.append((name, value.stringValue ?? value.description)) }
        }
        var headers: [(String, String)] = []
        for (name, value) in json["headers"]?.objectMembers ?? [] { headers.append((name, value.stringValue ?? value.description)) }
        var body: [UInt8] = []
        if let text = json["bodyText"]?.stringValue {
            body = Array(text.utf8)
        } else if let value = json["body"] {
            body = value.encoded()
            if !headers.contains(where: { $0.0.lowercased() == "content-type" }) { headers.append(("Content-Type", "application/json")) }
        }
        if let padding = json["padToBytes"]?.integerValue, body.count < padding {
            // A large body that is still JSON: the value, then spaces.
            body += [UInt8](repeating: 32, count: padding - body.count)
        }
        return Route(path: path, query: query, status: json["status"]?.integerValue ?? 200, headers: headers, body: body,
                     delayMilliseconds: json["delayMilliseconds"]?.integerValue ?? 0,
                     dripChunks: max(1, json["dripChunks"]?.integerValue ?? 1),
                     dripMilliseconds: json["dripMilliseconds"]?.integerValue ?? 0,
                     reset: json["reset"]?.boolValue ?? false, times: json["times"]?.integerValue,
                     omitContentLength: json["omitContentLength"]?.boolValue ?? false)
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        var head: [UInt8] = []
        var byte: UInt8 = 0
        while !head.suffix(4).elementsEqual([13, 10, 13, 10]), head.count < 65536 {
            guard read(connection, &byte, 1) == 1 else { return }
            head.append(byte)
        }
        let requestLine = String(decoding: head.prefix { $0 != 13 }, as: UTF8.self).split(separator: " ")
        guard requestLine.count >= 2 else { return }
        let target = String(requestLine[1])
        requests.post(target)
        let headerText = String(decoding: head, as: UTF8.self)
        let (path, query) = FixtureServer.split(target)
        if path == "/_echo/headers" {
            let lines = headerText.split(separator: "\r\n").dropFirst().compactMap { line -> (String, JSON)? in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (line[..<colon].lowercased(), JSON(line[line.index(after: colon)...].trimmingCharacters()))
            }
            respond(connection, Route(path: path, query: [], status: 200, headers: [("Content-Type", "application/json")],
                                      body: JSON.object(lines).encoded(), delayMilliseconds: 0, dripChunks: 1, dripMilliseconds: 0, reset: false))
            return
        }
        guard let route = claimRoute(path: path, query: query) else {
            respond(connection, Route(path: path, query: [], status: 404, headers: [("Content-Type", "application/json")],
                                      body: JSON.object(["error": JSON("no fixture for \(target)")]).encoded(), delayMilliseconds: 0, dripChunks: 1, dripMilliseconds: 0, reset: false))
            return
        }
        respond(connection, route)
    }

    /// The first route that matches and has uses left, counting this use.
    private func claimRoute(path: String, query: [(String, String)]) -> Route? {
        pthread_mutex_lock(&countsLock)
        defer { pthread_mutex_unlock(&countsLock) }
        for (index, route) in routes.enumerated()
        where route.path == path && route.query.allSatisfy({ wanted in query.contains { $0 == wanted } }) {
            if let times = route.times, useCounts[index, default: 0] >= times { continue }
            useCounts[index, default: 0] += 1
            return route
        }
        return nil
    }

    private func respond(_ connection: Int32, _ route: Route) {
        if route.delayMilliseconds > 0 { usleep(UInt32(route.delayMilliseconds) * 1000) }
        var head = "HTTP/1.0 \(route.status) \(route.status < 400 ? "OK" : "Error")\r\n"
        for (name, value) in route.headers { head += "\(name): \(value)\r\n" }
        if !route.omitContentLength { head += "Content-Length: \(route.body.count)\r\n" }
        head += "Connection: close\r\n\r\n"
        guard send(connection, Array(head.utf8)) else { return }
        if route.reset {
            _ = send(connection, Array(route.body.prefix(route.body.count / 2)))
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(connection, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            return
        }
        let size = max(1, (route.body.count + route.dripChunks - 1) / route.dripChunks)
        var offset = 0
        while offset < route.body.count {
            if offset > 0, route.dripMilliseconds > 0 { usleep(UInt32(route.dripMilliseconds) * 1000) }
            guard send(connection, Array(route.body[offset..<min(route.body.count, offset + size)])) else { return }
            offset += size
        }
    }

    private func send(_ connection: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            var sent = 0
            while sent < raw.count {
                let count = write(connection, raw.baseAddress! + sent, raw.count - sent)
                if count <= 0 { return false }
                sent += count
            }
            return true
        }
    }

    static func split(_ target: String) -> (path: String, query: [(String, String)]) {
        let parts = target.split(separator: "?", maxSplits: 1)
        let path = String(parts.first ?? "/")
        let query = parts.count > 1 ? parts[1].split(separator: "&").map { pair -> (String, String) in
            let halves = pair.split(separator: "=", maxSplits: 1)
            return (decode(halves[0]), halves.count > 1 ? decode(halves[1]) : "")
        } : []
        return (path, query)
    }

    private static func decode(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == 37, let high = utf8.index(index, offsetBy: 1, limitedBy: utf8.endIndex), high < utf8.endIndex,
               let low = utf8.index(index, offsetBy: 2, limitedBy: utf8.endIndex), low < utf8.endIndex,
               let value = UInt8(String(decoding: [utf8[high], utf8[low]], as: UTF8.self), radix: 16) {
                bytes.append(value)
                index = utf8.index(index, offsetBy: 3)
            } else {
                bytes.append(byte == 43 ? 32 : byte)
                index = utf8.index(after: index)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension Substring {
    func trimmingCharacters() -> String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
