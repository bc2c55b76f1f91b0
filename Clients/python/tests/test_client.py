"""The synchronous client against the real daemon and a real HTTP fixture API."""

from __future__ import annotations

import logging
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from conftest import books_source, speaks_1_1
from datasourced_client import Client, DaemonExited, Event, LoadFailed, RPCError, is_placeholder

LOADING = {"$placeholder": "loading"}


def test_initialize_reports_the_server_its_capabilities_and_the_notifications_it_sends(client: Client):
    assert client.server_info["name"] == "datasourced"
    assert client.protocol_version.startswith("1.")
    assert "paginated" in client.capabilities["sourceKinds"]
    assert "willDisplayObjectAtIndexPath" in client.capabilities["methods"]
    # The client's list of notifications is the daemon's, read at run time.
    assert client.notifications == frozenset(client.capabilities["notifications"])
    assert "dataSource/didChange" in client.notifications


def test_simple_source_reads_and_edits_with_events_delivered_before_the_call_returns(client: Client):
    events: list[Event] = []
    client.on_event(events.append)
    people = client.create_source("people", kind="simple", identityKey="id",
                                  objects=[{"id": 1, "name": "Ada"}, {"id": 2, "name": "Grace"}])
    assert people.number_of_sections() == 1
    assert people.number_of_objects(0) == 2
    assert people.object_at((0, 1)) == {"id": 2, "name": "Grace"}
    assert people.index_path_for({"id": 2, "name": "anything"}) == (0, 1)
    assert people.index_path_for({"id": 3}) is None
    assert list(people.rows()) == [((0, 0), {"id": 1, "name": "Ada"}), ((0, 1), {"id": 2, "name": "Grace"})]

    assert people.insert_objects([{"id": 3, "name": "Barbara"}], index=0) == 3
    # The edit's didChange is delivered before insert_objects returns.
    assert [(e.method, e.kind, e.source) for e in events] == [("dataSource/didChange", "didChange", "people")]
    assert events[0].changes is not None and events[0].changes["inserted"] == [[0, 0]]

    assert people.update_objects([{"id": 1, "name": "Ada Lovelace"}]) == 3
    assert events[-1].changes is not None and events[-1].changes["updated"] == [[0, 1]]
    assert people.remove_objects(2) == 2
    assert events[-1].changes is not None and events[-1].changes["deleted"] == [[0, 2]]
    assert [row["name"] for row in people.objects()] == ["Barbara", "Ada Lovelace"]


def test_rows_keep_members_that_look_like_json_rpc_or_are_not_identifiers(client: Client):
    odd = [{"jsonrpc": "2.0", "id": 1, "method": "x", "result": {"jsonrpc": "2.0"}},
           {"$placeholder-ish": True, "with space": [1, {"a b": None}]}]
    source = client.create_source("odd", kind="simple", objects=odd)
    assert source.objects() == odd
    assert source.object_at((0, 0)) == odd[0]


def test_paginated_source_loads_page_by_page_with_placeholders(client: Client, api: str):
    events: list[Event] = []
    books = books_source(client, api)
    books.on_event(events.append)

    assert books.fetch_data(wait=True) == {"isFetching": False, "outcome": "finished"}
    assert [e.kind for e in events] == ["willLoadData", "didChange", "didChange", "finishedLoading"]
    snapshot = books.snapshot()
    rows = [row for _, row in snapshot.rows()]
    assert [row["id"] for row in rows[:-1]] == [1, 2, 3, 4]
    assert rows[-1] == LOADING  # more pages: the trailing loading row asks for the next one
    state = books.describe()
    assert (state["currentPage"], state["numberOfPages"], state["numberOfTotalResults"]) == (1, 3, 10)
    assert books.has_more_pages()

    finished: list[Event] = []
    books.on_event(lambda e: finished.append(e) if e.kind == "finishedLoading" else None)
    assert books.will_display((0, 0)) is False  # only the last row asks for more
    with books.events(timeout=5) as stream:
        assert books.will_display((0, len(rows) - 1)) is True  # the last row loads page 2
        for event in stream:
            if event.is_final:
                break
    assert len(finished) == 1  # page 2's cycle
    assert [row["id"] for row in books.objects()] == [1, 2, 3, 4, 5, 6, 7, 8]


def test_reads_are_methods_and_counts_leave_placeholders_out(client: Client, api: str):
    # Issue 10: `has_more_pages` and `len(source)` were properties that made a request on
    # every read, and len() counted the trailing loading row as a book.
    books = books_source(client, api)
    books.fetch_data(wait=True)
    assert books.number_of_objects(0) == 5  # rows: four books and the loading row
    assert books.count_objects() == 4
    assert books.has_more_pages() is True and books.is_fetching() is False
    with pytest.raises(TypeError):
        len(books)  # type: ignore[arg-type]
    by_genre = client.create_source("byGenre", kind="sectioned", source="books", sectioningKey="genre")
    assert by_genre.count_objects() == len(by_genre.objects()) == 4
    assert all(not is_placeholder(row) for row in by_genre.objects())


