@testable import Daemon
@testable import DataSources
import JSONKit
import JSONRPC
import Testing

/// Every input has a cost bound: a page's rows, a read's rows, a counted list for a client
/// that takes change sets path by path, the pages walked towards a row; and numbers past 64
/// bits are kept, not refused.
@Suite struct InputBoundsTests {
    typealias Machine = PaginatedStateMachineTests
    typealias Counted = CountedPlaceholdersTests

    /// Seen failing before the fix: there was no limit, and a page of 15.7 million rows took
    /// seconds of the main loop and gigabytes.
    @Test func aPageOverMaxObjectsPerPageFailsAsTooLargeNamingTheLimit() throws {
        let (source, loader, recorder) = try Machine.source(extra: [("limits", ["maxObjectsPerPage": 5])])
        source.fetchData()
        loader.respond(0, json: Machine.page([1, 2, 3, 4, 5, 6]))
        let error = try #require(recorder.errors.first)
        #expect(error["kind"] == "tooLarge")
        #expect(error["maxObjectsPerPage"] == 5)
        #expect(error["message"]?.stringValue?.contains("more than 5 elements") == true)

        let (fits, fitsLoader, fitsRecorder) = try Machine.source(extra: [("limits", ["maxObjectsPerPage": 5])])
        fits.fetchData()
        fitsLoader.respond(0, json: Machine.page([1, 2, 3, 4, 5]))
        #expect(fitsRecorder.errors.isEmpty)
        #expect(fits.allObjects.compactMap { $0["id"]?.integerValue } == [1, 2, 3, 4, 5])
    }

    /// The same values cut into arrays of fewer elements still cost a node each: past 32 a row
    /// of the limit in all, the page fails before jansson makes them (a 30 MiB body of 157
    /// arrays of 99,999 zeros peaked at 726 MB before).
    @Test func valuesInAllAreBoundedWhateverTheShape() throws {
        let (source, loader, recorder) = try Machine.source(extra: [("limits", ["maxObjectsPerPage": 2])])
        source.fetchData()
        // No array of more than two elements, 127 commas in all.
        func tree(_ depth: Int) -> String { depth == 0 ? "0" : "[\(tree(depth - 1)),\(tree(depth - 1))]" }
        let body = Array(tree(7).utf8)
        let response = RemoteResponse(url: loader.requestedURLs[0], status: 200, contentType: "application/json", body: body)
        loader.pending[0].completion(loader.pending[0].decode(response))
        let error = try #require(recorder.errors.first)
        #expect(error["kind"] == "tooLarge" && error["maxObjectsPerPage"] == 2)
        #expect(error["message"]?.stringValue?.contains("more than 64 values in all") == true, "\(error)")
        func longer(_ text: String, total: Int) -> (offset: Int, inAll: Bool)? {
            Array(text.utf8).withUnsafeBytes { JSON.tooManyValues(100, totalLimit: total, in: $0, maximumDepth: 64) }
        }
        #expect(longer("[[1,2],[3,4]]", total: 4) == nil, "three commas")
        #expect(longer("[[1,2],[3,4]]", total: 3).map { $0.inAll } == true)
        #expect(longer(#"{"a":1,"b":2}"#, total: 1).map { $0.inAll } == true, "members count")
    }

    @Test func theDefaultLimitAndItsRangeAreChecked() throws {
        let (source, _, _) = try Machine.source()
        #expect(source.configuration.maximumObjectsPerPage == RemoteConfiguration.defaultMaximumObjectsPerPage)
        for bad: JSON in [0, -1, 50_000_001, "10"] {
            #expect(throws: ResponseError.self) { try Machine.source(extra: [("limits", ["maxObjectsPerPage": bad])]) }
        }
    }

    @Test func theArrayScanCountsElementsOfEveryArrayOutsideStrings() {
        func longer(_ text: String, _ limit: Int) -> Int? {
            Array(text.utf8).withUnsafeBytes { JSON.arrayLongerThan(limit, in: $0, maximumDepth: 64) }
        }
        #expect(longer("[1,2,3]", 3) == nil)
        #expect(longer("[1,2,3,4]", 3) == 6)
        #expect(longer(#"{"a":1,"b":2,"c":3,"d":4}"#, 3) == nil, "object members are not elements")
        #expect(longer(#"["a,b,c,d,e"]"#, 3) == nil, "commas in strings are not counted")
        #expect(longer(#"["\",\",\",\"", 1]"#, 1) == 14)
        #expect(longer("[[1,2],[3,4],[5,6]]", 2) == 12, "the outer array of three")
        #expect(longer("[[1,2,3]]", 2) == 5, "an inner array")
    }

