"""Actions on rows (protocol 1.9) through DataSource.act and AsyncDataSource.act, against
the real daemon and the books actions of Clients/fixtures.json (Clients/specs/books.json's
edit, delete and add): PATCH /v1/books/1 to "Dune Messiah" is accepted, /v1/books/2 refused
with a DRF validation error (400), /v1/books/4 with 409, /v1/books/3 answers 503 with
Retry-After: 3600 (queued); DELETE /v1/books/3 is accepted (204); POST /v1/books of Beloved
is created as id 99."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import REPO, speaks
from datasourced_client import (ActionRolledBack, ActionTimeout, AsyncClient, AsyncDataSource, Client, DataSource,
                                Event, RPCError)
from datasourced_client.actions import ActionValueError, parse_action_values

SPEC = json.loads((REPO / "Clients" / "specs" / "books.json").read_text())
BOOKS_CONFIG: dict[str, Any] = next(s for s in SPEC["sources"] if s["name"] == "books")
DUNE = {"id": 1, "title": "Dune", "genre": "science fiction", "year": 1950}


def config(base_url: str) -> dict[str, Any]:
    params = {k: v for k, v in BOOKS_CONFIG.items() if k not in ("name", "kind")}
    params["remoteConfiguration"] = {"baseURL": base_url}
    return params


def books(client: Client, base_url: str) -> DataSource:
    if not speaks(client, (1, 9)):
        pytest.skip("the daemon does not speak protocol 1.9 (actions)")
    source = client.create_source("books", kind="paginated", **config(base_url))
    source.fetch_data(wait=True)
    return source


def titles(source: DataSource) -> dict[Any, Any]:
    return {row["id"]: row["title"] for row in source.objects() if isinstance(row, dict)}


def test_an_accepted_edit_is_committed_after_its_optimistic_change(client: Client, api: str) -> None:
    source = books(client, api)
    events: list[Event] = []
    source.on_event(events.append)
    settlement = source.act("edit", 1, {"title": "Dune Messiah"})
    assert settlement == {"mutation": settlement["mutation"], "action": "edit", "source": "books",
                          "status": "committed"}
    kinds = [e.kind for e in events]
    assert kinds[0] == "didChange" and kinds[-1] == "didSettleMutation", kinds
    assert events[0].changes is not None and events[0].changes["updated"] == [[0, 0]]
    assert titles(source)[1] == "Dune Messiah"
    assert source.pending_mutations() == []


def test_the_optimistic_change_shows_before_the_settlement_and_reads_with_pending(client: Client, api: str) -> None:
    source = books(client, api)
    answered = source.act("edit", 1, {"title": "Dune Messiah"}, wait=False)
    assert answered["status"] == "pending"
    # The settlement may have come meanwhile; either way the row shows the new title.
    rows = source.rows_with_pending(0, 0, 2)
    assert rows[0][0] == {**DUNE, "title": "Dune Messiah"}
    assert rows[0][1] in ([answered["mutation"]], [])
    assert rows[1][1] == []


def test_a_refused_edit_is_rolled_back_with_the_servers_words(client: Client, api: str) -> None:
    source = books(client, api)
    seen: list[tuple[str, Any]] = []
    source.on_event(lambda e: seen.append((e.kind, e.values)))
    settlement = source.act("edit", 2, {"title": ""})
    assert settlement["status"] == "rolledBack"
    error = settlement["error"]
    assert (error["kind"], error["status"]) == ("http", 400)
    assert error["serverMessage"] == "title: This field may not be blank."
    assert titles(source)[2] == "Gaudy Night"  # the undo came before the settlement
    assert [kind for kind, _ in seen] == ["didChange", "didChange", "didSettleMutation"]
    with pytest.raises(ActionRolledBack) as raised:
        source.act("edit", 2, {"title": ""}, raise_on_error=True)
    assert raised.value.server_message == "title: This field may not be blank."
    assert "This field may not be blank." in str(raised.value)


def test_a_409_is_a_conflict_rolled_back(client: Client, api: str) -> None:
    source = books(client, api)
    settlement = source.act("edit", 4, {"title": "Solaris II"})
    assert settlement["status"] == "rolledBack"
    assert settlement["error"]["kind"] == "conflict"
    assert settlement["error"]["serverMessage"] == "Someone else changed this book."
    assert titles(source)[4] == "Solaris"


def test_a_queued_edit_stays_shown_until_it_is_cancelled(client: Client, api: str) -> None:
    source = books(client, api)
    queued = source.act("edit", 3, {"title": "Ariel (revised)"}, stop_at_queued=True)
    assert queued["status"] == "queued"
    assert queued["error"]["status"] == 503 and queued["error"]["retryAfterSeconds"] == 3600
    assert titles(source)[3] == "Ariel (revised)"
    pending = source.pending_mutations()
    assert [(p["mutation"], p["status"]) for p in pending] == [(queued["mutation"], "queued")]
    assert source.rows_with_pending(0, 2, 1) == [({"id": 3, "title": "Ariel (revised)", "genre": "poetry",
                                                   "year": 1956}, [queued["mutation"]])]
    events: list[Event] = []
    source.on_event(events.append)
    assert source.cancel_mutation(queued["mutation"]) == {"rolledBack": True}
    settles = [e for e in events if e.kind == "didSettleMutation"]
    assert [(e.params.get("status"), (e.error or {}).get("kind")) for e in settles] == [("rolledBack", "cancelled")]
    assert titles(source)[3] == "Ariel"
    assert source.pending_mutations() == []


def test_waiting_through_a_queued_mutation_times_out_naming_it(client: Client, api: str) -> None:
    source = books(client, api)
    with pytest.raises(ActionTimeout) as raised:
        source.act("edit", 3, {"title": "Ariel (revised)"}, timeout=1.5)
    timeout = raised.value
    assert timeout.last is not None and timeout.last["status"] == "queued"
    assert "Down for maintenance." in str(timeout)
    assert isinstance(timeout, TimeoutError)
    assert source.cancel_mutation(timeout.mutation) == {"rolledBack": True}


def test_delete_and_add_are_committed(client: Client, api: str) -> None:
    source = books(client, api)
    assert source.act("delete", 3)["status"] == "committed"
    assert 3 not in titles(source)
    added = source.act("add", values={"title": "Beloved", "genre": "fiction", "year": 1987})
    assert added["status"] == "committed"
    assert source.objects()[0] == {"id": 99, "title": "Beloved", "genre": "fiction", "year": 1987}


def test_a_refused_call_raises_and_changes_nothing(client: Client, api: str) -> None:
    source = books(client, api)
    with pytest.raises(RPCError) as raised:
        source.act("rename", 1, {"title": "x"})
    assert raised.value.code == -32602 and raised.value.data["field"] == "action"
    with pytest.raises(RPCError) as raised:
        source.act("edit", 1, {"title": 7})
    assert raised.value.data["field"] == "values.title"
    assert titles(source)[1] == "Dune"


async def test_async_act_settles_in_order(aclient: AsyncClient, api: str) -> None:
    if not speaks(aclient, (1, 9)):
        pytest.skip("the daemon does not speak protocol 1.9 (actions)")
    source: AsyncDataSource = await aclient.create_source("books", kind="paginated", **config(api))
    await source.fetch_data(wait=True)
    kinds: list[str] = []
    source.on_event(lambda e: kinds.append(e.kind))
    committed = await source.act("edit", 1, {"title": "Dune Messiah"})
    refused = await source.act("edit", 2, {"title": ""})
    assert (committed["status"], refused["status"]) == ("committed", "rolledBack")
    assert refused["error"]["serverMessage"] == "title: This field may not be blank."
    assert kinds[0] == "didChange"
    assert kinds.count("didSettleMutation") == 2
    row, pending = (await source.rows_with_pending(0, 0, 1))[0]
    assert row == {**DUNE, "title": "Dune Messiah"} and pending == []


def test_values_are_read_by_their_declared_type() -> None:
    add = BOOKS_CONFIG["actions"]["add"]
    assert parse_action_values("add", add, ["title=Beloved", "year=1987"]) == {"title": "Beloved", "year": 1987}
    with pytest.raises(ActionValueError, match="year must be an integer, got 'soon'"):
        parse_action_values("add", add, ["title=Beloved", "year=soon"])
    with pytest.raises(ActionValueError, match="add declares no value 'author'; it takes: title"):
        parse_action_values("add", add, ["title=Beloved", "author=Morrison"])
    with pytest.raises(ActionValueError, match="add needs title"):
        parse_action_values("add", add, ["year=1987"])
