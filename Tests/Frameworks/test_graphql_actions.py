"""Actions on rows of a GraphQL source (Protocol.md, "Actions": an action's `graphql`) against
a real Strawberry API (graphqlapi.py's `renameBook`, `addBook` and `deleteBook`), through the
built daemon ($DATASOURCED) and the Python client's `act`: each committed (the server's
version of the row in place of the optimistic one, and the server's books really changed),
refused in the answer's `errors` (rolled back with kind `graphql` and Strawberry's words,
nothing changed on the server), and a `RATE_LIMITED` answer queued and sent again. Each
request carries an `Idempotency-Key`, the same on every attempt of one call."""

from __future__ import annotations

import time
import uuid
from typing import Any

from datasourced_client import Client, DataSource, Event
from graphqlapi import GraphQLServer

QUERY = """
query Books($first: Int, $after: String) {
  books(first: $first, after: $after) {
    pageInfo { hasNextPage endCursor }
    edges { node { id title genre } }
  }
}
"""

ACTIONS: dict[str, Any] = {
    "rename": {"graphql": {"query": "mutation Rename($id: Int!, $title: String!) "
                                    "{ renameBook(id: $id, title: $title) { id title genre } }",
                           "variables": {"id": "{id}", "title": "{$values.title}"}},
               "values": {"title": {"type": "string", "required": True}},
               "optimistic": "update", "result": "data.renameBook"},
    "add": {"graphql": {"query": "mutation Add($title: String!, $genre: String) "
                                 "{ addBook(title: $title, genre: $genre) { id title genre } }",
                        "variables": {"title": "{$values.title}", "genre": "{$values.genre}"}},
            "values": {"title": {"type": "string", "required": True}, "genre": {"type": "string"}},
            "optimistic": "insert", "result": "data.addBook"},
    "delete": {"graphql": {"query": "mutation Delete($id: Int!) { deleteBook(id: $id) }",
                           "variables": {"id": "{id}"}},
               "optimistic": "remove", "result": "none"},
}


def books(client: Client, server: GraphQLServer) -> DataSource:
    source = client.create_source("books", kind="paginated", remoteConfiguration={"baseURL": server.base_url},
                                  apiPath="/graphql", identityKey="id", pageSize=100,
                                  graphql={"query": QUERY, "connection": "books"}, actions=ACTIONS)
    source.fetch_data(wait=True)
    return source


def rows(source: DataSource) -> dict[int, dict[str, Any]]:
    return {row["id"]: row for row in source.objects() if isinstance(row, dict) and "id" in row}


def mutations(server: GraphQLServer) -> list[tuple[str, dict[str, Any], str | None]]:
    """Each mutation request: its operation, its variables and its Idempotency-Key."""
    return [(r.body["query"].split("(")[0], r.body.get("variables") or {}, r.headers.get("idempotency-key"))
            for r in server.requests if isinstance(r.body, dict) and r.body.get("query", "").startswith("mutation")]


def test_a_rename_is_committed_and_the_servers_book_replaces_the_row(client: Client, graphql: GraphQLServer) -> None:
    source = books(client, graphql)
    events: list[Event] = []
    source.on_event(events.append)
    settlement = source.act("rename", 7, {"title": "The Left Hand of Darkness"})
    assert settlement["status"] == "committed", settlement
    assert events[0].kind == "didChange"
    assert rows(source)[7] == {"id": 7, "title": "The Left Hand of Darkness", "genre": "mystery"}
    assert graphql.library.titles == {7: "The Left Hand of Darkness"}
    [(operation, variables, key)] = mutations(graphql)
    assert (operation, variables) == ("mutation Rename", {"id": 7, "title": "The Left Hand of Darkness"})
    assert key is not None and uuid.UUID(key)
    # What the server holds now is what a fresh page shows.
    source.fetch_data(wait=True)
    assert rows(source)[7]["title"] == "The Left Hand of Darkness"


def test_an_add_is_committed_under_the_servers_id(client: Client, graphql: GraphQLServer) -> None:
    source = books(client, graphql)
    settlement = source.act("add", values={"title": "Kindred", "genre": "history"})
    assert settlement["status"] == "committed", settlement
    assert rows(source)[1000] == {"id": 1000, "title": "Kindred", "genre": "history"}
    assert not any(isinstance(i, str) for i in rows(source)), "no temporary identity is left"
    assert graphql.library.added == [1000]


def test_a_delete_is_committed_and_the_book_is_gone(client: Client, graphql: GraphQLServer) -> None:
    source = books(client, graphql)
    assert source.act("delete", 3)["status"] == "committed"
    assert 3 not in rows(source) and 4 in rows(source)
    assert graphql.library.deleted == {3}
    source.fetch_data(wait=True)
    assert 3 not in rows(source)


def test_errors_in_the_answer_roll_back_with_strawberrys_words(client: Client, graphql: GraphQLServer) -> None:
    source = books(client, graphql)
    kinds: list[str] = []
    source.on_event(lambda e: kinds.append(e.kind))
    settlement = source.act("rename", 2, {"title": "   "})
    assert settlement["status"] == "rolledBack", settlement
    error = settlement["error"]
    assert error["kind"] == "graphql", error
    assert error["serverMessage"] == "The title may not be blank."
    assert error["graphqlErrors"][0]["code"] == "BAD_USER_INPUT"
    assert error["graphqlErrors"][0]["path"] == ["renameBook"]
    assert rows(source)[2]["title"] == "Book 2"
    assert graphql.library.titles == {}
    assert kinds.count("didChange") == 2, f"the optimistic change, then its undo: {kinds}"
    # A book the server does not have: refused the same way, the row back where it was.
    graphql.library.deleted.add(5)
    settlement = source.act("delete", 5)
    assert settlement["status"] == "rolledBack"
    assert settlement["error"]["serverMessage"] == "No book has the id 5."
    assert 5 in rows(source)


def test_rate_limited_is_queued_then_sent_again_with_the_same_key(client: Client, graphql: GraphQLServer) -> None:
    source = books(client, graphql)
    graphql.rate_limit_reset = int(time.time()) + 1
    graphql.fail_next = "rate-limit"
    with source.events(timeout=30) as stream:
        first = source.act("rename", 9, {"title": "Solaris"}, stop_at_queued=True)
        assert first["status"] == "queued", first
        assert rows(source)[9]["title"] == "Solaris", "a queued mutation stays shown"
        settled = None
        for event in stream:
            if event.kind == "didSettleMutation" and event.params["status"] != "queued":
                settled = event.params
                break
    assert settled is not None and (settled["mutation"], settled["status"]) == (first["mutation"], "committed"), settled
    assert graphql.library.titles == {9: "Solaris"}
    sent = mutations(graphql)
    assert len(sent) == 2 and sent[0][2] == sent[1][2], "the retry carries the first attempt's Idempotency-Key"