    /// Seen failing before the fix: an id of 2^64 - 1 failed the whole page with kind `decode`.
    @Test func integersPast64BitsAreKeptAsTheirDigits() throws {
        let (source, loader, recorder) = try Machine.source()
        source.fetchData()
        let body = Array(
            #"[{"id": 18446744073709551615, "n": -9223372036854775809, "r": 1e400, "s": "99999999999999999999"}, {"id": 2}]"#.utf8)
        let response = RemoteResponse(url: loader.requestedURLs[0], status: 200, contentType: "application/json", body: body)
        loader.pending[0].completion(loader.pending[0].decode(response))
        #expect(recorder.errors.isEmpty, "\(recorder.errors)")
        let first = try source.object(at: IndexPath(section: 0, item: 0))
        #expect(first["id"] == "18446744073709551615")
        #expect(first["n"] == "-9223372036854775809")
        #expect(first["r"] == "1e400")
        #expect(first["s"] == "99999999999999999999", "strings stay as they are")
        #expect(try source.indexPath(for: ["id": "18446744073709551615"]) == IndexPath(section: 0, item: 0), "an identity, exactly")
    }

    @Test func quotingLeavesMalformedNumbersAndStringsAlone() {
        func quoted(_ text: String) -> String? {
            JSON.quotingUnholdableNumbers(in: Array(text.utf8)).map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(quoted("[1, 2]") == nil)
        #expect(quoted("[18446744073709551616]") == #"["18446744073709551616"]"#)
        #expect(quoted(#"["18446744073709551616", 1]"#) == nil)
        #expect(quoted(#"{"a\"b": 18446744073709551616}"#) == #"{"a\"b": "18446744073709551616"}"#)
        #expect(quoted("[01234567890123456789012]") == nil, "not a JSON number: left to fail")
        #expect(quoted("[1-18446744073709551616]") == nil)
        #expect(quoted("[9223372036854775807, -9223372036854775808]") == nil, "the ends of Int64 are held")
        #expect(quoted(#"["unterminated 18446744073709551616"#) == nil)
        // Where a member name is due, a number stays: quoted, it would make invalid JSON valid.
        #expect(quoted("{99999999999999999999: 1}") == nil)
        #expect(quoted(#"{"a": 1, 99999999999999999999: 1}"#) == nil)
        #expect(
            quoted(#"[{"a": 18446744073709551616, "b": [18446744073709551617]}, 1]"#)
                == #"[{"a": "18446744073709551616", "b": ["18446744073709551617"]}, 1]"#)
    }

    /// Seen failing before the fix: `jumpThreshold` 2^31 with a page size of 1 walked page by
    /// page towards the row, one request each.
    @Test func aFarRowIsAJumpPastTenPagesWhateverTheThreshold() throws {
        let (source, loader, _) = try Counted.counted([("jumpThreshold", 2_147_483_648), ("pageSize", 1)])
        source.fetchData()
        loader.respond(0, json: Counted.page(0..<1, total: 1_000_000))
        source.willDisplayObject(at: IndexPath(section: 0, item: 5000))
        #expect(loader.requestedURLs.count == 2)
        #expect(loader.requestedURLs.last == "http://api.invalid/items?page=5001&page_size=1", "its own page, not the next")
        // Within ten pages it still walks.
        let (near, nearLoader, _) = try Counted.counted([("jumpThreshold", 2_147_483_648), ("pageSize", 1)])
        near.fetchData()
        nearLoader.respond(0, json: Counted.page(0..<1, total: 1_000_000))
        near.willDisplayObject(at: IndexPath(section: 0, item: 8))
        #expect(nearLoader.requestedURLs.last == "http://api.invalid/items?page=2&page_size=1")
    }

    /// A server that keeps to no page size: the threshold worked out from `pageSize` says walk,
    /// and pages are counted as they load: ten, then one jump, then nothing more for that row.
    @Test func aWalkCountsThePagesItLoads() throws {
        let (source, loader, _) = try Counted.counted([("pageSize", 1000)])
        source.fetchData()
        loader.respond(0, json: Counted.page(0..<10, total: 1_000_000))
        source.willDisplayObject(at: IndexPath(section: 0, item: 150))
        var served = 1
        while served < loader.requestedURLs.count, served < 100 {
            let start = 10 * served
            loader.respond(served, json: Counted.page(start..<start + 10, total: 1_000_000))
            served += 1
        }
        #expect(loader.requestedURLs.count == 12, "the first page, ten walked, one jump: \(loader.requestedURLs)")
        #expect(Counted.paging(source)?.jumps == 1)
    }

    /// Seen failing before the fix: a counted list of any size for a client without ranges.
    @Test func aCountedListForAClientWithoutRangesStopsAtItsLimitAndSaysWhy() throws {
        let (source, loader, _) = try Counted.counted()
        source.maximumCountedRowsForClient = PaginatedDataSource.maximumCountedRowsWithoutRanges
        source.fetchData()
        loader.respond(0, json: Counted.page(0..<10, total: 50_000_000))
        #expect(source.numberOfObjects(inSection: 0) == 11, "ten rows and the loading row")
        let refusal = try #require(Counted.paging(source)?.placeholders.refusal)
        #expect(refusal.contains("changeRanges") && refusal.contains("100000"))

        let (within, withinLoader, _) = try Counted.counted()
        within.maximumCountedRowsForClient = PaginatedDataSource.maximumCountedRowsWithoutRanges
        within.fetchData()
        withinLoader.respond(0, json: Counted.page(0..<10, total: 100_000))
        #expect(within.numberOfObjects(inSection: 0) == 100_000)
    }

    @Test func theDaemonBoundsCountedListsOnlyForClientsWithoutRanges() {
        let page: JSON = ["items": [["id": 0]], "total_count": 1_200_000]
        let url = "http://fixture.invalid/items?page=1&page_size=1"
        for ranges in [false, true] {
            let client = WireClient(
                fetcher: ScriptedFetcher([
                    url: .success(RemoteResponse(url: url, status: 200, contentType: "application/json", body: page.encoded()))
                ]))
            _ = client.request("initialize", ["capabilities": ["changeRanges": JSON(ranges)]])
            let created = client.request(
                "createSource",
                [
                    "name": "c", "kind": "paginated", "identityKey": "id", "remoteConfiguration": ["baseURL": "http://fixture.invalid"],
                    "apiPath": "/items", "keyPath": "items", "pageSize": 1, "placeholders": "counted",
                ])
            #expect(created["result"] != nil, "\(created)")
            _ = client.request("fetchData", ["source": "c", "wait": true])
            let count = client.request("numberOfObjectsInSection", ["source": "c", "section": 0])["result"]
            #expect(count == (ranges ? 1_200_000 : 2), "changeRanges \(ranges)")

            // A read is bounded whatever the list: refused past the limit, naming it.
            if ranges {
                let all = client.request("objectsInSection", ["source": "c", "section": 0])
                #expect(all["error"]?["code"] == JSON(ErrorCode.invalidParams))
                #expect(all["error"]?["data"]?["field"] == "count")
                #expect(all["error"]?["data"]?["maxObjectsPerRead"] == JSON(DataSource.maximumObjectsPerRead))
                let whole = client.request("allObjects", ["source": "c"])
                #expect(whole["error"]?["data"]?["field"] == "source")
                let slice = client.request("objectsInSection", ["source": "c", "section": 0, "start": 1_100_000, "count": 1_000_000])
                #expect(slice["result"]?["objects"]?.count == 100_000, "a count past the end reads to the end")
                let over = client.request("objectsInSection", ["source": "c", "section": 0, "start": 0, "count": 1_000_001])
                #expect(over["error"]?["data"]?["field"] == "count")
            }
        }
    }

    /// Seen failing before the fix: answered -32700 under a null id, and the client waited on 77.
    @Test func aKeyHoldingANulIsRefusedUnderTheRequestsOwnID() {
        let client = WireClient(fetcher: ScriptedFetcher())
        _ = client.request("initialize")
        let answer = client.raw(Array(#"{"jsonrpc":"2.0","id":77,"method":"ping","params":{"x\u0000":1}}"#.utf8))
        #expect(answer["id"] == 77)
        #expect(answer["error"]?["code"] == JSON(ErrorCode.invalidParams))
        #expect(answer["error"]?["message"]?.stringValue?.contains("NUL") == true)
        // A batch: the others are served.
        let ping = client.request("ping")
        #expect(ping["result"] == ["delayMilliseconds": 0], "the daemon keeps serving")
    }
}
