@testable import Daemon
@testable import DataSources
import JSONKit
import JSONRPC
import Testing

/// Issue 28: `pagination.metadataHeader` reads the page metadata from a JSON response header
/// (flask-smorest's `X-Pagination`) instead of the body.
@Suite struct MetadataHeaderTests {
    static let smorest: [(String, JSON)] = [
        ("paginatorKeys", ["numberOfPages": "total_pages", "numberOfTotalObjects": "total"]),
        ("requestKeys", ["pageSize": "page_size"]),
    ]

    static func header(_ value: String) -> [(name: String, value: String)] { [("X-Pagination", value)] }

    /// flask-smorest's own shape: the page count ends paging with no extra empty request, and
    /// the total is known from the first page.
    @Test func flaskSmorestsHeaderEndsPagingAndGivesTheTotal() throws {
        let (source, loader, recorder) = try PaginatedStateMachineTests.source(["metadataHeader": "X-Pagination"], extra: Self.smorest)
        source.fetchData()
        loader.respond(
            0, json: PaginatedStateMachineTests.page([1, 2]),
            headers: Self.header(#"{"total": 250, "total_pages": 5, "first_page": 1, "last_page": 5, "page": 1, "next_page": 2}"#))
        #expect(source.summary["numberOfTotalResults"] == 250 && source.summary["numberOfPages"] == 5)
        #expect(source.summary["hasMorePages"] == true)
        for page in 2...5 {
            try #require(source.fetchNextPage())
            #expect(loader.requestedURLs.last == "http://api.invalid/items?page=\(page)&page_size=2")
            var metadata =
                #"{"total": 250, "total_pages": 5, "first_page": 1, "last_page": 5, "page": \#(page), "previous_page": \#(page - 1)"#
            metadata += page < 5 ? #", "next_page": \#(page + 1)}"# : "}"
            loader.respond(page - 1, json: PaginatedStateMachineTests.page([2 * page - 1, 2 * page]), headers: Self.header(metadata))
        }
        #expect(source.summary["hasMorePages"] == false, "page 5 of 5: no sixth request")
        #expect(!source.fetchNextPage() && loader.pending.count == 5)
        #expect(recorder.events.last == "p.finished")
        #expect(source.summary["pagination"]?["metadataHeader"] == "X-Pagination")
    }

    @Test func everyMetadataPathReadsFromTheHeader() throws {
        let (cursor, cursorLoader, _) = try PaginatedStateMachineTests.source(
            ["strategy": "cursor", "cursorPath": "next_cursor", "hasMorePath": "more", "totalPath": "count", "metadataHeader": "X-Meta"])
        cursor.fetchData()
        cursorLoader.respond(
            0, json: PaginatedStateMachineTests.page([1, 2]), headers: [("X-Meta", #"{"next_cursor": "c2", "more": true, "count": 9}"#)])
        #expect(cursor.summary["nextPage"] == ["cursor": "c2"] && cursor.summary["numberOfTotalResults"] == 9)
        try #require(cursor.fetchNextPage())
        cursorLoader.respond(
            1, json: PaginatedStateMachineTests.page([3, 4]), headers: [("x-meta", #"{"next_cursor": "c3", "more": false}"#)])
        #expect(cursor.summary["hasMorePages"] == false, "hasMorePath in the header, its name in any case")

        let (next, nextLoader, _) = try PaginatedStateMachineTests.source([
            "strategy": "nextURL", "nextURLPath": "links.next", "metadataHeader": "X-Meta",
        ])
        next.fetchData()
        // The body's own `links` is not read: the header is the metadata.
        nextLoader.respond(
            0, json: ["links": ["next": "/wrong"], "items": [["id": 1]]],
            headers: [("X-Meta", #"{"links": {"next": "/items?after=1"}}"#)])
        #expect(next.summary["nextPage"] == ["url": "http://api.invalid/items?after=1"])

        let (keys, keysLoader, _) = try PaginatedStateMachineTests.source(
            ["metadataHeader": "X-Meta"], extra: [("metadataKeyPath", "meta")])
        keys.fetchData()
        keysLoader.respond(0, json: PaginatedStateMachineTests.page([1, 2]), headers: [("X-Meta", #"{"meta": {"number_of_pages": 1}}"#)])
        #expect(keys.summary["hasMorePages"] == false, "metadataKeyPath applies inside the header")
    }

    @Test func aResponseWithoutTheHeaderHasNoMetadata() throws {
        let (pages, pagesLoader, _) = try PaginatedStateMachineTests.source(
            ["metadataHeader": "X-Pagination"],
            extra: Self.smorest + [("keyPath", "items")])
        pages.fetchData()
        // The body's metadata is not read either: the header is where it would be.
        pagesLoader.respond(0, json: ["total_pages": 1, "items": [["id": 1], ["id": 2]]])
        #expect(
            pages.summary["hasMorePages"] == true && pages.summary["numberOfPages"] == .null, "as a body without those keys: paging goes on"
        )

        let (next, nextLoader, _) = try PaginatedStateMachineTests.source(["strategy": "nextURL", "metadataHeader": "X-Meta"])
        next.fetchData()
        nextLoader.respond(0, json: PaginatedStateMachineTests.page([1]))
        #expect(next.summary["hasMorePages"] == false, "no next URL")
    }

    @Test func aHeaderThatIsNotJSONFailsWithKindDecodeNamingIt() throws {
        let (source, loader, recorder) = try PaginatedStateMachineTests.source(["metadataHeader": "X-Pagination"])
        source.fetchData()
        loader.respond(0, json: PaginatedStateMachineTests.page([1, 2]), headers: Self.header("total=250; pages=5"))
        let error = try #require(recorder.errors.last)
        #expect(error["kind"] == "decode" && error["status"] == 200 && error["url"] == "http://api.invalid/items?page=1&page_size=2")
        #expect(error["message"]?.stringValue?.hasPrefix("the X-Pagination header is not JSON: ") == true, "\(error)")
        source.fetchData()
        loader.respond(
            1, json: PaginatedStateMachineTests.page([1, 2]),
            headers: Self.header(String(repeating: "[", count: 100) + String(repeating: "]", count: 100)))
        #expect(recorder.errors.last?["kind"] == "tooLarge" && recorder.errors.last?["maxDepth"] == 64)
    }

    @Test func createSourceRefusesABadHeaderName() throws {
        for (value, message) in [
            (JSON(5), "\"pagination.metadataHeader\" must be a non-empty string, got an integer"),
            (JSON(""), "\"pagination.metadataHeader\" must be a non-empty string, got \"\""),
            (
                JSON("X Pagination"),
                "\"pagination.metadataHeader\" must be a header name (letters, digits and !#$%&'*+-.^_`|~), got \"X Pagination\""
            ),
        ] {
            let refusal = try #require(wireRefusal { _ = try PaginatedStateMachineTests.source(["metadataHeader": value]) })
            #expect(refusal.code == ErrorCode.invalidParams && refusal.message == "Invalid params: " + message)
            #expect(refusal.data?["field"] == "pagination.metadataHeader")
        }
    }
}
