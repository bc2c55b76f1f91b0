"""A real GraphQL API (Strawberry), served on loopback for the paging tests: `POST /graphql`
with `{"query", "variables"?, "operationName"?}` answers `{"data", "errors"?}` as
application/json, HTTP 200 even when there are errors.

`books(first, after, last, before, search)` is a Relay connection (Strawberry's
`ListConnection`) over 1,000 books `{id: Int!, title: String!, genre: String}`, ids 0..999,
titles "Book N", genres cycling through GENRES. `search` keeps the books whose title holds it,
ignoring case. The connection has `edges { cursor node }`, `nodes`, `totalCount` (the books
that match, on every page) and `pageInfo { hasNextPage hasPreviousPage startCursor endCursor }`.
Cursors are Strawberry's: base64 of "arrayconnection:N", N the index in the matching books.
`first` and `last` are at most 100; with neither, a page is 100 books. `nodes` is filled only
when the query also asks for `edges` or `pageInfo` (ListConnection skips the slice otherwise).

A mode makes the server misbehave: `GraphQLServer(mode=...)` for every request, or
`server.fail_next = ...` for the next request only (it wins over `mode`):
- "errors": the resolver of `books` raises, so the answer is `{"data": null, "errors": [...]}`,
  the error with `path: ["books"]` and `extensions: {"code": "INTERNAL_SERVER_ERROR"}`;
- "partial": the page's data, with `genre: null` on its first book, and an error with that
  field's path and `extensions: {"code": "GENRE_UNAVAILABLE"}`;
- "html": HTTP 200 with an HTML body (text/html), as a proxy's error page;
- "rate-limit": HTTP 200 with `{"errors": [{"type": "RATE_LIMITED", ...}]}` and GitHub's
  X-RateLimit-* headers (Remaining 0, Reset `server.rate_limit_reset` in epoch seconds);
- "repeat-cursor": `after` and `before` are ignored, so every answer is the first page: the
  same endCursor, and hasNextPage true, forever.

`requests` records each request as `Request(method, path, body)`, body parsed; `variables()`
lists the variables each request sent."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

import strawberry
from graphql import GraphQLError
from strawberry import relay

from loopback import Answer, LoopbackServer, Request

GENRES = ["fantasy", "history", "mystery", "poetry", "science"]
MODES = {"errors", "partial", "html", "rate-limit", "repeat-cursor"}


@strawberry.type
class Book:
    id: int
    title: str
    genre_name: strawberry.Private[str]
    broken: strawberry.Private[bool] = False

    @strawberry.field
    def genre(self) -> str | None:
        if self.broken:
            raise GraphQLError(f"The genre of book {self.id} is unavailable.",
                               extensions={"code": "GENRE_UNAVAILABLE"})
        return self.genre_name


class Books(Sequence[Book]):
    """The books whose title holds `search`, made when read."""

    def __init__(self, search: str | None) -> None:
        needle = (search or "").lower()
        self.ids = [n for n in range(1000) if needle in f"book {n}"] if needle else range(1000)

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = self.ids[index]
        return Book(id=n, title=f"Book {n}", genre_name=GENRES[n % len(GENRES)])


@strawberry.type(name="BookConnection")
class BookConnection(relay.ListConnection[Book]):
    total_count: int = strawberry.field(default=0, description="The books that match, on every page")

    @strawberry.field(description="The page's books, without their edges")
    def nodes(self) -> list[Book]:
        return [edge.node for edge in self.edges]

    @classmethod
    def resolve_connection(cls, nodes, *, info, **kwargs):  # type: ignore[no-untyped-def, override]
        mode = info.context["mode"]
        if mode == "repeat-cursor":
            kwargs.update(after=None, before=None)
        connection = super().resolve_connection(nodes, info=info, **kwargs)
        connection.total_count = len(nodes)
        if mode == "partial" and connection.edges:
            connection.edges[0].node.broken = True
        return connection


@strawberry.type
class Query:
    @relay.connection(BookConnection)
    def books(self, info: strawberry.Info, search: str | None = None) -> Iterable[Book]:
        if info.context["mode"] == "errors":
            raise GraphQLError("The book store is unavailable.", extensions={"code": "INTERNAL_SERVER_ERROR"})
        return Books(search)


class QuietSchema(strawberry.Schema):
    def process_errors(self, errors, execution_context=None) -> None:  # type: ignore[no-untyped-def]
        pass  # the errors go to the client; the test's output stays clean


schema = QuietSchema(query=Query)

HTML = b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>"


class GraphQLServer(LoopbackServer):
    """The API on an ephemeral loopback port: `base_url`, `requests`, `mode`, `fail_next`."""

    def __init__(self, mode: str | None = None) -> None:
        super().__init__()
        assert mode is None or mode in MODES, mode
        self.mode = mode
        self.fail_next: str | None = None
        self.rate_limit_reset = int(time.time()) + 3600

    def variables(self) -> list[dict[str, Any]]:
        """The variables each request sent ({} for none)."""
        return [(r.body.get("variables") if isinstance(r.body, dict) else None) or {} for r in self.requests]

    def answer(self, request: Request) -> Answer:
        if request.path.split("?")[0] != "/graphql":
            return Answer(404, {"errors": [{"message": f"No route for {request.path}"}]})
        if request.method != "POST":
            return Answer(405, {"errors": [{"message": "POST a JSON body to /graphql"}]}, {"Allow": "POST"})
        mode, self.fail_next = self.fail_next or self.mode, None
        assert mode is None or mode in MODES, mode
        if mode == "html":
            return Answer(200, HTML, {"Content-Type": "text/html; charset=utf-8"})
        if mode == "rate-limit":
            return Answer(200, {"errors": [{"type": "RATE_LIMITED", "message": "API rate limit exceeded"}]},
                          {"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0",
                           "X-RateLimit-Used": "5000", "X-RateLimit-Reset": str(self.rate_limit_reset)})
        body = request.body
        if not isinstance(body, dict) or not isinstance(body.get("query"), str):
            return Answer(400, {"errors": [{"message": "The body must be a JSON object with a `query` string."}]})
        result = schema.execute_sync(body["query"], variable_values=body.get("variables"),
                                     operation_name=body.get("operationName"), context_value={"mode": mode})
        answer: dict[str, Any] = {"data": result.data}
        if result.errors:
            answer["errors"] = [error.formatted for error in result.errors]
        return Answer(200, answer)
