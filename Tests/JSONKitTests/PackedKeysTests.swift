import Foundation
import Testing
@testable import JSONKit
import Basics

/// Packed objects name short keys by an id in the process-wide table and keep long ones
/// inline; either way a packed value answers as its tree.
@Suite struct PackedKeysTests {
    private func bytes(of value: JSON) -> [UInt8] {
        let (buffer, offset) = value.packedLocation!
        let end = PackedReader(base: buffer.base).end(of: offset)
        return withExtendedLifetime(buffer) { Array(UnsafeBufferPointer(start: buffer.base + offset, count: end - offset)) }
    }

    private func contains(_ haystack: [UInt8], _ needle: String) -> Bool {
        let needle = Array(needle.utf8)
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<$0 + needle.count]) == needle }
    }

    @Test func shortKeysAreSharedAndLongOnesKeptInline() throws {
        let long = String(repeating: "k", count: PackedKeys.longestKey + 1)
        let text = #"{"sharedTitleKey":"v","\#(long)":{"sharedTitleKey":[1,{"\#(long)":null}]}}"#
        let tree = try JSON.parse(text)
        let packed = tree.packed()
        let written = bytes(of: packed)
        #expect(!contains(written, "sharedTitleKey"))
        #expect(contains(written, long))
        #expect(packed.encoded() == tree.encoded())
        #expect(packed == tree && tree == packed && packed.hashValue == tree.hashValue)
        #expect(packed["sharedTitleKey"]?.stringValue == "v")
        #expect(packed.value(at: JSONKeyPath("\(long).sharedTitleKey.1.\(long)"))?.isNull == true)
        // The same key always gets the same id: two packings of it are the same bytes.
        #expect(bytes(of: try JSON.parse(text).packed()) == written)
    }

    /// A key written inline in one object and shared in the other (as when the table filled
    /// between the two) is the same key.
    @Test func anInlineKeyEqualsTheSameKeyShared() throws {
        let shared = try JSON.parse(#"{"inlineOrShared":1,"b":2}"#).packed()
        // {"b":2,"inlineOrShared":1} with both keys inline: tag, count, size, members.
        var raw: [UInt8] = [PackedTag.object, 2, 0]
        for (key, value) in [("b", 2), ("inlineOrShared", 1)] {
            raw.append(UInt8(key.utf8.count << 1 | 1))
            raw += Array(key.utf8)
            raw += [PackedTag.integer, UInt8(value << 1)]
        }
        raw[2] = UInt8(raw.count - 3)
        let made = PackedBuffer.create(minimumCapacity: raw.count) { _ in }
        let buffer = unsafeDowncast(made, to: PackedBuffer.self)
        buffer.withUnsafeMutablePointerToElements { $0.initialize(from: raw, count: raw.count) }
        let inline = JSON(packed: buffer)
        #expect(inline == shared && shared == inline)
        #expect(inline.hashValue == shared.hashValue)
        #expect(inline["inlineOrShared"]?.integerValue == 1)
        #expect(inline.value(at: JSONKeyPath("inlineOrShared"))?.integerValue == 1)
        #expect(shared.value(at: JSONKeyPath("inlineOrShared"))?.integerValue == 1)
        #expect(inline.value(at: JSONKeyPath("b"))?.integerValue == 2 && inline.value(at: JSONKeyPath("c")) == nil)
        #expect(inline.encoded() == Array(#"{"b":2,"inlineOrShared":1}"#.utf8))
    }

    /// Threads packing objects with new keys at once agree on every key's id.
    @Test func threadsInterningAtOnceAgree() throws {
        let texts = (0..<600).map { #"{"concurrentKey\#($0 % 150)":\#($0),"concurrentKey\#(($0 + 7) % 150)":[\#($0)]}"# }
        let trees = try texts.map { try JSON.parse($0) }
        let results = Results(count: 4)
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            var scratch = PackingScratch()
            results.set(thread, trees.map { $0.cursor.packed(using: &scratch) })
        }
        let packed = results.all
        for thread in packed.indices {
            for (index, (value, tree)) in zip(packed[thread], trees).enumerated() {
                #expect(value == tree && value.encoded() == tree.encoded())
                #expect(bytes(of: value) == bytes(of: packed[0][index]))
            }
        }
    }
}

/// Each thread's result, handed back to the test's thread under a lock.
private final class Results: @unchecked Sendable {
    private let lock = Lock()
    private var values: [[JSON]]
    init(count: Int) { values = Array(repeating: [], count: count) }
    func set(_ index: Int, _ value: [JSON]) { lock.withLock { values[index] = value } }
    var all: [[JSON]] { lock.withLock { values } }
}
