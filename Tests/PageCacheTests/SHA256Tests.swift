@testable import PageCache
import Testing

/// The cache's own SHA-256 gives the standard digests (FIPS 180-4's examples, and lengths on
/// each side of the padding's block boundary, as Python's hashlib gives them), so the row keys
/// are the bytes swift-crypto wrote before and a cache file from an earlier daemon still hits.
@Suite struct SHA256Tests {
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ])
    func theStandardExamples(message: String, digest: String) {
        #expect(Self.hex(SHA256.digest(Array(message.utf8))) == digest)
    }

    /// Bytes `i % 251` for i in 0..<length: 55 is the longest message padded into one block,
    /// 56 the shortest that needs two.
    @Test(arguments: [
        (55, "463eb28e72f82e0a96c0a4cc53690c571281131f672aa229e0d45ae59b598b59"),
        (56, "da2ae4d6b36748f2a318f23e7ab1dfdf45acdc9d049bd80e59de82a60895f562"),
        (63, "29af2686fd53374a36b0846694cc342177e428d1647515f078784d69cdb9e488"),
        (64, "fdeab9acf3710362bd2658cdc9a29e8f9c757fcf9811603a8c447cd1d9151108"),
        (65, "4bfd2c8b6f1eec7a2afeb48b934ee4b2694182027e6d0fc075074f2fabb31781"),
        (119, "da18797ed7c3a777f0847f429724a2d8cd5138e6ed2895c3fa1a6d39d18f7ec6"),
        (120, "f52b23db1fbb6ded89ef42a23ce0c8922c45f25c50b568a93bf1c075420bbb7c"),
    ])
    func lengthsAroundTheBlockBoundary(length: Int, digest: String) {
        #expect(Self.hex(SHA256.digest((0..<length).map { UInt8($0 % 251) })) == digest)
    }

    @Test func aMillionBytes() {
        #expect(
            Self.hex(SHA256.digest([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}
