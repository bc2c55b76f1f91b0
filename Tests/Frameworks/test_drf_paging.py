"""Paging a real Django REST framework API (drfapi.py: 1,000 books, 100 a page) with the
configurations Protocol.md gives for it, asserting every request the daemon made."""

from __future__ import annotations

from datasourced_client import Client
from drfapi import DRFServer

BOOK_IDS = list(range(1000))


def ids(source) -> list[int]:  # type: ignore[no-untyped-def]
    return [row["id"] for row in source.objects()]


def test_page_number_pagination_by_next_url(client: Client, drf: DRFServer) -> None:
    books = client.create_source("books", kind="paginated", remoteConfiguration={"baseURL": drf.base_url},
                                 apiPath="/books/", keyPath="results", identityKey="id",
                                 pagination={"strategy": "nextURL", "totalPath": "count"})
    assert books.fetch_all_pages() == 10
    assert ids(books) == BOOK_IDS
    assert drf.requests == ["/books/"] + [f"/books/?page={n}" for n in range(2, 11)]
    assert books.has_more_pages() is False


def test_page_number_pagination_by_page_numbers(client: Client, drf: DRFServer) -> None:
    books = client.create_source("books", kind="paginated", remoteConfiguration={"baseURL": drf.base_url},
                                 apiPath="/books/", keyPath="results", identityKey="id",
                                 paginatorKeys={"numberOfTotalObjects": "count"}, pageSize=100)
    assert books.fetch_all_pages() == 10
    assert ids(books) == BOOK_IDS
    # The total (count) ends paging: no request for an eleventh page, and so no 404.
    assert drf.requests == [f"/books/?page={n}&page_size=100" for n in range(1, 11)]
    assert books.describe()["numberOfTotalResults"] == 1000


def test_limit_offset_pagination(client: Client, drf: DRFServer) -> None:
    books = client.create_source("books", kind="paginated", remoteConfiguration={"baseURL": drf.base_url},
                                 apiPath="/books-offset/", keyPath="results", identityKey="id", pageSize=250,
                                 pagination={"strategy": "offset", "totalPath": "count"})
    assert books.fetch_all_pages() == 4
    assert ids(books) == BOOK_IDS
    assert drf.requests == [f"/books-offset/?offset={n}&limit=250" for n in range(0, 1000, 250)]


def test_starting_in_the_middle_and_paging_back_by_page_numbers(client: Client, drf: DRFServer) -> None:
    books = client.create_source("books", kind="paginated", remoteConfiguration={"baseURL": drf.base_url},
                                 apiPath="/books/", keyPath="results", identityKey="id", pageSize=100,
                                 paginatorKeys={"numberOfTotalObjects": "count"}, initialPage=5)
    books.fetch_data(wait=True)
    assert ids(books) == list(range(400, 500))
    for page in (4, 3, 2, 1):
        assert books.fetch_previous_page(wait=True)["started"] is True
        assert ids(books) == list(range((page - 1) * 100, 500))
    refused = books.fetch_previous_page(wait=True)
    assert refused["started"] is False and "first page" in refused["reason"]
    assert books.load_states()["prepend"]["state"] == "endReached"
    assert drf.requests == [f"/books/?page={n}&page_size=100" for n in (5, 4, 3, 2, 1)]


def test_previous_links_after_the_window_dropped_the_first_pages(client: Client, drf: DRFServer) -> None:
    # DRF's own `previous` URL, read by previousURLPath, reloads what a window of three pages
    # let go on the way down.
    books = client.create_source("books", kind="paginated", remoteConfiguration={"baseURL": drf.base_url},
                                 apiPath="/books/", keyPath="results", identityKey="id",
                                 window={"maxPages": 3},
                                 pagination={"strategy": "nextURL", "totalPath": "count",
                                             "previousURLPath": "previous"})
    assert books.fetch_all_pages() == 10
    assert ids(books) == list(range(700, 1000))
    assert books.describe()["pagesDropped"] == 7
    del drf.requests[:]
    for first in (600, 500, 400):
        assert books.fetch_previous_page(wait=True)["started"] is True
        # The page before goes in at the top; the window lets the bottom page go.
        assert ids(books) == list(range(first, first + 300))
    assert drf.requests == ["/books/?page=7", "/books/?page=6", "/books/?page=5"]


def display_and_wait(client: Client, books, row: int) -> None:  # type: ignore[no-untyped-def]
    """Displays `row` and waits for the load it starts to finish."""
    with client.events(timeout=30, source="books") as events:
        assert books.will_display([0, row]) is True
        for event in events:
            assert event.kind != "failedWithError", event.params
            if event.kind == "finishedLoading":
                return


def test_counted_placeholders_and_jumps_by_page_numbers(client: Client, drf: DRFServer) -> None:
    # DRF's `count` gives the total: the list has its 1,000 rows from the first page on, and
    # displaying the last row loads page 10 alone, then the first row page 1 again.
    books = client.create_source("books", kind="paginated", remoteConfiguration={"baseURL": drf.base_url},
                                 apiPath="/books/", keyPath="results", identityKey="id", pageSize=100,
                                 paginatorKeys={"numberOfTotalObjects": "count"}, placeholders="counted")
    books.fetch_data(wait=True)
    assert books.number_of_objects() == 1000
    assert books.object_at([0, 99])["id"] == 99
    assert books.object_at([0, 100]) == {"$placeholder": "unloaded", "index": 100}
    display_and_wait(client, books, 999)
    assert books.object_at([0, 999])["id"] == 999
    assert books.object_at([0, 0]) == {"$placeholder": "unloaded", "index": 0}
    display_and_wait(client, books, 0)
    assert [row.get("id") for row in books.objects_in_section(0, 0, 100)] == list(range(100))
    # Within the threshold (two pages by default) the pages between load one after another.
    display_and_wait(client, books, 150)
    assert books.object_at([0, 150])["id"] == 150
    assert drf.requests == [f"/books/?page={n}&page_size=100" for n in (1, 10, 1, 2)]
    description = books.describe()
    assert description["placeholders"] == {"requested": "counted", "inForce": "counted"}
    assert description["capabilities"]["jump"] is True and description["jumps"] == 2


def test_a_next_url_source_counts_its_rows_but_cannot_jump(client: Client, drf: DRFServer) -> None:
    books = client.create_source("books", kind="paginated", remoteConfiguration={"baseURL": drf.base_url},
                                 apiPath="/books/", keyPath="results", identityKey="id", placeholders="counted",
                                 pagination={"strategy": "nextURL", "totalPath": "count", "previousURLPath": "previous"})
    books.fetch_data(wait=True)
    assert books.number_of_objects() == 1000
    try:
        books.will_display([0, 999])
    except Exception as error:  # the client raises the daemon's -32602
        assert "the nextURL strategy cannot load the page of a far row" in str(error)
    else:
        raise AssertionError("a jump on a next-URL source was not refused")
    assert drf.requests == ["/books/"]
    assert books.describe()["capabilities"]["reasons"]["jump"].startswith("the nextURL strategy")
