import Testing

@testable import JSONKit

/// Packed values as a file keeps them (the page cache): what is written reads back as the
/// same value in this process's form, and bytes that are not such a value are refused with
/// the byte where they go wrong, never a trap.
@Suite struct PackedPortableTests {
    static func read(_ bytes: [UInt8], maximumDepth: Int = 64) throws(PortablePackedError) -> JSON {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(PortablePackedError) in try JSON.portablePacked(raw, maximumDepth: maximumDepth) }
        }
        return try result.get()
    }

    @Test(arguments: PackedTests.samples)
    func aValueReadsBackEqualFromATreeOrAPackedValue(text: String) throws {
        let tree = try JSON.parse(text)
        for value in [tree, tree.packed()] {
            let bytes = value.portablePacked()
            let read = try Self.read(bytes)
            #expect(read.isPacked)
            #expect(read == tree)
            #expect(read.valueHash == tree.valueHash)
            #expect(read.encoded() == tree.encoded())
        }
    }

    /// The layout is a file format: a change to it is a new cache entry format.
    @Test func aValueIsWrittenInTheDocumentedLayout() throws {
        let value = try JSON.parse(#"{"id":1,"t":"é","l":[true,null],"r":-2.5,"n":-3}"#)
        let expected: [UInt8] = [
            0, 5, 33,  // an object of 5 members in 33 bytes
            5, 105, 100, 3, 2,  // "id": 1 (zigzag 2)
            3, 116, 2, 2, 195, 169,  // "t": "é"
            3, 108, 1, 2, 2, 5, 7,  // "l": [true, null]
            3, 114, 4, 0, 0, 0, 0, 0, 0, 4, 192,  // "r": -2.5, little-endian
            3, 110, 3, 5,  // "n": -3 (zigzag 5)
        ]
        #expect(value.portablePacked() == expected)
        #expect(value.packed().portablePacked() == expected)
        #expect(try Self.read(expected) == value)
    }

    @Test func keysAreWrittenInlineAndReadBackAsTheProcesssSharedKeys() throws {
        let row = try JSON.parse(#"{"id":7,"title":"seven"}"#).packed()
        let bytes = row.portablePacked()
        // Inline: the key's length shifted and odd, then its bytes.
        #expect(bytes.starts(with: [PackedTag.object, 2]))
        for key in ["id", "title"] {
            let inline = [UInt8(key.utf8.count << 1 | 1)] + Array(key.utf8)
            #expect((0...(bytes.count - inline.count)).contains { bytes[$0..<$0 + inline.count].elementsEqual(inline) }, "\(key)")
        }
        let read = try Self.read(bytes)
        // The same bytes as the row packed from the network: shared keys, found by id.
        #expect(read.packedBytes == row.packedBytes)
    }

    /// A row of each kind of value, and its bytes as written.
    static let sample: [UInt8] = {
        let text = #"{"id":1,"title":"Issue é","labels":["bug",{"x":null}],"score":2.5,"open":true,"closed":false}"#
        return try! JSON.parse(text).portablePacked()
    }()

    @Test func everyTruncationIsRefused() {
        for length in 0..<Self.sample.count {
            #expect(throws: PortablePackedError.self, "the first \(length) bytes") { try Self.read(Array(Self.sample.prefix(length))) }
        }
    }

    /// Each byte changed to each other value: refused, or (a changed string byte, say) a value
    /// that can be encoded and compared like any other.
    @Test func everyByteChangedIsRefusedOrReadAsAValue() {
        var refused = 0, read = 0
        for index in Self.sample.indices {
            for value in 0...255 where value != Int(Self.sample[index]) {
                var bytes = Self.sample
                bytes[index] = UInt8(value)
                guard let value = try? Self.read(bytes) else {
                    refused += 1
                    continue
                }
                read += 1
                _ = value.encoded()
                _ = value == value.packed()
                _ = value.valueHash
            }
        }
        #expect(refused > 0 && read > 0)
    }

    @Test(
        arguments: [
            // tag, count, size: a count the bytes cannot hold
            ([PackedTag.array, 5, 2, PackedTag.null, PackedTag.null], "a count (5) larger than"),
            // a size past the end
            ([PackedTag.array, 1, 9, PackedTag.null], "a container's size (9) is longer than the 1 bytes left"),
            // a size larger than its values
            ([PackedTag.array, 1, 2, PackedTag.null, PackedTag.null], "a container's size says 2 bytes, its values take 1"),
            // an integer whose varint never ends, then one past 64 bits
            ([PackedTag.integer, 0xFF, 0xFF], "an integer runs past the end"),
            ([PackedTag.integer] + [UInt8](repeating: 0xFF, count: 9) + [0x02], "an integer does not fit in 64 bits"),
            ([9], "an unknown tag 9"),
            ([PackedTag.string, 2, 0xC3, 0x28], "a string that is not UTF-8"),
            ([PackedTag.string, 3, 0xED, 0xA0, 0x80], "a string that is not UTF-8"),  // a surrogate
            ([PackedTag.object, 1, 4, 3, 0xFF, 0xFE, PackedTag.null], "a key that is not UTF-8"),
            ([PackedTag.object, 1, 2, 0, PackedTag.null], "a key by reference (0)"),
            ([PackedTag.object, 2, 6, 3, 0x61, PackedTag.null, 3, 0x61, PackedTag.true], "a key repeated in one object"),
            ([PackedTag.real, 0, 0, 0, 0, 0, 0, 0xF8, 0x7F], "a real that is not finite"),
            ([PackedTag.real, 0, 0], "a real runs past the end"),
            ([PackedTag.null, PackedTag.null], "bytes after the value"),
            ([], "no value"),
        ] as [([UInt8], String)])
    func damageIsNamed(bytes: [UInt8], reason: String) {
        #expect(throws: PortablePackedError.self) { try Self.read(bytes) }
        do {
            _ = try Self.read(bytes)
        } catch {
            #expect(error.description.contains(reason), "\(error)")
        }
    }

    @Test func nestingIsBounded() throws {
        let deep = try JSON.parse(String(repeating: "[", count: 10) + String(repeating: "]", count: 10)).portablePacked()
        #expect(try Self.read(deep, maximumDepth: 10) != .null)
        do {
            _ = try Self.read(deep, maximumDepth: 9)
            Issue.record("ten levels read under a limit of nine")
        } catch {
            // Nine containers of three header bytes each come before the tenth.
            #expect(error.reason.hasPrefix("it nests deeper than 9 levels") && error.offset == 27)
        }
    }

    @Test func aLargeObjectWithARepeatedKeyIsRefused() throws {
        let members = (0..<20).map { ("k\($0)", JSON($0)) }
        var bytes = JSON.object(members).portablePacked()
        #expect(try Self.read(bytes).objectMembers?.count == 20)
        // "k1" becomes a second "k0".
        let k1: [UInt8] = [5] + Array("k1".utf8)
        let at = try #require((0...(bytes.count - 3)).first { bytes[$0..<$0 + 3].elementsEqual(k1) })
        bytes[at + 2] = UInt8(ascii: "0")
        #expect(throws: PortablePackedError.self) { try Self.read(bytes) }
    }
}

extension JSON {
    /// The bytes of a packed value of its own, for comparing layouts.
    fileprivate var packedBytes: [UInt8] {
        let (buffer, offset) = packedLocation!
        let end = PackedReader(base: buffer.base).end(of: offset)
        return withExtendedLifetime(buffer) { Array(UnsafeBufferPointer(start: buffer.base + offset, count: end - offset)) }
    }
}
