import Dispatch
import Foundation
import Testing
@testable import JSONKit
import Basics

/// Values made in a scratch scope (see CJSONArena.h) must read as any other, and an arena's
/// memory must go exactly when its last node does, from whichever thread drops it.
/// Running out of slots is tested with a limit on the test's own thread, so tests on other
/// threads still find slots free.
@Suite(.enabled(if: JSON.arenasAreOn, "arenas are off (DATASOURCED_JSON_ARENAS=0, as under AddressSanitizer): every node is malloc's"))
struct ArenaTests {
    static let page =
        #"{"items":[{"id":1,"title":"A","tags":["x","y"],"author":{"name":"N"}},{"id":2,"title":"B","price":2.5}],"next":"c2","total":2}"#

    /// A document parsed in a scope and kept past it: the arena goes with it.
    static func keptFromAScope(_ bytes: [UInt8] = Array(page.utf8)) throws -> JSON {
        try JSON.withScratchAllocation { try JSON.parse(bytes) }
    }

    @Test func aDocumentParsedInAScopeEqualsTheSameDocumentFromMalloc() throws {
        let fromMalloc = try JSON.parse(Array(Self.page.utf8))
        #expect(fromMalloc.arenaSerial == nil, "outside a scope, nodes are malloc's")
        try JSON.withScratchAllocation {
            let fromArena = try JSON.parse(Array(Self.page.utf8))
            #expect(fromArena.arenaSerial != nil && fromArena.arenaSerial == JSON.scratchArenaSerialOnThisThread)
            #expect(fromArena == fromMalloc)
            #expect(fromArena.text() == fromMalloc.text())
            #expect(fromArena.packed() == fromMalloc.packed())
        }
    }

    @Test func aKeptArenaIsFreedWithItsLastNode() throws {
        var document: JSON? = try Self.keptFromAScope()
        let serial = try #require(document?.arenaSerial)
        #expect(JSON.scratchArenaSerialOnThisThread != serial, "the thread let the kept arena go")
        var kept: JSON? = document?["items"]?[0]?["tags"]
        #expect(kept?.arenaSerial == serial, "a subtree shares the document's arena")
        document = nil
        #expect(JSON.arenaIsAlive(serial), "a kept subtree holds the arena")
        #expect(kept == ["x", "y"])
        kept = nil
        #expect(!JSON.arenaIsAlive(serial))
    }

