"""Two APIs that page by a JSON request body, served on loopback for the paging tests, each
recording every request as `Request(method, path, body)` (loopback.py).

NotionServer, shaped as Notion's "query a database": `POST /v1/databases/{database_id}/query`
with `{"start_cursor"?, "page_size"? (default 100, at most 100), "filter"?}` answers
`{"object": "list", "results": [...], "next_cursor": str | null, "has_more": bool,
"type": "page_or_database", "page_or_database": {}}` over ROWS rows
`{"object": "page", "id": "<uuid>", "properties": {"Name": {"title": [{"plain_text": "Page N"}]}}}`.
A cursor is the id of the first row of the next page. A `start_cursor` the server did not
issue, or a bad `page_size`, answers 400 `{"object": "error", "status": 400,
"code": "validation_error", "message": "..."}`; another database id answers 404 with
code "object_not_found". The one filter understood is Notion's
`{"property": "Name", "title": {"contains": "..."}}` (ignoring case).

ElasticsearchServer, shaped as Elasticsearch's search: `POST /books/_search` with
`{"size"? (default 10), "from"? (default 0), "sort"?, "search_after"?, "query"?}` answers
`{"took": 1, "timed_out": false, "hits": {"total": {"value": N, "relation": "eq"},
"max_score": null, "hits": [{"_index": "books", "_id": "N", "_score": null,
"_source": {"id": N, "title": "Book N", "year": Y}, "sort": [Y, N]}]}}` over DOCS documents
(year = 1950 + N % 50, so years repeat and `id` breaks the ties). `sort` is a list of
`{field: "asc" | "desc"}` or `{field: {"order": ...}}`; without it documents come in id order,
with `_score` 1.0 and no `sort` values. `search_after` takes the last hit's `sort` values;
a page past the end has empty `hits.hits`. Queries: `match_all`, `match` on title (any word,
ignoring case), `range` on year or id (gte, gt, lte, lt). Bad requests answer 400 with
Elasticsearch's `{"error": {"root_cause": [...], "type": ..., "reason": ...}, "status": 400}`."""

from __future__ import annotations

import operator
import uuid
from typing import Any

from loopback import Answer, LoopbackServer, Request


def notion_id(n: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"notion-page-{n}"))


class NotionServer(LoopbackServer):
    """Notion's database query on loopback: `base_url`, `query_path`, `requests`, `rows`."""

    database_id = "d9824bdc-8445-4327-be8b-5b47500af6ce"

    def __init__(self, rows: int = 250) -> None:
        super().__init__()
        self.rows = [{"object": "page", "id": notion_id(n),
                      "properties": {"Name": {"title": [{"plain_text": f"Page {n}"}]}}} for n in range(rows)]
        self.query_path = f"/v1/databases/{self.database_id}/query"
        self.issued: set[str] = set()

    @staticmethod
    def error(status: int, code: str, message: str) -> Answer:
        return Answer(status, {"object": "error", "status": status, "code": code, "message": message})

    def answer(self, request: Request) -> Answer:
        if request.path != self.query_path or request.method != "POST":
            return self.error(404, "object_not_found", f"Could not find database for {request.method} {request.path}.")
        body = request.body if isinstance(request.body, dict) else {}
        size = body.get("page_size", 100)
        if not isinstance(size, int) or isinstance(size, bool) or not 1 <= size <= 100:
            return self.error(400, "validation_error",
                              "body failed validation: body.page_size should be an integer from 1 to 100.")
        rows = self.rows
        needle = ((body.get("filter") or {}).get("title") or {}).get("contains")
        if isinstance(needle, str):
            rows = [r for r in rows if needle.lower() in r["properties"]["Name"]["title"][0]["plain_text"].lower()]
        start = 0
        cursor = body.get("start_cursor")
        if cursor is not None:
            start = next((i for i, r in enumerate(rows) if r["id"] == cursor), -1)
            if cursor not in self.issued or start < 0:
                return self.error(400, "validation_error", f"The start_cursor provided is invalid: {cursor}")
        page = rows[start:start + size]
        next_cursor = rows[start + size]["id"] if start + size < len(rows) else None
        if next_cursor:
            self.issued.add(next_cursor)
        return Answer(200, {"object": "list", "results": page, "next_cursor": next_cursor,
                            "has_more": next_cursor is not None, "type": "page_or_database", "page_or_database": {}})


