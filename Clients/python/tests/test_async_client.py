"""The asyncio client against the real daemon and the fixture API (pytest-asyncio)."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

import pytest

from conftest import BOOKS
from datasourced_client import AsyncClient, AsyncDataSource, DaemonExited, Event, LoadFailed, RPCError


async def async_books(client: AsyncClient, base_url: str, name: str = "books",
                      api_path: str = "/v1/books") -> AsyncDataSource:
    return await client.create_source(name, kind="paginated", remoteConfiguration={"baseURL": base_url},
                                      apiPath=api_path, **BOOKS)


async def test_initialize_gives_the_version_and_the_notifications_to_listen_for(aclient: AsyncClient):
    assert aclient.server_info["name"] == "datasourced"
    assert aclient.protocol_version.startswith("1.")
    assert aclient.notifications == frozenset(aclient.capabilities["notifications"])


async def test_edits_deliver_their_events_to_callbacks_before_the_call_returns(aclient: AsyncClient):
    events: list[Event] = []
    aclient.on_event(events.append)
    people = await aclient.create_source("people", kind="simple", identityKey="id", objects=[{"id": 1}])
    assert await people.insert_objects([{"id": 2}]) == 2
    assert [(e.kind, e.source) for e in events] == [("didChange", "people")]
    assert await people.objects() == [{"id": 1}, {"id": 2}]
    assert await people.index_path_for({"id": 2}) == (0, 1)
    assert [entry async for entry in people.rows()] == [((0, 0), {"id": 1}), ((0, 1), {"id": 2})]


async def test_async_iteration_over_a_page_load(aclient: AsyncClient, api: str):
    books = await async_books(aclient, api)
    async with books.events(timeout=5) as events:
        assert await books.fetch_data(wait=False) == {"isFetching": True}
        kinds = []
        async for event in events:
            kinds.append(event.kind)
            if event.is_final:
                break
    assert kinds == ["willLoadData", "didChange", "didChange", "finishedLoading"]
    assert await books.count_objects() == 4
    assert await books.has_more_pages()
    assert (await books.fetch_next_page(wait=True))["started"] is True
    assert [b["id"] for b in await books.objects()] == list(range(1, 9))


async def test_fetch_all_pages_and_a_sectioned_view(aclient: AsyncClient, api: str):
    books = await async_books(aclient, api)
    by_genre = await aclient.create_source("byGenre", kind="sectioned", source="books", sectioningKey="genre")
    seen: list[int] = []

    async def on_page(number: int, source: AsyncDataSource) -> None:
        seen.append(await source.count_objects())

    assert await books.fetch_all_pages(on_page) == 3
    assert seen == [4, 8, 10]
    snapshot = await by_genre.snapshot()
    assert snapshot.titles == ["science fiction", "mystery", "poetry"]
    assert len(snapshot.objects()) == 10


async def test_a_failed_page_raises_load_failed_with_the_url(aclient: AsyncClient, fresh_api: str):
    flaky = await async_books(aclient, fresh_api, name="flaky", api_path="/v1/flaky")
    await flaky.fetch_data(wait=True)
    with pytest.raises(LoadFailed) as failure:
        await flaky.fetch_next_page(wait=True)
    assert failure.value.error.get("status") == 503
    assert f"{fresh_api}/v1/flaky" in str(failure.value)
    if "serverMessage" in failure.value.error:  # protocol 1.1
        assert "'try again'" in str(failure.value)
    assert (await flaky.fetch_next_page(wait=True))["started"] is True


async def test_concurrent_requests_are_answered_each_to_its_caller(aclient: AsyncClient):
    delays = [300, 0, 150, 50]
    answers = await asyncio.gather(*(aclient.request("ping", {"delayMilliseconds": d}) for d in delays))
    assert [a["delayMilliseconds"] for a in answers] == delays


async def test_a_timed_out_request_is_cancelled_quietly(aclient: AsyncClient, caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG)
    with pytest.raises(TimeoutError):
        await aclient.request("ping", {"delayMilliseconds": 5000}, timeout=0.2)
    await aclient.ping()
    assert "dropped the late answer" in caplog.text
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


async def test_a_cancelled_task_cancels_its_request(aclient: AsyncClient, caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG)
    task = asyncio.create_task(aclient.request("ping", {"delayMilliseconds": 5000}))
    await asyncio.sleep(0)  # let the task send its request
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await aclient.ping()  # the daemon answered the cancelled ping first (-32800), at once
    assert "dropped the late answer" in caplog.text


async def test_invalid_params_raise_rpc_error(aclient: AsyncClient):
    with pytest.raises(RPCError) as error:
        await aclient.create_source("s", kind="sectioned", source="missing", sectioningKey="k")
    assert error.value.code == -32602 and error.value.data["field"] == "source"


async def test_an_event_stream_ends_when_the_daemon_dies(daemon: str):
    client = await AsyncClient.spawn(Path(daemon), timeout=5)
    async with client.events() as events:
        assert client.pid is not None
        os.kill(client.pid, 9)
        assert [event async for event in events] == []
    assert await client.wait_exit(5) == -9
    with pytest.raises(DaemonExited):
        await client.request("listSources")
    assert await client.close() == -9


async def test_the_async_client_is_an_async_context_manager(daemon: str):
    async with AsyncClient(daemon, timeout=10) as client:
        assert (await client.list_sources()) == []
    assert client.returncode == 0