def test_fetch_all_pages_ends_without_a_loading_row(client: Client, api: str):
    books = books_source(client, api)
    pages: list[tuple[int, int]] = []
    assert books.fetch_all_pages(on_page=lambda n, s: pages.append((n, s.snapshot().number_of_rows))) == 3
    assert pages == [(1, 5), (2, 9), (3, 10)]
    assert [book["id"] for book in books.objects()] == list(range(1, 11))
    assert books.count_objects() == 10
    assert not books.has_more_pages()
    refused = books.fetch_next_page()
    assert refused["started"] is False and "no more pages" in refused.get("reason", "")


def test_sectioned_view_follows_its_paginated_child(client: Client, api: str):
    books = books_source(client, api)
    by_genre = client.create_source("byGenre", kind="sectioned", source="books", sectioningKey="genre",
                                    sortDescriptors=[{"keyPath": "year", "ascending": False}])
    books.fetch_all_pages()
    assert by_genre.section_titles() == ["science fiction", "poetry", "mystery"]
    assert [b["title"] for b in by_genre.objects_in_section(2)] == ["Rebecca", "The Big Sleep", "Gaudy Night"]
    assert by_genre.index_path_for({"id": 6}) == (1, 1)
    snapshot = by_genre.snapshot()
    assert snapshot.titles == ["science fiction", "poetry", "mystery"]
    assert [len(section.rows) for section in snapshot.sections] == [4, 3, 3]
    assert by_genre.count_objects() == 10


def test_http_failure_raises_load_failed_naming_the_url_and_leaves_the_error_row(client: Client, api: str):
    broken = client.create_source("broken", kind="remote", remoteConfiguration={"baseURL": api},
                                  apiPath="/v1/broken", placeholderStorageOptions=["loading", "noResults", "errors"])
    with pytest.raises(LoadFailed) as failure:
        broken.fetch_data(wait=True)
    assert failure.value.kind == "http"
    assert failure.value.error.get("status") == 500
    assert f"{api}/v1/broken" in str(failure.value)
    if "serverMessage" in failure.value.error:  # protocol 1.1: the server's own words, shown
        assert failure.value.error["serverMessage"] == "the database is on fire"
        assert str(failure.value).endswith(f"{api}/v1/broken: 'the database is on fire'")
    rows = [row for _, row in broken.rows()]
    assert len(rows) == 1 and is_placeholder(rows[0]) and rows[0]["$placeholder"] == "error"
    assert rows[0]["error"]["status"] == 500
    assert broken.count_objects() == 0  # an error row is not data

    result = broken.fetch_data(wait=True, raise_on_error=False)
    assert result.get("outcome") == "failed" and result.get("error", {}).get("kind") == "http"


def test_empty_response_shows_the_no_results_row(client: Client, api: str):
    empty = client.create_source("empty", kind="remote", remoteConfiguration={"baseURL": api},
                                 apiPath="/v1/empty", keyPath="books")
    empty.fetch_data(wait=True)
    assert [row for _, row in empty.rows()] == [{"$placeholder": "noResults"}]
    assert empty.objects() == [] and empty.count_objects() == 0


def test_next_page_failure_keeps_rows_and_retries_the_same_page(client: Client, fresh_api: str):
    flaky = books_source(client, fresh_api, name="flaky", api_path="/v1/flaky",
                         placeholderStorageOptions=["loading", "noResults", "errors"])
    flaky.fetch_data(wait=True)
    with pytest.raises(LoadFailed) as failure:
        flaky.fetch_next_page(wait=True)
    assert failure.value.error.get("status") == 503
    rows = [row for _, row in flaky.rows()]
    assert [row["id"] for row in rows[:4]] == [1, 2, 3, 4]
    assert rows[4]["$placeholder"] == "error"

    assert flaky.fetch_next_page(wait=True)["started"] is True  # the retry asks for page 2 again
    assert [row["id"] for row in flaky.objects()] == list(range(1, 9))


def test_an_event_callback_may_wait_for_a_page(client: Client, api: str):
    books = books_source(client, api)
    books.fetch_data(wait=True)
    loaded_in_callback: list[int] = []

    def on_first_change(event: Event) -> None:
        if event.kind == "didChange" and not loaded_in_callback:
            loaded_in_callback.append(0)
            books.fetch_next_page(wait=True)  # waits on the event loop, not on this thread
            loaded_in_callback[0] = books.count_objects()

    remove = client.on_event(on_first_change)
    client.create_source("trigger", kind="simple").insert_objects([1])
    remove()
    assert loaded_in_callback == [8]


