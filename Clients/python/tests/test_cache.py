"""Protocol 1.2 through the client: the persisted cache across daemon restarts (cached rows
shown at once and marked stale, then confirmed by a 304, replaced by changed data, or left
stale when no answer comes) and live lists (a refresh that changes rows sends one didChange outside any load
cycle; one that changes nothing sends nothing). Each test serves its own fixture API
(routes answer a set number of times) and gives its daemons a private cache file."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from conftest import books_source, speaks
from datasourced_client import AsyncClient, Client, Event, Freshness, RPCError
from datasourced_client.events import FRESHNESS

BOOKS = [
    {"id": 1, "title": "Dune", "genre": "science fiction", "year": 1950},
    {"id": 2, "title": "Gaudy Night", "genre": "mystery", "year": 1953},
    {"id": 3, "title": "Ariel", "genre": "poetry", "year": 1956},
    {"id": 4, "title": "Solaris", "genre": "science fiction", "year": 1959},
    {"id": 5, "title": "The Big Sleep", "genre": "mystery", "year": 1962},
    {"id": 6, "title": "Howl", "genre": "poetry", "year": 1965},
    {"id": 7, "title": "Kindred", "genre": "science fiction", "year": 1968},
    {"id": 8, "title": "Rebecca", "genre": "mystery", "year": 1971},
    {"id": 9, "title": "Leaves of Grass", "genre": "poetry", "year": 1974},
    {"id": 10, "title": "Ubik", "genre": "science fiction", "year": 1977},
]
LOADING = {"$placeholder": "loading"}
CACHED = {"cache": {"enabled": True}}


def spawn(daemon: str, cache_file: Path, **options: Any) -> Client:
    client = Client.spawn([daemon], timeout=10, cache=cache_file, **options)
    if not speaks(client, (1, 2)):
        client.close()
        pytest.skip(f"the daemon speaks protocol {client.protocol_version}: the persisted cache came in 1.2")
    return client


def events_until(stream: Any, last: str) -> list[Event]:
    """The events of a stream up to and including the first of kind ``last`` (the stream's
    timeout bounds each wait: a missing event ends the list early, and the test fails)."""
    seen: list[Event] = []
    for event in stream:
        seen.append(event)
        if event.kind == last:
            break
    return seen


def load_three_pages(daemon: str, api: str, cache_file: Path, api_path: str) -> None:
    """A first daemon loads the three pages (each answer carries an ETag); the cache keeps
    them when it exits."""
    with spawn(daemon, cache_file) as client:
        books = books_source(client, api, api_path=api_path, **CACHED)
        assert books.description["cache"] == {"enabled": True, "maxPages": 20, "available": True}
        assert books.description["stale"] is False and "cachedAt" not in books.description
        assert books.fetch_all_pages() == 3
        assert books.objects() == BOOKS
        assert books.freshness() == Freshness(stale=False)


def test_a_list_reopens_from_the_cache_at_once_stale_while_no_answer_comes(daemon: str, fresh_api: str,
                                                                         cache_file: Path):
    started = datetime.now(timezone.utc) - timedelta(seconds=1)
    load_three_pages(daemon, fresh_api, cache_file, "/v1/held")
    # A second daemon, same cache file: the server's answer to page one is held (never
    # given). The three pages' rows are shown at once, from the cache, marked stale.
    with spawn(daemon, cache_file, change_values=True) as client:
        books = books_source(client, fresh_api, api_path="/v1/held", **CACHED)
        with books.events(timeout=10) as stream:
            assert books.fetch_data(wait=False) == {"isFetching": True}
            opened = events_until(stream, FRESHNESS)
        assert [e.kind for e in opened] == ["willLoadData", "didChange", FRESHNESS]
        cached_rows = opened[1]
        assert cached_rows.changes is not None and cached_rows.changes["inserted"] == [[0, i] for i in range(10)]
        assert cached_rows.values is not None and cached_rows.values["inserted"] == BOOKS
        freshness = opened[2].freshness
        assert freshness is not None and freshness.stale and opened[2].stale is True
        assert freshness.cached_at is not None and started <= freshness.cached_at <= datetime.now(timezone.utc)
        # No response has come: the load is still in flight, and the rows are the cached ones.
        description = books.describe()
        assert description["isFetching"] is True and description["stale"] is True
        assert description.get("cachedAt") == opened[2].cached_at
        assert description["pagesLoaded"] == 3 and description["hasMorePages"] is False
        assert books.objects() == BOOKS
        assert books.freshness() == freshness
        # Giving up on the revalidation is a failed load: the cached rows stay, still stale.
        with books.events(timeout=10) as stream:
            assert books.cancel_fetch() is True
            ended = events_until(stream, "failedWithError")
        assert [e.kind for e in ended] == ["failedWithError"]
        assert ended[0].error is not None and ended[0].error["kind"] == "cancelled"
        assert books.objects() == BOOKS
        assert books.freshness().stale is True


def test_a_304_confirms_the_cached_rows_without_a_change(daemon: str, fresh_api: str, cache_file: Path):
    load_three_pages(daemon, fresh_api, cache_file, "/v1/catalog")
    with spawn(daemon, cache_file, change_values=True) as client:
        books = books_source(client, fresh_api, api_path="/v1/catalog", **CACHED)
        with books.events(timeout=10) as stream:
            assert books.fetch_data(wait=True) == {"isFetching": False, "outcome": "finished"}
            confirmed = events_until(stream, "finishedLoading")
        # Had the server sent page one again (200), the later pages would be dropped: a
        # didChange. None came, and every page is there.
        assert [e.kind for e in confirmed] == ["willLoadData", "didChange", FRESHNESS, FRESHNESS, "finishedLoading"]
        assert [e.stale for e in confirmed if e.kind == FRESHNESS] == [True, False]
        assert confirmed[3].freshness == Freshness(stale=False)
        assert books.objects() == BOOKS and not books.has_more_pages()
        description = books.describe()
        assert description["stale"] is False and "cachedAt" not in description


def test_changed_data_replaces_the_cached_rows_with_one_exact_change_set(daemon: str, fresh_api: str,
                                                                        cache_file: Path):
    load_three_pages(daemon, fresh_api, cache_file, "/v1/revised")
    # Page one changed on the server (Dune revised). The cached rows show first; then one
    # change set, from them to the fresh page one: Dune updated, the later pages dropped
    # (paging goes on from page one), the loading row for page two.
    with spawn(daemon, cache_file, change_values=True) as client:
        books = books_source(client, fresh_api, api_path="/v1/revised", **CACHED)
        with books.events(timeout=10) as stream:
            books.fetch_data(wait=True)
            replaced = events_until(stream, "finishedLoading")
        assert [e.kind for e in replaced] == ["willLoadData", "didChange", FRESHNESS, "didChange", FRESHNESS,
                                              "finishedLoading"]
        change = replaced[3]
        assert change.changes is not None and change.values is not None
        assert change.changes["updated"] == [[0, 0]]
        assert change.values["updated"] == [{**BOOKS[0], "title": "Dune (revised)"}]
        assert sorted(change.changes["deleted"]) == [[0, i] for i in range(4, 10)]
        assert change.changes["inserted"] == [[0, 4]] and change.values["inserted"] == [LOADING]
        assert [e.stale for e in replaced if e.kind == FRESHNESS] == [True, False]
        assert [row for _, row in books.rows()] == [{**BOOKS[0], "title": "Dune (revised)"}, *BOOKS[1:4], LOADING]
        assert books.has_more_pages()


def test_a_source_without_cache_says_nothing_of_freshness(daemon: str, api: str, cache_file: Path):
    with spawn(daemon, cache_file) as client:
        books = books_source(client, api)
        books.fetch_data(wait=True)
        description = books.describe()
        assert not {"cache", "stale", "cachedAt", "refresh", "refreshIntervalSeconds"} & set(description)
        assert books.freshness() == Freshness(stale=False)


def test_without_a_cache_file_a_cached_source_loads_from_the_server(daemon: str, api: str):
    with Client.spawn([daemon], timeout=10, cache=False) as client:
        if not speaks(client, (1, 2)):
            pytest.skip(f"the daemon speaks protocol {client.protocol_version}: the persisted cache came in 1.2")
        books = books_source(client, api, api_path="/v1/catalog", **CACHED)
        assert books.description["cache"]["available"] is False
        events: list[Event] = []
        books.on_event(events.append)
        books.fetch_data(wait=True)
        assert FRESHNESS not in [e.kind for e in events]
        assert len(books.objects()) == 4


def test_a_live_list_sends_one_change_when_the_server_changes_and_nothing_when_it_does_not(daemon: str,
                                                                                          fresh_api: str,
                                                                                          cache_file: Path):
    # /v1/live answers the load, then 304 to the first refresh, then new rows (a book
    # edited, one added) to the second, then 304 for ever.
    with spawn(daemon, cache_file, change_values=True) as client:
        live = client.create_source("live", kind="remote", identityKey="id", keyPath="books",
                                    remoteConfiguration={"baseURL": fresh_api}, apiPath="/v1/live",
                                    refreshIntervalSeconds=1)
        assert live.description["refreshIntervalSeconds"] == 1
        assert live.description["refresh"]["intervalSeconds"] == 1
        assert live.description["refresh"]["consecutiveFailures"] == 0
        with live.events(timeout=15) as stream:
            live.fetch_data(wait=True)
            assert live.objects() == BOOKS[:3]
            loaded = events_until(stream, "finishedLoading")
            refreshed = events_until(stream, "didChange")
        assert [e.kind for e in loaded] == ["willLoadData", "didChange", "didChange", "finishedLoading"]
        # The first refresh (304) sent nothing; the second sent one change set, and no
        # willLoadData or finishedLoading around it: a refresh is not a load.
        assert [e.kind for e in refreshed] == ["didChange"]
        change = refreshed[0]
        assert change.changes is not None and change.values is not None
        assert change.changes["updated"] == [[0, 1]] and change.changes["inserted"] == [[0, 3]]
        assert not change.changes["deleted"] and not change.changes["moved"]
        assert change.values["updated"] == [{**BOOKS[1], "title": "Gaudy Night (2nd ed.)"}]
        assert change.values["inserted"] == [BOOKS[3]]
        assert loaded[-2].revision == change.previous_revision
        assert live.objects() == [BOOKS[0], {**BOOKS[1], "title": "Gaudy Night (2nd ed.)"}, BOOKS[2], BOOKS[3]]
        assert live.describe()["refresh"]["consecutiveFailures"] == 0

        stopped = live.set_refresh_interval(None)
        assert "refresh" not in stopped and "refreshIntervalSeconds" not in stopped


def test_set_refresh_interval_starts_changes_and_stops_refreshes(daemon: str, api: str, cache_file: Path):
    with spawn(daemon, cache_file) as client:
        books = books_source(client, api, api_path="/v1/catalog")
        assert "refresh" not in books.description
        described = books.set_refresh_interval(30)
        assert described["refreshIntervalSeconds"] == 30
        refresh = described["refresh"]
        assert refresh["intervalSeconds"] == 30 and refresh["consecutiveFailures"] == 0
        next_refresh = datetime.fromisoformat(refresh["nextRefreshAt"])
        # Due in about an interval, give or take the tenth the daemon adds or takes.
        assert timedelta(seconds=26) <= next_refresh - datetime.now(timezone.utc) <= timedelta(seconds=34)
        assert books.description == described
        assert books.set_refresh_interval(None).get("refresh") is None
        assert "refresh" not in books.describe()
        with pytest.raises(RPCError) as refused:
            books.set_refresh_interval(0.5)
        assert refused.value.code == -32602 and refused.value.data["field"] == "seconds"


async def test_the_asyncio_client_sees_a_cached_open_and_a_live_change(daemon: str, fresh_api: str,
                                                                     cache_file: Path):
    first = await AsyncClient.spawn([daemon], timeout=10, cache=cache_file)
    try:
        if not speaks(first, (1, 2)):
            pytest.skip(f"the daemon speaks protocol {first.protocol_version}: the persisted cache came in 1.2")
        live = await first.create_source("live", kind="remote", identityKey="id", keyPath="books",
                                         remoteConfiguration={"baseURL": fresh_api}, apiPath="/v1/live", **CACHED)
        await live.fetch_data(wait=True)
        async with live.events(timeout=15) as stream:
            await live.set_refresh_interval(1)
            kinds = []
            async for event in stream:
                kinds.append(event.kind)
                if event.kind == "didChange":
                    break
        assert kinds == ["didChange"]  # the 304 before it sent nothing
        assert len(await live.objects()) == 4
    finally:
        await first.close()

    # The refresh that changed the rows stored them: a second daemon opens with all four.
    second = await AsyncClient.spawn([daemon], timeout=10, cache=cache_file, change_values=True)
    try:
        live = await second.create_source("live", kind="remote", identityKey="id", keyPath="books",
                                          remoteConfiguration={"baseURL": fresh_api}, apiPath="/v1/live", **CACHED)
        async with live.events(timeout=10) as stream:
            await live.fetch_data(wait=False)
            seen: list[Event] = []
            async for event in stream:
                seen.append(event)
                if event.is_final:
                    break
        assert [e.kind for e in seen] == ["willLoadData", "didChange", FRESHNESS, FRESHNESS, "finishedLoading"]
        assert seen[1].values is not None and [book["id"] for book in seen[1].values["inserted"]] == [1, 2, 3, 4]
        assert [e.freshness.stale for e in seen if e.freshness is not None] == [True, False]
        assert (await live.freshness()).stale is False
    finally:
        await second.close()
