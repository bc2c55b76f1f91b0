"""Actions on rows (Protocol.md, "Actions") against a real Django REST framework
`ModelViewSet` (drfapi.py's `/library/`, a table of books in SQLite), through the built
daemon ($DATASOURCED) and the Python client's `act`: each action committed (the server's
version of the row replaces the optimistic one, and the table really changed), refused by
DRF's validation (rolled back with DRF's words, the table unchanged), and in conflict (an
`If-Match` header templated from the row's `version`, answered `412` when someone changed
the row meanwhile: kind `conflict`, rolled back). Each request carries an `Idempotency-Key`,
the same on every attempt of one call, another for the next call."""

from __future__ import annotations

import json
import urllib.request
import uuid
from typing import Any

import pytest

from datasourced_client import Client, DataSource, Event
from drfapi import Book, DRFServer

ACTIONS: dict[str, Any] = {
    "add": {"method": "POST", "path": "/library/",
            "body": {"title": "{$values.title}", "genre": "{$values.genre}", "year": "{$values.year}"},
            "values": {"title": {"type": "string", "required": True}, "genre": {"type": "string"},
                       "year": {"type": "integer"}},
            "optimistic": "insert"},
    "rename": {"method": "PATCH", "path": "/library/{id}/", "body": {"title": "{$values.title}"},
               "headers": {"If-Match": "{version}"},
               "values": {"title": {"type": "string", "required": True}}, "optimistic": "update"},
    "delete": {"method": "DELETE", "path": "/library/{id}/", "headers": {"If-Match": "{version}"},
               "optimistic": "remove", "result": "none"},
}


def library(client: Client, drf: DRFServer) -> DataSource:
    major, _, minor = client.protocol_version.partition(".")
    if (int(major), int(minor)) < (1, 9):
        pytest.skip("the daemon does not speak protocol 1.9 (actions)")
    source = client.create_source("library", kind="paginated", remoteConfiguration={"baseURL": drf.base_url},
                                  apiPath="/library/", keyPath="results", identityKey="id",
                                  pagination={"strategy": "nextURL", "totalPath": "count"}, actions=ACTIONS)
    source.fetch_all_pages()
    return source


def rows(source: DataSource) -> dict[int, dict[str, Any]]:
    return {row["id"]: row for row in source.objects() if isinstance(row, dict)}


def served(drf: DRFServer, book_id: int) -> Any:
    """The book as the API answers it now (a GET of its own)."""
    with urllib.request.urlopen(f"{drf.base_url}/library/{book_id}/", timeout=10) as response:
        return json.loads(response.read())


def keys_are_uuids(drf: DRFServer) -> None:
    keys = [m["idempotencyKey"] for m in drf.mutations]
    assert all(key is not None and uuid.UUID(key) for key in keys), drf.mutations
    assert len(set(keys)) == len(keys)  # one call, one key


def test_a_partial_update_is_committed_and_the_servers_version_replaces_the_row(client: Client,
                                                                                drf: DRFServer) -> None:
    source = library(client, drf)
    events: list[Event] = []
    source.on_event(events.append)
    settlement = source.act("rename", 1, {"title": "Dune Messiah"})
    assert settlement["status"] == "committed", settlement
    assert [e.kind for e in events][0] == "didChange"
    # The server's version of the row: the new title and the version it raised.
    assert rows(source)[1] == {"id": 1, "title": "Dune Messiah", "genre": "science fiction", "year": 1965,
                               "version": 2}
    assert Book.objects.get(pk=1).title == "Dune Messiah"
    assert served(drf, 1)["version"] == 2
    assert drf.mutations == [{"method": "PATCH", "path": "/library/1/", "idempotencyKey": drf.mutations[0]["idempotencyKey"],
                              "ifMatch": "1", "status": 200}]
    # The next rename sends the version the server gave: If-Match 2, accepted.
    assert source.act("rename", 1, {"title": "Children of Dune"})["status"] == "committed"
    assert drf.mutations[1]["ifMatch"] == "2" and Book.objects.get(pk=1).version == 3
    keys_are_uuids(drf)


def test_a_create_is_committed_under_the_servers_id(client: Client, drf: DRFServer) -> None:
    source = library(client, drf)
    inserted: list[Any] = []
    source.on_event(lambda e: inserted.append(e.changes and e.changes.get("inserted")))
    settlement = source.act("add", values={"title": "Kindred", "genre": "science fiction", "year": 1979})
    assert settlement["status"] == "committed", settlement
    book = Book.objects.get(title="Kindred")
    assert (book.id, book.genre, book.year, book.version) == (6, "science fiction", 1979, 1)
    assert rows(source)[6] == {"id": 6, "title": "Kindred", "genre": "science fiction", "year": 1979, "version": 1}
    assert not any(isinstance(i, str) and i.startswith("pending:") for i in rows(source))
    assert len(rows(source)) == 6
    assert [(m["method"], m["path"], m["status"]) for m in drf.mutations] == [("POST", "/library/", 201)]
    keys_are_uuids(drf)