    @Test func aDocumentDroppedOnAnotherThreadFreesItsArena() throws {
        var document: JSON? = try Self.keptFromAScope()
        let serial = try #require(document?.arenaSerial)
        // Made with malloc, sharing the arena's nodes; handed over, so the other thread drops the last count.
        let handed = Shelf(count: 1)
        handed.put(document!.removing("items"), at: 0)
        document = nil
        let edited = try #require(handed.values.first)
        #expect(edited.arenaSerial == nil && edited["next"]?.arenaSerial == serial)
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            precondition(handed.values.first?["total"] == 2)
            handed.clear()
        }
        _ = consume edited
        group.wait()
        #expect(!JSON.arenaIsAlive(serial))
    }

    @Test func aFailedParseLeavesTheScopeEmpty() throws {
        _ = JSON.withScratchAllocation { JSON(1).arenaSerial }  // the thread's scratch arena, made if need be
        let serial = try #require(JSON.scratchArenaSerialOnThisThread)
        JSON.withScratchAllocation {
            _ = #expect(throws: JSONParseError.self) { try JSON.parse(Array(#"{"a":[1,2,{"b":"#.utf8)) }
        }
        // jansson freed every node it made before failing, so the thread keeps its arena.
        #expect(JSON.scratchArenaSerialOnThisThread == serial)
        let next = try Self.keptFromAScope()
        #expect(next.arenaSerial == serial)
    }

    @Test func slotsComeBackForTheNextDocuments() throws {
        // More kept documents than slots, one after another: each took its scope's arena with
        // it, and gave the slot back when dropped.
        var serials: [UInt64] = []
        for _ in 0..<1_000 {
            let document = try Self.keptFromAScope()
            serials.append(try #require(document.arenaSerial))
        }
        #expect(Set(serials).count == 1_000)
        #expect(serials.allSatisfy { !JSON.arenaIsAlive($0) })
    }

    @Test func whenTheSlotsRunOutMallocTakesOver() throws {
        let bytes = Array(Self.page.utf8)
        let expected = try JSON.parse(bytes)
        var held: [JSON] = []
        var fromMalloc: JSON?
        do {
            JSON.limitArenaSlotsOnThisThread(3)
            defer { JSON.limitArenaSlotsOnThisThread(nil) }
            for _ in 0..<10 {  // each kept document takes its scope's arena, and the next scope a new slot
                let document = try Self.keptFromAScope(bytes)
                if document.arenaSerial == nil {
                    fromMalloc = document
                    break
                }
                held.append(document)
            }
        }
        #expect(try #require(fromMalloc) == expected, "no slot left: parsed with malloc, not refused")
        #expect((3...4).contains(held.count), "three new slots, and the scratch arena the thread may have had")
        let serials = held.compactMap(\.arenaSerial)
        held = []
        #expect(serials.count >= 3 && serials.allSatisfy { !JSON.arenaIsAlive($0) })
        #expect(try Self.keptFromAScope(bytes).arenaSerial != nil, "the thread takes slots again")
    }

    /// A scope that fills its slot when no other is to be had goes on with malloc: the
    /// document is whole, part carved and part malloc'd.
    @Test func aScopeThatRunsOutOfSlotsMidParseGoesOnWithMalloc() throws {
        let text = Array(("[" + Array(repeating: "1", count: 250_000).joined(separator: ",") + "]").utf8)  // more than a slot of nodes
        _ = JSON.withScratchAllocation { JSON(1).arenaSerial }
        let scratch = try #require(JSON.scratchArenaSerialOnThisThread)
        let (first, last, slots) = try JSON.withScratchAllocation {
            JSON.limitArenaSlotsOnThisThread(0)
            defer { JSON.limitArenaSlotsOnThisThread(nil) }
            let document = try JSON.parse(text)
            #expect(document.count == 250_000 && document[249_999] == 1)
            return (document[0]?.arenaSerial, document[249_999]?.arenaSerial, JSON.arenaSlotCount(scratch))
        }
        #expect(first == scratch && last == nil, "the first node carved from the scratch arena, the last from malloc")
        #expect(slots == 1)
        #expect(JSON.scratchArenaSerialOnThisThread == scratch && JSON.arenaIsAlive(scratch))
    }

    @Test func aStringLargerThanASlotComesFromMalloc() throws {
        let long = String(repeating: "x", count: 5 << 20)
        var document: JSON? = try Self.keptFromAScope(Array(#"{"long":"\#(long)","n":1}"#.utf8))
        let serial = try #require(document?.arenaSerial)
        #expect(document?["long"]?.stringValue == long && document?["n"] == 1)
        document = nil
        #expect(!JSON.arenaIsAlive(serial))
    }

    @Test func allocationsAfterTheScopeUseMalloc() throws {
        let document = try Self.keptFromAScope()
        let made = JSON.object([("page", document)])
        #expect(made.arenaSerial == nil)
        #expect(made["page"]?.arenaSerial == document.arenaSerial)
        #expect(try JSON.parse("[1]").arenaSerial == nil, "the scope is closed")
    }

    @Test func scratchScopesReuseTheirSlot() throws {
        // Made and dropped inside each scope: the same scratch arena every time.
        let serials = (0..<3).map { _ in
            JSON.withScratchAllocation { JSON.object([("a", JSON(1)), ("b", JSON.integerTuples([(1, 2, nil)]))]).arenaSerial }
        }
        let serial = try #require(serials[0])
        #expect(serials == [serial, serial, serial])
        #expect(JSON.arenaIsAlive(serial), "the thread keeps its scratch arena between scopes")
    }

    /// A scope that makes more than a slot holds (a large page) takes more slots, and gives
    /// all but the first back when it ends: the thread keeps one.
    @Test func aLargeScratchScopeGivesItsExtraSlotsBack() throws {
        let text = Array(("[" + Array(repeating: "1", count: 250_000).joined(separator: ",") + "]").utf8)
        let (serial, lastSerial, slotsInside) = try JSON.withScratchAllocation {
            let document = try JSON.parse(text)
            let serial = try #require(JSON.scratchArenaSerialOnThisThread)
            return (serial, document[249_999]?.arenaSerial, JSON.arenaSlotCount(serial))
        }
        #expect(lastSerial == serial, "the last node too was carved from the scratch arena, not malloc")
        #expect(slotsInside >= 2)
        #expect(JSON.scratchArenaSerialOnThisThread == serial && JSON.arenaSlotCount(serial) == 1)
    }

    @Test func aValueKeptPastItsScratchScopeKeepsTheSlot() throws {
        var kept: JSON? = JSON.withScratchAllocation { JSON.object([("kept", JSON("yes"))]) }
        let serial = try #require(kept?.arenaSerial)
        #expect(kept?.text() == #"{"kept":"yes"}"#)
        let next = JSON.withScratchAllocation { JSON(2).arenaSerial }
        #expect(next != nil && next != serial, "the thread took a new scratch slot")
        #expect(JSON.arenaIsAlive(serial))
        kept = nil
        #expect(!JSON.arenaIsAlive(serial), "the kept value's slot went with it")
    }

    @Test func aScratchScopeInsideAnotherAddsToIt() throws {
        let (outer, inner) = JSON.withScratchAllocation {
            let outer = JSON("outer")
            let inner = JSON.withScratchAllocation { JSON("inner") }
            return (outer.arenaSerial, inner.arenaSerial)
        }
        #expect(outer != nil && outer == inner)
    }

    @Test func manyKeptDocumentsAcrossThreads() throws {
        let bytes = Array(Self.page.utf8)
        let expected = try JSON.parse(bytes)
        let documents = Shelf(count: 64)
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            documents.put(try! Self.keptFromAScope(bytes), at: index)
        }
        var serials: [UInt64] = []
        do {
            let parsed = documents.values
            #expect(parsed.count == 64 && parsed.allSatisfy { $0 == expected })
            serials = parsed.compactMap(\.arenaSerial)
        }
        #expect(serials.count == 64 && Set(serials).count == 64, "each kept document took its scope's arena")
        #expect(serials.allSatisfy { JSON.arenaIsAlive($0) })
        // Dropped here, on the test's thread, not on the workers that parsed them.
        documents.clear()
        #expect(serials.allSatisfy { !JSON.arenaIsAlive($0) })
    }

    /// Values handed between threads, each in its own place.
    private final class Shelf: @unchecked Sendable {
        private var slots: [JSON?]
        private let lock = Lock()
        init(count: Int) { slots = [JSON?](repeating: nil, count: count) }
        func put(_ value: JSON, at index: Int) { lock.withLock { slots[index] = value } }
        var values: [JSON] { lock.withLock { slots.compactMap { $0 } } }
        func clear() { lock.withLock { slots = slots.map { _ in nil } } }
    }
}
