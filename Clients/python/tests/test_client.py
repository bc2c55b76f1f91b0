"""The synchronous client against the real daemon and a real HTTP fixture API."""

from __future__ import annotations

import pytest

from conftest import books_source
from datasourced_client import Client, DaemonExited, LoadFailed, RPCError, is_placeholder

LOADING = {"$placeholder": "loading"}


def test_initialize_reports_the_server_and_its_capabilities(client: Client):
    assert client.server_info["name"] == "datasourced"
    assert "paginated" in client.capabilities["sourceKinds"]
    assert "willDisplayObjectAtIndexPath" in client.capabilities["methods"]


def test_simple_source_reads_and_edits_with_events_delivered_before_the_call_returns(client: Client):
    events = []
    client.on_event(events.append)
    people = client.create_source("people", kind="simple", identityKey="id",
                                  objects=[{"id": 1, "name": "Ada"}, {"id": 2, "name": "Grace"}])
    assert people.number_of_sections == 1
    assert people.number_of_objects(0) == 2
    assert people.object_at((0, 1)) == {"id": 2, "name": "Grace"}
    assert people.index_path_for({"id": 2, "name": "anything"}) == (0, 1)
    assert people.index_path_for({"id": 3}) is None
    assert list(people) == [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Grace"}]

    assert people.insert_objects([{"id": 3, "name": "Barbara"}], index=0) == 3
    # The edit's didChange is delivered before insert_objects returns.
    assert [(e.kind, e.source) for e in events] == [("didChange", "people")]
    assert events[0].changes["inserted"] == [[0, 0]]

    assert people.update_objects([{"id": 1, "name": "Ada Lovelace"}]) == 3
    assert events[-1].changes["updated"] == [[0, 1]]
    assert people.remove_objects(2) == 2
    assert events[-1].changes["deleted"] == [[0, 2]]
    assert [row["name"] for row in people] == ["Barbara", "Ada Lovelace"]


def test_rows_keep_members_that_look_like_json_rpc_or_are_not_identifiers(client: Client):
    odd = [{"jsonrpc": "2.0", "id": 1, "method": "x", "result": {"jsonrpc": "2.0"}},
           {"$placeholder-ish": True, "with space": [1, {"a b": None}]}]
    source = client.create_source("odd", kind="simple", objects=odd)
    assert list(source) == odd
    assert source.object_at((0, 0)) == odd[0]


def test_paginated_source_loads_page_by_page_with_placeholders(client: Client, api: str):
    events = []
    books = books_source(client, api)
    books.on_event(events.append)

    assert books.fetch_data(wait=True) == {"isFetching": False, "outcome": "finished"}
    assert [e.kind for e in events] == ["willLoadData", "didChange", "didChange", "finishedLoading"]
    rows = list(books)
    assert [row["id"] for row in rows[:-1]] == [1, 2, 3, 4]
    assert rows[-1] == LOADING  # more pages: the trailing loading row asks for the next one
    state = books.describe()
    assert (state["currentPage"], state["numberOfPages"], state["numberOfTotalResults"]) == (1, 3, 10)
    assert books.has_more_pages

    finished = []
    books.on_event(lambda e: finished.append(e) if e.kind == "finishedLoading" else None)
    assert books.will_display((0, 0)) is False  # only the last row asks for more
    with client.events(timeout=5) as stream:
        assert books.will_display((0, len(rows) - 1)) is True  # the last row loads page 2
        for event in stream:
            if event.source == "books" and event.is_final:
                break
    assert len(finished) == 1  # page 2's cycle
    assert [row["id"] for row in books.objects()] == [1, 2, 3, 4, 5, 6, 7, 8]


def test_fetch_all_pages_ends_without_a_loading_row(client: Client, api: str):
    books = books_source(client, api)
    pages = []
    assert books.fetch_all_pages(on_page=lambda n, s: pages.append((n, len(s)))) == 3
    assert pages == [(1, 5), (2, 9), (3, 10)]
    assert [book["id"] for book in books] == list(range(1, 11))
    assert not books.has_more_pages
    refused = books.fetch_next_page()
    assert refused["started"] is False and "no more pages" in refused["reason"]


def test_sectioned_view_follows_its_paginated_child(client: Client, api: str):
    books = books_source(client, api)
    by_genre = client.create_source("byGenre", kind="sectioned", source="books", sectioningKey="genre",
                                    sortDescriptors=[{"keyPath": "year", "ascending": False}])
    books.fetch_all_pages()
    assert by_genre.section_titles == ["science fiction", "poetry", "mystery"]
    assert [b["title"] for b in by_genre.objects_in_section(2)] == ["Rebecca", "The Big Sleep", "Gaudy Night"]
    assert by_genre.index_path_for({"id": 6}) == (1, 1)
    assert len(by_genre) == 10


def test_http_failure_raises_load_failed_and_leaves_the_error_row(client: Client, api: str):
    broken = client.create_source("broken", kind="remote", remoteConfiguration={"baseURL": api},
                                  apiPath="/v1/broken", placeholderStorageOptions=["loading", "noResults", "errors"])
    with pytest.raises(LoadFailed) as failure:
        broken.fetch_data(wait=True)
    assert failure.value.kind == "http"
    assert failure.value.error["status"] == 500
    rows = list(broken)
    assert len(rows) == 1 and is_placeholder(rows[0]) and rows[0]["$placeholder"] == "error"
    assert rows[0]["error"]["status"] == 500

    result = broken.fetch_data(wait=True, raise_on_error=False)
    assert result["outcome"] == "failed" and result["error"]["kind"] == "http"


def test_empty_response_shows_the_no_results_row(client: Client, api: str):
    empty = client.create_source("empty", kind="remote", remoteConfiguration={"baseURL": api},
                                 apiPath="/v1/empty", keyPath="books")
    empty.fetch_data(wait=True)
    assert list(empty) == [{"$placeholder": "noResults"}]
    assert empty.objects() == []


def test_next_page_failure_keeps_rows_and_retries_the_same_page(client: Client, fresh_api: str):
    flaky = books_source(client, fresh_api, name="flaky", api_path="/v1/flaky",
                         placeholderStorageOptions=["loading", "noResults", "errors"])
    flaky.fetch_data(wait=True)
    with pytest.raises(LoadFailed) as failure:
        flaky.fetch_next_page(wait=True)
    assert failure.value.error["status"] == 503
    rows = list(flaky)
    assert [row["id"] for row in rows[:4]] == [1, 2, 3, 4]
    assert rows[4]["$placeholder"] == "error"

    assert flaky.fetch_next_page(wait=True)["started"] is True  # the retry asks for page 2 again
    assert [row["id"] for row in flaky.objects()] == list(range(1, 9))


def test_cancel_fetch_ends_the_load_with_a_cancelled_failure(client: Client, api: str):
    slow = client.create_source("slow", kind="remote", remoteConfiguration={"baseURL": api},
                                apiPath="/v1/slow", keyPath="books")
    finals = []
    slow.on_event(lambda e: finals.append(e) if e.is_final else None)
    assert slow.fetch_data(wait=False) == {"isFetching": True}
    assert slow.is_fetching
    assert list(slow) == [LOADING]
    assert slow.cancel_fetch() is True
    assert [(e.kind, e.error["kind"]) for e in finals] == [("failedWithError", "cancelled")]
    assert not slow.is_fetching
    assert slow.cancel_fetch() is False


def test_invalid_params_raise_rpc_error_and_the_daemon_keeps_serving(client: Client):
    client.create_source("kept", kind="simple", objects=[1, 2])
    with pytest.raises(RPCError) as error:
        client.create_source("bad", kind="remote", remoteConfiguration={"baseURL": "ftp://example.org"})
    assert error.value.code == -32602
    assert error.value.data["field"] == "remoteConfiguration.baseURL"
    with pytest.raises(RPCError) as error:
        client.source("kept").object_at((0, 2))
    assert error.value.code == -32602 and "indexPath" in error.value.message
    assert list(client.source("kept")) == [1, 2]


def test_a_request_that_times_out_is_cancelled_and_the_client_goes_on(client: Client):
    with pytest.raises(TimeoutError):
        client.request("ping", {"delayMilliseconds": 5000}, timeout=0.2)
    assert client.request("ping", {"delayMilliseconds": 0}) == {"delayMilliseconds": 0}


def test_events_iterator_yields_notifications_in_order_from_its_creation(client: Client):
    source = client.create_source("s", kind="simple", objects=[])
    with client.events(timeout=2) as stream:
        source.insert_objects([1])
        source.fetch_data(wait=False)
        kinds = []
        for event in stream:
            kinds.append(event.kind)
            if event.is_final:
                break
    assert kinds == ["didChange", "willLoadData", "finishedLoading"]


def test_without_a_stored_error_row_a_failed_page_leaves_no_trailing_row(client: Client, fresh_api: str):
    flaky = books_source(client, fresh_api, name="flaky", api_path="/v1/flaky")
    flaky.fetch_data(wait=True)
    with pytest.raises(LoadFailed):
        flaky.fetch_next_page(wait=True)
    assert [row["id"] for row in flaky] == [1, 2, 3, 4]


def test_a_daemon_that_dies_is_reported_as_daemon_exited(daemon: str):
    client = Client.spawn([daemon], timeout=5)
    client._connection.process.kill()
    client._exited.wait(5)
    with pytest.raises(DaemonExited):
        client.request("listSources")
    assert client.close() == -9


def test_a_missing_daemon_executable_says_how_to_fix_it():
    with pytest.raises(FileNotFoundError, match="DATASOURCED"):
        Client.spawn(["/nonexistent/datasourced"])
