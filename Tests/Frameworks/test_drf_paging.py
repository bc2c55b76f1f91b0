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
