/// The fuzz input read as a sequence of choices. Past its end every choice is 0 (the
/// first option), so a short input still makes a whole, small session.
struct Choices {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isExhausted: Bool { offset >= bytes.count }

    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// A number in `0..<count` (`count` ≤ 256).
    mutating func below(_ count: Int) -> Int { count <= 1 ? 0 : Int(byte()) % count }

    /// True with probability `n`/256 (false once the input is used up).
    mutating func chance(_ n: Int) -> Bool { !isExhausted && Int(byte()) < n }

    mutating func pick<T>(_ options: [T]) -> T { options[below(options.count)] }

    /// Up to `limit` raw bytes of the input, for bodies and garbage frames.
    mutating func bytes(upTo limit: Int) -> [UInt8] {
        let count = min(below(256) * limit / 255, bytes.count - min(offset, bytes.count))
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }
}