def test_a_delete_is_committed_and_the_row_is_gone_from_the_table(client: Client, drf: DRFServer) -> None:
    source = library(client, drf)
    assert source.act("delete", 3)["status"] == "committed"
    assert 3 not in rows(source)
    assert not Book.objects.filter(pk=3).exists()
    assert [(m["method"], m["path"], m["ifMatch"], m["status"]) for m in drf.mutations] == \
        [("DELETE", "/library/3/", "1", 204)]
    keys_are_uuids(drf)


def test_a_validation_error_rolls_back_with_drfs_words(client: Client, drf: DRFServer) -> None:
    source = library(client, drf)
    titles: list[Any] = []
    source.on_event(lambda e: titles.append((e.kind, [r.get("title") for r in (e.values or {}).get("updated", [])])))
    settlement = source.act("rename", 2, {"title": ""})
    assert settlement["status"] == "rolledBack"
    error = settlement["error"]
    assert (error["kind"], error["status"]) == ("http", 400)
    assert error["serverMessage"] == "title: This field may not be blank."
    assert rows(source)[2]["title"] == "Gaudy Night"
    assert Book.objects.get(pk=2).title == "Gaudy Night" and Book.objects.get(pk=2).version == 1
    assert [(m["method"], m["status"]) for m in drf.mutations] == [("PATCH", 400)]
    kinds = [kind for kind, _ in titles]
    assert kinds == ["didChange", "didChange", "didSettleMutation"]


def test_a_create_refused_by_validation_takes_its_row_away(client: Client, drf: DRFServer) -> None:
    source = library(client, drf)
    settlement = source.act("add", values={"title": "Untitled", "year": 1979, "genre": "x" * 101})
    assert settlement["status"] == "rolledBack"
    assert settlement["error"]["serverMessage"] == "genre: Ensure this field has no more than 100 characters."
    assert sorted(rows(source)) == [1, 2, 3, 4, 5]
    assert Book.objects.count() == 5


def test_a_stale_if_match_is_a_conflict_and_rolls_back(client: Client, drf: DRFServer) -> None:
    source = library(client, drf)
    # Someone else changes the book after the list was read: the row still says version 1.
    Book.objects.filter(pk=4).update(title="Solaris (2nd ed.)", version=2)
    settlement = source.act("rename", 4, {"title": "Solaris (mine)"})
    assert settlement["status"] == "rolledBack"
    error = settlement["error"]
    assert (error["kind"], error["status"]) == ("conflict", 412)
    assert "is not the book's version 2" in error["serverMessage"]
    assert rows(source)[4]["title"] == "Solaris"  # the daemon's last word from the server
    assert Book.objects.get(pk=4).title == "Solaris (2nd ed.)"
    assert drf.mutations[0]["ifMatch"] == "1" and drf.mutations[0]["status"] == 412
    # A delete with the stale version is refused alike, and the book stays.
    assert source.act("delete", 4)["error"]["kind"] == "conflict"
    assert 4 in rows(source) and Book.objects.filter(pk=4).exists()
    # Once reloaded, the row carries version 2 and the rename goes through.
    source.fetch_data(wait=True)
    assert source.act("rename", 4, {"title": "Solaris (mine)"})["status"] == "committed"
    assert (Book.objects.get(pk=4).title, Book.objects.get(pk=4).version) == ("Solaris (mine)", 3)
    keys_are_uuids(drf)


def test_a_503_queues_the_update_and_its_retry_carries_the_same_idempotency_key(client: Client,
                                                                                drf: DRFServer) -> None:
    source = library(client, drf)
    drf.unavailable_for(1)
    settles: list[Any] = []
    source.on_event(lambda e: settles.append(e.params.get("status")) if e.kind == "didSettleMutation" else None)
    settlement = source.act("rename", 5, {"title": "Beloved (Vintage)"}, timeout=20)
    assert settlement["status"] == "committed", settlement
    assert settles == ["queued", "committed"]
    first, second = drf.mutations
    assert (first["status"], second["status"]) == (503, 200)
    assert first["idempotencyKey"] == second["idempotencyKey"] and uuid.UUID(first["idempotencyKey"])
    assert (Book.objects.get(pk=5).title, rows(source)[5]["version"]) == ("Beloved (Vintage)", 2)
