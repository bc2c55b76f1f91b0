@testable import Daemon
@testable import DataSources
import JSONKit
import Testing

@Suite struct SimpleDataSourceTests {
    static func books() -> SimpleDataSource {
        SimpleDataSource(
            name: "books", identity: Identity(key: JSONKeyPath("id")),
            objects: [["id": 1, "t": "Dune"], ["id": 2, "t": "Emma"], ["id": 3, "t": "Solaris"]])
    }

    @Test func fetchDataFinishesSynchronouslyAndChangesNothing() {
        let source = Self.books()
        let recorder = Recorder().observing(source)
        source.fetchData()
        #expect(recorder.events == ["books.will", "books.finished"])
        #expect(recorder.fetching == [true, false], "isFetching is true exactly between willLoadData and the final event")
        #expect(!source.isFetching)
        source.cancelFetch()
        #expect(recorder.events.count == 2, "nothing is in flight to cancel")
    }

    @Test func rowsAreKeptPackedWhateverEditBroughtThem() throws {
        let source = Self.books()
        try source.insert([["id": 4, "t": "Kindred"]], at: 1)
        try source.update([["id": 2, "t": "Emma, revised"]])
        #expect(source.objects.allSatisfy { $0.isPacked })
        #expect(try source.object(at: path(0, 1)) == ["id": 4, "t": "Kindred"])
        #expect(source.indexPath(for: ["id": 2]) == path(0, 2))
    }

    @Test func oneSectionTitledEmpty() throws {
        let source = Self.books()
        #expect(source.numberOfSections == 1)
        #expect(source.sectionTitles == [""])
        #expect(source.numberOfObjects(inSection: 0) == 3)
        #expect(try source.object(at: path(0, 2)) == ["id": 3, "t": "Solaris"])
    }

    @Test func eachEditEmitsOneExactChangeSet() throws {
        let source = Self.books()
        let recorder = Recorder().observing(source)

        try source.insert([["id": 4], ["id": 5]], at: 1)
        #expect(source.objects.map { $0["id"] } == [1, 4, 5, 2, 3])
        #expect(recorder.changes(of: "books").last == changeSet(inserted: [path(0, 1), path(0, 2)]))

        try source.remove(at: 0, count: 2)
        #expect(source.objects.map { $0["id"] } == [5, 2, 3])
        #expect(recorder.changes(of: "books").last == changeSet(deleted: [path(0, 0), path(0, 1)]))

        try source.update([["id": 3, "t": "Solaris (2nd ed.)"]])
        #expect(source.objects[2] == ["id": 3, "t": "Solaris (2nd ed.)"])
        #expect(recorder.changes(of: "books").last == changeSet(updated: [path(0, 2)]))

        source.replaceObjects([["id": 3, "t": "Solaris (2nd ed.)"], ["id": 2, "t": "Emma"], ["id": 6]])
        #expect(
            recorder.changes(of: "books").last
                == changeSet(deleted: [path(0, 0)], inserted: [path(0, 2)], moved: [(path(0, 2), path(0, 0))]))
        #expect(recorder.events == Array(repeating: "books.change", count: 4))
    }

    @Test func editsThatChangeNothingEmitNothing() throws {
        let source = Self.books()
        let recorder = Recorder().observing(source)
        source.replaceObjects(Array(source.objects))
        try source.update([["id": 2, "t": "Emma"]])
        try source.insert([], at: 3)
        try source.remove(at: 1, count: 0)
        #expect(recorder.events.isEmpty)
    }

    @Test func refusedEditsNameTheFieldAndTheRangeAndChangeNothing() {
        let source = Self.books()
        let recorder = Recorder().observing(source)
        #expect { try source.insert([["id": 9]], at: 4) } throws: { error in
            let error = worded(error)
            return error.field == "index" && error.message.contains("0...3")
        }
        #expect { try source.remove(at: 2, count: 2) } throws: { error in
            let error = worded(error)
            return error.field == "count" && error.message.contains("0...1") && error.got == 2
        }
        #expect { try source.remove(at: 1, count: Int.max) } throws: { worded($0).field == "count" }
        #expect { try source.remove(at: Int.max, count: 1) } throws: { worded($0).field == "index" }
        // The first replacement is valid, the second is not: nothing is applied.
        #expect { try source.update([["id": 1, "t": "x"], ["id": 42]]) } throws: { error in
            let error = worded(error)
            return error.field == "objects[1]" && error.got == 42
        }
        #expect(source.objects[0] == ["id": 1, "t": "Dune"])
        #expect(recorder.events.isEmpty)
    }

    @Test func indexPathsAreValidatedWithTheValidRange() {
        let source = Self.books()
        #expect { try source.object(at: path(1, 0)) } throws: { error in
            let error = worded(error)
            return error.field == "indexPath" && error.message.contains("0..<1") && error[context: "numberOfSections"] == 1
        }
        #expect { try source.object(at: path(0, 3)) } throws: { error in
            let error = worded(error)
            return error.field == "indexPath" && error.message.contains("0..<3") && error[context: "numberOfObjects"] == 3
        }
        #expect(throws: Refusal.self) { try source.object(at: path(0, -1)) }
        #expect(IndexPath(json: [0, 1]) == path(0, 1))
        #expect(IndexPath(json: [0]) == nil)
        #expect(IndexPath(json: [0, "1"]) == nil)
        #expect(IndexPath(json: [0, 1.5]) == nil)
    }

    @Test func indexPathForAnObjectUsesIdentity() throws {
        let keyed = Self.books()
        #expect(keyed.indexPath(for: ["id": 2]) == path(0, 1), "same id, other members")
        #expect(keyed.indexPath(for: ["id": 9]) == nil)
        #expect(keyed.indexPath(for: "Dune") == nil)
        try keyed.insert([["id": 0]], at: 0)
        #expect(keyed.indexPath(for: ["id": 2]) == path(0, 2), "the index follows edits")

        let whole = SimpleDataSource(name: "w", identity: Identity(key: nil), objects: ["a", ["x": 1, "y": 2], "a", 1])
        #expect(whole.indexPath(for: ["y": 2, "x": 1]) == path(0, 1), "member order does not matter")
        #expect(whole.indexPath(for: ["x": 1]) == nil)
        #expect(whole.indexPath(for: "a") == path(0, 0), "the first of equal objects")
        #expect(whole.indexPath(for: 1.0) == nil, "an integer is not a real")
        try whole.remove(at: 0, count: 1)
        #expect(whole.indexPath(for: "a") == path(0, 1))
    }

    @Test func objectsInSectionWindows() throws {
        let source = Self.books()
        #expect(try source.objects(inSection: 0, start: 1, count: 5).map { $0["id"] } == [2, 3])
        #expect(try source.objects(inSection: 0, start: 3, count: nil).isEmpty)
        #expect(try source.objects(inSection: 0, start: 0, count: 0).isEmpty)
        #expect(try source.objects(inSection: 0, start: 1, count: Int.max).map { $0["id"] } == [2, 3], "no overflow near Int.max")
        #expect { try source.objects(inSection: 0, start: 4, count: 1) } throws: { worded($0).field == "start" }
        #expect { try source.objects(inSection: 1, start: 0, count: 1) } throws: { worded($0).field == "section" }
    }

    @Test func describes() {
        #expect(
            Self.books().summary == [
                "name": "books", "kind": "simple", "numberOfSections": 1, "sectionTitles": [""], "counts": [3],
                "isFetching": false, "identityKey": "id", "revision": 1,
            ])
    }
}
