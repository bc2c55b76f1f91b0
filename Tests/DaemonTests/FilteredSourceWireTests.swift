@testable import Daemon
import DataSources
import JSONKit
import JSONRPC
import Testing

/// The filtered kind and `setFilter` over the wire (issue 30): refusals name their field and
/// lose nothing; `setFilter` sends one didChange before it answers; `withMatches` reads the
/// matched characters.
@Suite struct FilteredSourceWireTests {
    static let books: JSON = [
        ["id": 1, "title": "Bring Up the Bodies", "genre": "history", "year": 2012],
        ["id": 2, "title": "The Lord of the Rings", "genre": "fantasy", "year": 1954],
        ["id": 3, "title": "War and Peace", "genre": "history", "year": 1869],
    ]

    static func session() -> WireClient {
        let client = WireClient(fetcher: ScriptedFetcher([:]))
        _ = client.request("initialize")
        _ = client.request("createSource", ["name": "books", "kind": "simple", "identityKey": "id", "objects": books])
        _ = client.request(
            "createSource",
            [
                "name": "history", "kind": "filtered", "source": "books",
                "filter": ["keyPath": "genre", "op": "eq", "value": "history"],
            ])
        return client
    }

    /// The refusal's `data`, checking the code.
    static func refusal(_ response: JSON, _ context: String) -> JSON {
        #expect(response["error"]?["code"] == JSON(ErrorCode.invalidParams), "\(context): \(response)")
        return response["error"]?["data"] ?? .null
    }