class BadRequest(Exception):
    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind, self.reason = kind, reason


def matches(doc: dict[str, Any], query: dict[str, Any]) -> bool:
    if len(query) != 1:
        raise BadRequest("parsing_exception", "a query holds exactly one clause")
    (kind, clause), = query.items()
    if kind == "match_all":
        return True
    if kind == "match" and set(clause) == {"title"}:
        text = clause["title"]["query"] if isinstance(clause["title"], dict) else clause["title"]
        return bool(set(str(text).lower().split()) & set(doc["title"].lower().split()))
    if kind == "range" and len(clause) == 1 and set(clause) <= {"year", "id"}:
        (field, bounds), = clause.items()
        tests = {"gte": operator.ge, "gt": operator.gt, "lte": operator.le, "lt": operator.lt}
        return all(tests[op](doc[field], bound) for op, bound in bounds.items() if op in tests)
    raise BadRequest("parsing_exception", f"unknown query [{kind}]")


class ElasticsearchServer(LoopbackServer):
    """Elasticsearch's `_search` on the index `books`: `base_url`, `requests`, `docs`."""

    def __init__(self, docs: int = 1000) -> None:
        super().__init__()
        self.docs = [{"id": n, "title": f"Book {n}", "year": 1950 + n % 50} for n in range(docs)]

    def answer(self, request: Request) -> Answer:
        if request.path.split("?")[0] != "/books/_search" or request.method != "POST":
            return self.failure(404, "index_not_found_exception", f"no such index or route [{request.path}]")
        try:
            return Answer(200, self.search(request.body if isinstance(request.body, dict) else {}))
        except BadRequest as bad:
            return self.failure(400, bad.kind, bad.reason)

    @staticmethod
    def failure(status: int, kind: str, reason: str) -> Answer:
        cause = {"type": kind, "reason": reason}
        return Answer(status, {"error": {"root_cause": [cause], **cause}, "status": status})

    def search(self, body: dict[str, Any]) -> dict[str, Any]:
        size, start = body.get("size", 10), body.get("from", 0)
        if not isinstance(size, int) or not isinstance(start, int) or size < 0 or start < 0:
            raise BadRequest("illegal_argument_exception", "[from] and [size] must be non-negative integers")
        if start + size > 10000:
            raise BadRequest("illegal_argument_exception",
                             "Result window is too large, from + size must be less than or equal to: [10000]")
        docs = [doc for doc in self.docs if matches(doc, body.get("query") or {"match_all": {}})]
        total = len(docs)
        keys = []
        for entry in body.get("sort") or []:
            (field, order), = entry.items()
            order = order.get("order", "asc") if isinstance(order, dict) else order
            if field not in ("id", "year") or order not in ("asc", "desc"):
                raise BadRequest("illegal_argument_exception", f"cannot sort on [{field}] {order}")
            keys.append((field, order == "desc"))
        for field, descending in reversed(keys):
            docs.sort(key=lambda doc: doc[field], reverse=descending)
        after = body.get("search_after")
        if after is not None:
            if not keys or len(after) != len(keys):
                raise BadRequest("illegal_argument_exception", "search_after has "
                                 f"{len(after)} value(s) but sort has {len(keys)}")
            if start:
                raise BadRequest("illegal_argument_exception",
                                 "`from` parameter must be set to 0 when `search_after` is used")
            docs = [doc for doc in docs if self.beyond(doc, keys, after)]
        hits = [{"_index": "books", "_id": str(doc["id"]), "_score": None if keys else 1.0, "_source": doc,
                 **({"sort": [doc[field] for field, _ in keys]} if keys else {})} for doc in docs[start:start + size]]
        return {"took": 1, "timed_out": False,
                "hits": {"total": {"value": total, "relation": "eq"}, "max_score": None if keys else 1.0, "hits": hits}}

    @staticmethod
    def beyond(doc: dict[str, Any], keys: list[tuple[str, bool]], after: list[Any]) -> bool:
        """Whether `doc` sorts after the values `after` (as search_after pages)."""
        for (field, descending), value in zip(keys, after):
            if doc[field] != value:
                return (doc[field] < value) if descending else (doc[field] > value)
        return False
