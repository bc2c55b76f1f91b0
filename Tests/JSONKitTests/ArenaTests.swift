import Dispatch
import Testing
@testable import JSONKit

/// Documents parsed into an arena (see CJSONArena.h) must read as any other, and their
/// memory must go exactly when the last node does, from whichever thread drops it.
@Suite struct ArenaTests {
    static let page = #"{"items":[{"id":1,"title":"A","tags":["x","y"],"author":{"name":"N"}},{"id":2,"title":"B","price":2.5}],"next":"c2","total":2}"#

    @Test func anArenaDocumentEqualsTheSameDocumentFromMalloc() throws {
        let fromArena = try JSON.parse(Array(Self.page.utf8), allocation: .arena)
        let fromMalloc = try JSON.parse(Array(Self.page.utf8))
        #expect(fromArena.arenaSerial != nil)
        #expect(fromMalloc.arenaSerial == nil)
        #expect(fromArena == fromMalloc)
        #expect(fromArena.text() == fromMalloc.text())
        #expect(fromArena.packed() == fromMalloc.packed())
    }

    @Test func theArenaIsFreedWithItsLastNode() throws {
        var document: JSON? = try JSON.parse(Array(Self.page.utf8), allocation: .arena)
        let serial = try #require(document?.arenaSerial)
        var kept: JSON? = document?["items"]?[0]?["tags"]
        #expect(kept?.arenaSerial == serial, "a subtree shares the document's arena")
        document = nil
        #expect(JSON.arenaIsAlive(serial), "a kept subtree holds the arena")
        #expect(kept == ["x", "y"])
        kept = nil
        #expect(!JSON.arenaIsAlive(serial))
    }

    @Test func aDocumentDroppedOnAnotherThreadFreesItsArena() throws {
        var document: JSON? = try JSON.parse(Array(Self.page.utf8), allocation: .arena)
        let serial = try #require(document?.arenaSerial)
        // Made with malloc, sharing the arena's nodes; handed over, so the other thread drops the last count.
        let handed = Handed(document!.removing("items"))
        document = nil
        #expect(handed.value?.arenaSerial == nil && handed.value?["next"]?.arenaSerial == serial)
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            precondition(handed.value?["total"] == 2)
            handed.value = nil
        }
        group.wait()
        #expect(!JSON.arenaIsAlive(serial))
    }

    private final class Handed: @unchecked Sendable {  // one thread at a time: the group's wait orders them
        var value: JSON?
        init(_ value: JSON) { self.value = value }
    }

    @Test func aFailedParseLeavesNoArena() throws {
        #expect(throws: JSONParseError.self) { try JSON.parse(Array(#"{"a":[1,2,{"b":"#.utf8), allocation: .arena) }
        let serial = try #require(JSON.lastArenaSerialOnThisThread)
        #expect(!JSON.arenaIsAlive(serial), "jansson freed every node it made before failing")
        let next = try JSON.parse(Array(Self.page.utf8), allocation: .arena)
        #expect(next.arenaSerial == JSON.lastArenaSerialOnThisThread && next.arenaSerial != serial)
    }

    @Test func allocationsAfterTheParseUseMalloc() throws {
        let document = try JSON.parse(Array(Self.page.utf8), allocation: .arena)
        let made = JSON.object([("page", document)])
        #expect(made.arenaSerial == nil)
        #expect(made["page"]?.arenaSerial == document.arenaSerial)
        #expect(try JSON.parse("[1]").arenaSerial == nil, "the arena is closed when the parse returns")
    }

    @Test func manyArenaDocumentsAcrossThreads() throws {
        let bytes = Array(Self.page.utf8)
        let expected = try JSON.parse(bytes)
        var serials = [UInt64](repeating: 0, count: 64)
        serials.withUnsafeMutableBufferPointer { slots in
            nonisolated(unsafe) let base = slots.baseAddress!  // each iteration writes its own slot
            DispatchQueue.concurrentPerform(iterations: 64) { index in
                let document = try! JSON.parse(bytes, allocation: .arena)
                precondition(document == expected)
                base[index] = document.arenaSerial ?? 0
            }
        }
        #expect(!serials.contains(0))
        #expect(Set(serials).count == 64, "one arena a parse")
        #expect(serials.allSatisfy { !JSON.arenaIsAlive($0) })
    }
}