    @Test(
        arguments: [
            (["keyPath": "year", "op": "between", "value": 1], "filter.op", "unknown operator \"between\""),
            (["keyPath": "year", "op": "in", "value": 1954], "filter.value", "an array of values"),
            (["keyPath": "year", "op": "lt", "value": ["x": 1]], "filter.value", "a number or a string"),
            (["keyPath": "title", "op": "prefix", "value": 5], "filter.value", "a string"),
            (["keyPath": "title", "op": "exists", "value": "yes"], "filter.value", "a boolean"),
            (["and": [["keyPath": "year", "op": "gt"]]], "filter.and[0].value", "missing"),
            (["or": "x"], "filter.or", "an array of predicates"),
            (["not": ["keyPath": "", "op": "eq", "value": 1]], "filter.not.keyPath", "key path"),
            (["keyPath": "year", "op": "eq", "value": 1, "and": []], "filter.keyPath", "unknown member"),
        ] as [(JSON, String, String)])
    func badFiltersAreRefusedNamingTheField(filter: JSON, field: String, words: String) {
        let client = Self.session()
        for (method, params) in [
            ("createSource", ["name": "f", "kind": "filtered", "source": "books", "filter": filter] as JSON),
            ("setFilter", ["source": "history", "filter": filter]),
        ] {
            let response = client.request(method, params)
            let data = Self.refusal(response, "\(method) \(filter)")
            #expect(data["field"] == JSON(field), "\(method) \(filter): \(response)")
            #expect(response["error"]?["message"]?.stringValue?.contains(words) == true, "\(method) \(filter): \(response)")
        }
        #expect(
            client.request("allObjects", ["source": "history"])["result"] == [Self.books.arrayValue![0], Self.books.arrayValue![2]],
            "nothing loaded is lost")
        #expect(client.request("describeSource", ["source": "history"])["result"]?["revision"] == 1)
        #expect(client.request("listSources")["result"]?.arrayValue?.count == 2, "no source was created")
    }

    /// Protocol.md: a filter nests at most 32 levels deep, each `and`, `or` and `not` a level (a
    /// comparison is none): 32 of them around a comparison are taken, and with one more the
    /// refusal names the 33rd, by createSource as by setFilter.
    @Test(arguments: ["not", "and", "or", "mixed"])
    func aFilterDeeperThanTheBoundIsRefused(nesting: String) {
        /// `levels` operators around a comparison, and the field of the innermost operator.
        func filter(levels: Int) -> (filter: JSON, innermost: String) {
            var filter: JSON = ["keyPath": "year", "op": "exists"]
            var members: [String] = []  // each level's member, outermost first
            for level in 0..<levels {
                let op = nesting == "mixed" ? ["not", "and", "or"][level % 3] : nesting
                filter = op == "not" ? ["not": filter] : [op: [filter]]
                members.insert(op == "not" ? ".not" : ".\(op)[0]", at: 0)
            }
            return (filter, "filter" + members.dropLast().joined())
        }
        #expect(Predicate.maximumDepth == 32)
        let client = Self.session()
        let allowed = filter(levels: 32).filter
        #expect(client.request("setFilter", ["source": "history", "filter": allowed])["result"] != nil, "32 levels are allowed")
        let created = client.request("createSource", ["name": "deep", "kind": "filtered", "source": "books", "filter": allowed])
        #expect(created["result"] != nil, "\(created)")
        let (deeper, field) = filter(levels: 33)
        #expect(field.hasPrefix("filter.") && field.split(separator: ".").count == 33, "\(field)")
        for (method, params) in [
            ("setFilter", ["source": "history", "filter": deeper] as JSON),
            ("createSource", ["name": "deeper", "kind": "filtered", "source": "books", "filter": deeper]),
        ] {
            let response = client.request(method, params)
            let data = Self.refusal(response, "\(method): 33 levels")
            #expect(data["field"]?.stringValue == field, "\(method): \(response)")
            #expect(response["error"]?["message"]?.stringValue?.contains("more than 32 levels") == true, "\(response)")
        }
        #expect(client.request("listSources")["result"]?.arrayValue?.count == 3, "the deeper one was not created")
    }

    @Test func aMatchNeedsKeyPathsAndSetFilterNeedsAFilteredSource() {
        let client = Self.session()
        let empty = client.request("setFilter", ["source": "history", "match": ["query": "war", "keyPaths": []]])
        #expect(Self.refusal(empty, "no key paths")["field"] == "match.keyPaths", "\(empty)")
        #expect(empty["error"]?["message"]?.stringValue?.contains("at least one key path") == true, "\(empty)")
        let notFiltered = client.request("setFilter", ["source": "books", "match": ["query": "war", "keyPaths": ["title"]]])
        #expect(Self.refusal(notFiltered, "on a simple source")["field"] == "source", "\(notFiltered)")
        #expect(notFiltered["error"]?["message"]?.stringValue?.contains("\"books\" is simple") == true, "\(notFiltered)")
        #expect(client.request("allObjects", ["source": "books"])["result"] == Self.books, "nothing loaded is lost")
    }

    @Test func setFilterSendsOneDidChangeBeforeItsAnswerAndNullRemoves() throws {
        let client = Self.session()
        let answer = client.request("setFilter", ["source": "history", "match": ["query": "war", "keyPaths": ["title"]]])
        #expect(answer["result"]?["match"] == ["query": "war", "keyPaths": ["title"]])
        #expect(answer["result"]?["filter"] == ["keyPath": "genre", "op": "eq", "value": "history"], "an absent filter is kept")
        let changes = client.notifications.filter { $0["method"] == "dataSource/didChange" && $0["params"]?["source"] == "history" }
        #expect(changes.count == 1)
        #expect(changes.first?["params"]?["changes"]?["deleted"] == [[0, 0]], "\(changes)")
        let removed = client.request("setFilter", ["source": "history", "filter": .null, "match": .null])
        #expect(removed["result"]?["filter"] == .null && removed["result"]?["match"] == .null)
        #expect(client.request("allObjects", ["source": "history"])["result"] == Self.books)
    }

    @Test func withMatchesGivesTheMatchedCharacters() throws {
        let client = Self.session()
        _ = client.request(
            "setFilter", ["source": "history", "filter": .null, "match": ["query": "rings", "keyPaths": ["genre", "title"]]])
        let one = client.request("objectAtIndexPath", ["source": "history", "indexPath": [0, 0], "withMatches": true])["result"]
        #expect(one?["object"]?["id"] == 2)
        #expect(one?["matches"]?["keyPath"] == "title")
        #expect(one?["matches"]?["positions"] == [16, 17, 18, 19, 20])
        #expect(one?["revision"] == nil, "revision only with withRevision")
        let slice = client.request("objectsInSection", ["source": "history", "section": 0, "withMatches": true])["result"]
        #expect(slice?["objects"]?.arrayValue?.count == slice?["matches"]?.arrayValue?.count)
        #expect(slice?["matches"]?[0]?["score"]?.integerValue ?? 0 > slice?["matches"]?[1]?["score"]?.integerValue ?? 0)
        let plain = client.request(
            "objectAtIndexPath", ["source": "books", "indexPath": [0, 0], "withMatches": true, "withRevision": true])["result"]
        #expect(
            plain?["matches"] == .null && plain?["revision"] != nil, "a source without a query has no matches: \(String(describing: plain))"
        )
        #expect(
            client.request("objectAtIndexPath", ["source": "history", "indexPath": [0, 0]])["result"]?["id"] == 2,
            "the 1.0 shape by default")
    }
}
