import Basics
import CZlib

/// What `Accept-Encoding` asks for, unless the caller sends its own.
let acceptedContentCodings = "gzip, deflate"

/// A response's `Content-Encoding`, as far as decoding it goes.
enum ContentCoding: Equatable {
    case identity
    case gzip
    case deflate
    /// A coding this client cannot decode (`br`, `zstd`, or codings stacked on each other).
    case unsupported(String)

    /// `gzip` and `x-gzip`, `deflate`, or none: names compare case-insensitively and `identity`
    /// is no coding. A server may send gzip unasked (RFC 9110 allows it), so the header is read
    /// whatever the request asked for.
    init(header: String?) {
        let codings = (header ?? "").split(separator: ",").map { $0.trimmingSpaces().lowercased() }
            .filter { !$0.isEmpty && $0 != "identity" }
        switch codings.count {
        case 0: self = .identity
        case 1 where codings[0] == "gzip" || codings[0] == "x-gzip": self = .gzip
        case 1 where codings[0] == "deflate": self = .deflate
        default: self = .unsupported(String(codings.joined(separator: ", ").prefix(60)))
        }
    }
}

/// Why a compressed body could not be decoded.
enum InflateFailure: Error, Equatable {
    /// The decoded body passed the limit: decoding stopped there.
    case tooLarge
    /// Not gzip or deflate data (zlib's words for what was wrong).
    case corrupt(String)
    /// The body ended before its compressed data did.
    case truncated
}

/// Inflates a gzip or deflate body part by part as it arrives, into a buffer that never holds
/// more than the limit: a small body that inflates to gigabytes (a "gzip bomb") stops being
/// read as soon as the decoded size passes the limit, having cost the limit and one window.
///
/// The format is told from the first two bytes: gzip (1f 8b) or zlib (what RFC 9110 calls
/// `deflate`) under either name, and for `deflate` also raw deflate, which some servers send
/// under that name (curl and browsers accept it too).
final class Inflater {
    private let coding: ContentCoding
    private let stream: UnsafeMutablePointer<z_stream>
    private var isInitialized = false
    /// The first byte, held until the second tells the format.
    private var held: UInt8?
    private var isGzip = false
    /// At the end of the compressed data (of the last gzip member, when several follow each other).
    private(set) var isFinished = false
    /// Where zlib writes before the bytes join the body: the body grows by what was decoded, not by a window.
    private var window = [UInt8](repeating: 0, count: 64 * 1024)
    /// Compressed bytes received.
    private(set) var bytesIn = 0

    init(_ coding: ContentCoding) {
        self.coding = coding
        // zlib keeps the stream's address in its state: it must not move.
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
    }

    deinit {
        if isInitialized { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Decodes `input` onto the end of `body`; fails with `tooLarge` as soon as `body` would
    /// pass `limit` bytes.
    func inflate(_ input: UnsafeRawBufferPointer, into body: inout [UInt8], limit: Int) throws(InflateFailure) {
        guard !input.isEmpty else { return }
        bytesIn += input.count
        if !isInitialized {
            if let first = held {
                held = nil
                try start(first: first, second: input[0])
                var failure: InflateFailure?
                [first].withUnsafeBytes { held in
                    do throws(InflateFailure) { try feed(held, into: &body, limit: limit) } catch { failure = error }
                }
                if let failure { throw failure }
            } else if input.count == 1 {
                held = input[0]
                return
            } else {
                try start(first: input[0], second: input[1])
            }
        }
        try feed(input, into: &body, limit: limit)
    }

    /// Whether the body ended where its compressed data did (or was empty).
    func finish() throws(InflateFailure) {
        if held != nil || (isInitialized && !isFinished) { throw .truncated }
    }

    private func start(first: UInt8, second: UInt8) throws(InflateFailure) {
        let bits: Int32
        if first == 0x1f && second == 0x8b {
            bits = 15 + 16
            isGzip = true
        } else if first & 0x0f == 8, first >> 4 <= 7, (Int(first) << 8 | Int(second)) % 31 == 0 {
            bits = 15
        } else if coding == .deflate {
            bits = -15
        } else {
            throw .corrupt("it does not start as gzip data does")
        }
        guard czlib_inflate_init(stream, bits) == Z_OK else { throw .corrupt("zlib could not start") }
        isInitialized = true
    }

    private func feed(_ input: UnsafeRawBufferPointer, into body: inout [UInt8], limit: Int) throws(InflateFailure) {
        guard let base = input.baseAddress, !input.isEmpty else { return }
        var offset = 0
        while offset < input.count {
            if isFinished {
                // Another gzip member may follow (as `gunzip` reads them); anything else after
                // the end is ignored, as gunzip and curl do.
                guard isGzip, input[offset] == 0x1f, inflateReset(stream) == Z_OK else { return }
                isFinished = false
            }
            // Parts are small, but zlib counts in 32 bits.
            let chunk = min(input.count - offset, Int(UInt32.max))
            stream.pointee.next_in = UnsafeMutablePointer(mutating: base.advanced(by: offset).assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = UInt32(chunk)
            defer {
                stream.pointee.next_in = nil
                stream.pointee.avail_in = 0
            }
            try drain(into: &body, limit: limit)
            offset += chunk - Int(stream.pointee.avail_in)
            if stream.pointee.avail_in > 0 && !isFinished { throw .corrupt("zlib stopped before the end of its input") }
        }
    }

    /// Inflates what is in `stream.next_in` until it is used up, the data ends, or the limit is passed.
    private func drain(into body: inout [UInt8], limit: Int) throws(InflateFailure) {
        while true {
            // One byte more than the room left: producing it proves the body is over the limit.
            let room = max(0, limit - body.count)
            let size = min(window.count, room + 1)
            var status: Int32 = Z_OK
            var produced = 0
            window.withUnsafeMutableBufferPointer { window in
                stream.pointee.next_out = window.baseAddress
                stream.pointee.avail_out = UInt32(size)
                status = CZlib.inflate(stream, Z_NO_FLUSH)
                produced = size - Int(stream.pointee.avail_out)
                stream.pointee.next_out = nil
                stream.pointee.avail_out = 0
            }
            if produced > room { throw .tooLarge }
            body.append(contentsOf: window[..<produced])
            switch status {
            case Z_STREAM_END:
                isFinished = true
                return
            case Z_OK:
                // The input is used up and zlib had room to spare: it holds nothing more.
                if stream.pointee.avail_in == 0 && produced < size { return }
            case Z_BUF_ERROR:
                // No progress possible without more input.
                return
            default:
                let reason = stream.pointee.msg.map { String(cString: $0) } ?? "error \(status)"
                throw .corrupt(reason)
            }
        }
    }
}