def test_cancel_fetch_ends_the_load_with_a_cancelled_failure(client: Client, api: str):
    slow = client.create_source("slow", kind="remote", remoteConfiguration={"baseURL": api},
                                apiPath="/v1/slow", keyPath="books")
    finals: list[Event] = []
    slow.on_event(lambda e: finals.append(e) if e.is_final else None)
    assert slow.fetch_data(wait=False) == {"isFetching": True}
    assert slow.is_fetching()
    assert [row for _, row in slow.rows()] == [LOADING]
    assert slow.cancel_fetch() is True
    assert [(e.kind, (e.error or {}).get("kind")) for e in finals] == [("failedWithError", "cancelled")]
    assert not slow.is_fetching()
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
    assert client.source("kept").objects() == [1, 2]


def test_a_request_that_times_out_is_cancelled_and_its_late_answer_is_dropped_quietly(
        client: Client, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]):
    # Issue 10: the daemon's answer to the cancelled request (-32800) came back to a
    # cancelled future, and pygls printed "Unable to handle message ... InvalidStateError".
    caplog.set_level(logging.DEBUG)
    with pytest.raises(TimeoutError):
        client.request("ping", {"delayMilliseconds": 5000}, timeout=0.2)
    # The daemon answers in order: the cancelled ping's answer comes before this one's.
    assert client.request("ping", {"delayMilliseconds": 0}) == {"delayMilliseconds": 0}
    assert "dropped the late answer to request" in caplog.text
    noisy = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert noisy == [], [r.getMessage() for r in noisy]
    assert "InvalidStateError" not in capfd.readouterr().err


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
    assert [row["id"] for _, row in flaky.rows()] == [1, 2, 3, 4]


def test_revisions_number_the_changes_and_snapshots(client: Client):
    if not speaks_1_1(client):
        pytest.skip(f"the daemon speaks protocol {client.protocol_version}: revisions came in 1.1")
    events: list[Event] = []
    source = client.create_source("r", kind="simple", objects=[1])
    source.on_event(events.append)
    first = source.describe()["revision"]
    source.insert_objects([2])
    source.remove_objects(0)
    assert [(e.previous_revision, e.revision) for e in events] == [(first, first + 1), (first + 1, first + 2)]
    snapshot = source.snapshot()
    assert (snapshot.revision, snapshot.objects()) == (first + 2, [2])


def test_change_values_carry_the_inserted_rows_when_asked_for(daemon: str):
    with Client.spawn([daemon], timeout=10, change_values=True) as client:
        if not speaks_1_1(client):
            pytest.skip(f"the daemon speaks protocol {client.protocol_version}: change values came in 1.1")
        assert client.capabilities.get("changeValues") is True
        events: list[Event] = []
        source = client.create_source("v", kind="simple", objects=[])
        source.on_event(events.append)
        source.insert_objects([{"id": 1}, {"id": 2}])
        assert events[-1].values == {"inserted": [{"id": 1}, {"id": 2}], "updated": []}


def test_a_daemon_that_dies_is_reported_as_daemon_exited(daemon: str):
    client = Client.spawn([daemon], timeout=5)
    assert client.pid is not None
    os.kill(client.pid, 9)
    assert client.wait_exit(5) == -9
    with pytest.raises(DaemonExited):
        client.request("listSources")
    assert client.close() == -9


def test_the_daemon_may_be_given_as_a_string_a_path_or_a_list(daemon: str):
    # Issue 10: Client.spawn("/path/to/datasourced") split the string into characters.
    for command in (daemon, Path(daemon), [daemon, "--log-level", "info"]):
        with Client.spawn(command, timeout=10) as client:  # type: ignore[arg-type]
            assert client.server_info["name"] == "datasourced", command


def test_datasourced_may_carry_arguments(daemon: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("DATASOURCED", f"{shlex.quote(daemon)} --log-level debug")
    with Client.spawn(timeout=10) as client:
        assert client.command == [daemon, "--log-level", "debug"]
        client.ping()
        assert client.server_info["name"] == "datasourced"


def test_a_recorded_session_replays_as_a_test(daemon: str, tmp_path: Path):
    usage = subprocess.run([daemon, "serve", "--help"], capture_output=True, text=True, timeout=10).stdout
    if "--record" not in usage:
        pytest.skip("this daemon has no --record option yet (issue 15); the command line is tested in test_package")
    transcript = tmp_path / "session.json"
    with Client.spawn(daemon, timeout=10, record=transcript) as client:
        people = client.create_source("people", kind="simple", objects=[{"id": 1}])
        people.insert_objects([{"id": 2}])
        assert people.objects() == [{"id": 1}, {"id": 2}]
    replay = subprocess.run([daemon, "replay", str(transcript)], capture_output=True, text=True, timeout=60)
    assert replay.returncode == 0, replay.stdout + replay.stderr


def test_a_daemon_that_refuses_its_arguments_says_why(daemon: str):
    with pytest.raises(DaemonExited) as exited:
        Client.spawn([daemon, "--no-such-option"], timeout=10)
    assert exited.value.returncode != 0
    assert "no-such-option" in str(exited.value)


def test_a_missing_daemon_executable_says_how_to_fix_it():
    with pytest.raises(FileNotFoundError, match="DATASOURCED"):
        Client.spawn("/nonexistent/datasourced")
