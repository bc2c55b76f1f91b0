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

Three mutations change the books (`library` holds what they changed): `renameBook(id, title)`
and `addBook(title, genre)` answer the book (an added book's id is 1000, 1001, ...), and
`deleteBook(id)` answers the id. A blank title is refused with an error of code
`BAD_USER_INPUT` ("The title may not be blank."), an id no book has with `NOT_FOUND`; the
answer is then `{"data": null, "errors": [...]}`, HTTP 200, and nothing changed.

`requests` records each request as `Request(method, path, body, headers)`, body parsed;
`variables()` lists the variables each request sent."""

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


class Library:
    """What the mutations changed: titles, books deleted and books added (ids from 1000)."""

    def __init__(self) -> None:
        self.titles: dict[int, str] = {}
        self.genres: dict[int, str] = {}
        self.deleted: set[int] = set()
        self.added: list[int] = []

    def ids(self) -> Sequence[int]:
        if not self.deleted and not self.added:
            return range(1000)
        return [n for n in range(1000) if n not in self.deleted] + [n for n in self.added if n not in self.deleted]

    def holds(self, n: int) -> bool:
        return (0 <= n < 1000 or n in self.added) and n not in self.deleted

    def book(self, n: int) -> Book:
        return Book(id=n, title=self.titles.get(n, f"Book {n}"), genre_name=self.genres.get(n, GENRES[n % len(GENRES)]))


class Books(Sequence[Book]):
    """The books whose title holds `search`, made when read."""

    def __init__(self, search: str | None, library: Library) -> None:
        needle = (search or "").lower()
        self.library = library
        ids = library.ids()
        self.ids = [n for n in ids if needle in library.book(n).title.lower()] if needle else ids

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return self.library.book(self.ids[index])


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
        return Books(search, info.context["library"])


def the_book(library: Library, book_id: int) -> None:
    if not library.holds(book_id):
        raise GraphQLError(f"No book has the id {book_id}.", extensions={"code": "NOT_FOUND"})


def a_title(title: str) -> str:
    if not title.strip():
        raise GraphQLError("The title may not be blank.", extensions={"code": "BAD_USER_INPUT"})
    return title


@strawberry.type
class Mutation:
    @strawberry.mutation
    def rename_book(self, info: strawberry.Info, id: int, title: str) -> Book:
        library: Library = info.context["library"]
        the_book(library, id)
        library.titles[id] = a_title(title)
        return library.book(id)

    @strawberry.mutation
    def add_book(self, info: strawberry.Info, title: str, genre: str | None = None) -> Book:
        library: Library = info.context["library"]
        book_id = 1000 + len(library.added)
        library.titles[book_id] = a_title(title)
        library.genres[book_id] = genre or GENRES[0]
        library.added.append(book_id)
        return library.book(book_id)

    @strawberry.mutation
    def delete_book(self, info: strawberry.Info, id: int) -> int:
        library: Library = info.context["library"]
        the_book(library, id)
        library.deleted.add(id)
        return id


class QuietSchema(strawberry.Schema):
    def process_errors(self, errors, execution_context=None) -> None:  # type: ignore[no-untyped-def]
        pass  # the errors go to the client; the test's output stays clean


schema = QuietSchema(query=Query, mutation=Mutation)

HTML = b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>"


class GraphQLServer(LoopbackServer):
    """The API on an ephemeral loopback port: `base_url`, `requests`, `mode`, `fail_next`."""

    def __init__(self, mode: str | None = None) -> None:
        super().__init__()
        assert mode is None or mode in MODES, mode
        self.mode = mode
        self.fail_next: str | None = None
        self.rate_limit_reset = int(time.time()) + 3600
        self.library = Library()

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
                                     operation_name=body.get("operationName"),
                                     context_value={"mode": mode, "library": self.library})
        answer: dict[str, Any] = {"data": result.data}
        if result.errors:
            answer["errors"] = [error.formatted for error in result.errors]
        return Answer(200, answer)
