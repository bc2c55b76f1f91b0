"""The loopback servers themselves (graphqlapi.py, postapis.py), paged with urllib: what the
daemon's tests rely on them to answer, and to record."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from graphqlapi import GraphQLServer
from postapis import ElasticsearchServer, NotionServer

BOOKS = """query Books($first: Int, $after: String, $last: Int, $before: String, $search: String) {
  books(first: $first, after: $after, last: $last, before: $before, search: $search) {
    totalCount
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor node { id title genre } }
  }
}"""


def post(url: str, body: Any, content_type: str = "application/json") -> tuple[int, dict[str, str], Any]:
    """POSTs `body` as JSON; the status, the headers and the body (parsed when it is JSON)."""
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            status, headers, raw = response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        status, headers, raw = error.code, dict(error.headers), error.read()
    text = raw.decode()
    return status, headers, json.loads(text) if headers["Content-Type"].startswith("application/json") else text


def books(server: GraphQLServer, **variables: Any) -> dict[str, Any]:
    status, _, body = post(server.base_url + "/graphql", {"query": BOOKS, "variables": variables})
    assert status == 200 and "errors" not in body, body
    return body["data"]["books"]


# GraphQL


def test_forward_paging_reaches_every_book_once(graphql: GraphQLServer) -> None:
    ids: list[int] = []
    after = None
    while True:
        page = books(graphql, first=100, after=after)
        ids += [edge["node"]["id"] for edge in page["edges"]]
        assert page["totalCount"] == 1000
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
        assert after == page["edges"][-1]["cursor"]
    assert ids == list(range(1000)) and len(set(ids)) == 1000
    assert len(graphql.requests) == 10
    assert graphql.variables()[0] == {"first": 100, "after": None}
    assert all(v["after"] for v in graphql.variables()[1:])
    assert graphql.requests[0][:3] == ("POST", "/graphql", {"query": BOOKS, "variables": {"first": 100, "after": None}})


def test_backward_paging_from_the_end(graphql: GraphQLServer) -> None:
    page = books(graphql, last=100)
    assert [e["node"]["id"] for e in page["edges"]] == list(range(900, 1000))
    assert page["pageInfo"]["hasNextPage"] is False and page["pageInfo"]["hasPreviousPage"] is True
    ids = [e["node"]["id"] for e in page["edges"]]
    while page["pageInfo"]["hasPreviousPage"]:
        page = books(graphql, last=100, before=page["pageInfo"]["startCursor"])
        ids = [e["node"]["id"] for e in page["edges"]] + ids
    assert ids == list(range(1000))
    assert page["pageInfo"]["startCursor"] == page["edges"][0]["cursor"]
    assert len(graphql.requests) == 10


def test_cursors_nodes_and_total(graphql: GraphQLServer) -> None:
    query = "{ books(first: 2) { totalCount nodes { id title genre } pageInfo { endCursor } } }"
    status, _, body = post(graphql.base_url + "/graphql", {"query": query})
    assert status == 200
    assert body == {"data": {"books": {"totalCount": 1000, "pageInfo": {"endCursor": "YXJyYXljb25uZWN0aW9uOjE="},
                                       "nodes": [{"id": 0, "title": "Book 0", "genre": "fantasy"},
                                                 {"id": 1, "title": "Book 1", "genre": "history"}]}}}


def test_search_filters_and_counts(graphql: GraphQLServer) -> None:
    page = books(graphql, first=100, search="BOOK 99")
    assert [e["node"]["id"] for e in page["edges"]] == [99, 990, 991, 992, 993, 994, 995, 996, 997, 998, 999]
    assert page["totalCount"] == 11 and page["pageInfo"]["hasNextPage"] is False


def test_errors_with_null_data(graphql: GraphQLServer) -> None:
    graphql.fail_next = "errors"
    status, _, body = post(graphql.base_url + "/graphql", {"query": BOOKS, "variables": {"first": 10}})
    assert status == 200 and body["data"] is None
    [error] = body["errors"]
    assert error["message"] == "The book store is unavailable."
    assert error["path"] == ["books"] and error["extensions"] == {"code": "INTERNAL_SERVER_ERROR"}
    assert books(graphql, first=10)["totalCount"] == 1000  # fail_next is one request


def test_partial_data_with_an_error(graphql: GraphQLServer) -> None:
    graphql.fail_next = "partial"
    status, _, body = post(graphql.base_url + "/graphql", {"query": BOOKS, "variables": {"first": 3, "after": None}})
    assert status == 200
    edges = body["data"]["books"]["edges"]
    assert [e["node"] for e in edges] == [{"id": 0, "title": "Book 0", "genre": None},
                                          {"id": 1, "title": "Book 1", "genre": "history"},
                                          {"id": 2, "title": "Book 2", "genre": "mystery"}]
    [error] = body["errors"]
    assert error["path"] == ["books", "edges", 0, "node", "genre"]
    assert error["extensions"] == {"code": "GENRE_UNAVAILABLE"}


def test_html_answer() -> None:
    with GraphQLServer(mode="html") as server:
        status, headers, body = post(server.base_url + "/graphql", {"query": BOOKS})
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert body.startswith("<!DOCTYPE html>")


def test_rate_limit(graphql: GraphQLServer) -> None:
    graphql.fail_next = "rate-limit"
    graphql.rate_limit_reset = 1_900_000_000
    status, headers, body = post(graphql.base_url + "/graphql", {"query": BOOKS})
    assert status == 200
    assert body == {"errors": [{"type": "RATE_LIMITED", "message": "API rate limit exceeded"}]}
    assert headers["X-RateLimit-Remaining"] == "0" and headers["X-RateLimit-Reset"] == "1900000000"


def test_repeating_cursor() -> None:
    with GraphQLServer(mode="repeat-cursor") as server:
        first = books(server, first=100)
        again = books(server, first=100, after=first["pageInfo"]["endCursor"])
    assert again == first and first["pageInfo"]["hasNextPage"] is True
    assert [v.get("after") for v in server.variables()] == [None, first["pageInfo"]["endCursor"]]


def test_bad_requests(graphql: GraphQLServer) -> None:
    assert post(graphql.base_url + "/graphql", {"query": BOOKS}, content_type="text/plain")[0] == 415
    assert post(graphql.base_url + "/graphql", {"variables": {}})[0] == 400
    status, _, body = post(graphql.base_url + "/graphql", {"query": BOOKS, "variables": {"first": 101}})
    assert status == 200 and body["data"] is None
    assert body["errors"][0]["message"] == "Argument 'first' cannot be higher than 100."
    assert graphql.requests[0][:3] == ("POST", "/graphql", {"query": BOOKS})


# Notion


def test_notion_pages_through_every_row(notion: NotionServer) -> None:
    url = notion.base_url + notion.query_path
    rows: list[dict[str, Any]] = []
    body: dict[str, Any] = {"page_size": 100}
    while True:
        status, _, answer = post(url, body)
        assert status == 200 and answer["object"] == "list"
        rows += answer["results"]
        if not answer["has_more"]:
            assert answer["next_cursor"] is None
            break
        body = {"page_size": 100, "start_cursor": answer["next_cursor"]}
    assert len(rows) == 250 == len({row["id"] for row in rows})
    assert rows[7]["properties"] == {"Name": {"title": [{"plain_text": "Page 7"}]}}
    assert [r.body.get("start_cursor") for r in notion.requests] == [None, rows[100]["id"], rows[200]["id"]]
    assert all(r.method == "POST" and r.path == notion.query_path for r in notion.requests)


def test_notion_default_page_size_and_filter(notion: NotionServer) -> None:
    status, _, answer = post(notion.base_url + notion.query_path, {})
    assert status == 200 and len(answer["results"]) == 100 and answer["has_more"] is True
    status, _, answer = post(notion.base_url + notion.query_path,
                             {"filter": {"property": "Name", "title": {"contains": "page 24"}}})
    assert [r["properties"]["Name"]["title"][0]["plain_text"] for r in answer["results"]] == \
        ["Page 24"] + [f"Page {n}" for n in range(240, 250)]
    assert answer["has_more"] is False and answer["next_cursor"] is None


def test_notion_errors(notion: NotionServer) -> None:
    status, _, answer = post(notion.base_url + notion.query_path, {"start_cursor": notion.rows[100]["id"]})
    assert status == 400
    assert answer == {"object": "error", "status": 400, "code": "validation_error",
                      "message": f"The start_cursor provided is invalid: {notion.rows[100]['id']}"}
    status, _, answer = post(notion.base_url + notion.query_path, {"page_size": 101})
    assert status == 400 and answer["code"] == "validation_error"
    status, _, answer = post(notion.base_url + "/v1/databases/other/query", {})
    assert status == 404 and answer["code"] == "object_not_found"


# Elasticsearch

SORT = [{"year": "asc"}, {"id": "asc"}]


def test_elasticsearch_search_after(elasticsearch: ElasticsearchServer) -> None:
    url = elasticsearch.base_url + "/books/_search"
    docs: list[dict[str, Any]] = []
    body: dict[str, Any] = {"size": 300, "sort": SORT, "query": {"match_all": {}}}
    while True:
        status, _, answer = post(url, body)
        assert status == 200 and answer["hits"]["total"] == {"value": 1000, "relation": "eq"}
        hits = answer["hits"]["hits"]
        if not hits:
            break
        docs += [hit["_source"] for hit in hits]
        assert all(hit["sort"] == [hit["_source"]["year"], hit["_source"]["id"]] for hit in hits)
        assert all(hit["_id"] == str(hit["_source"]["id"]) for hit in hits)
        body = {**body, "search_after": hits[-1]["sort"]}
    assert len(docs) == 1000 == len({doc["id"] for doc in docs})
    assert docs == sorted(docs, key=lambda doc: (doc["year"], doc["id"]))
    assert docs[:3] == [{"id": 0, "title": "Book 0", "year": 1950}, {"id": 50, "title": "Book 50", "year": 1950},
                        {"id": 100, "title": "Book 100", "year": 1950}]
    assert [r.body.get("search_after") for r in elasticsearch.requests] == \
        [None, [1964, 964], [1979, 979], [1994, 994], [1999, 999]]


def test_elasticsearch_from_and_size(elasticsearch: ElasticsearchServer) -> None:
    url = elasticsearch.base_url + "/books/_search"
    ids = []
    for start in range(0, 1100, 250):
        status, _, answer = post(url, {"from": start, "size": 250, "sort": SORT})
        assert status == 200
        ids += [hit["_source"]["id"] for hit in answer["hits"]["hits"]]
    assert len(ids) == 1000 == len(set(ids))
    assert answer["hits"]["hits"] == [] and answer["hits"]["total"]["value"] == 1000


def test_elasticsearch_queries_and_errors(elasticsearch: ElasticsearchServer) -> None:
    url = elasticsearch.base_url + "/books/_search"
    status, _, answer = post(url, {"size": 5, "query": {"range": {"year": {"gte": 1999}}}})
    assert answer["hits"]["total"]["value"] == 20
    assert [hit["_id"] for hit in answer["hits"]["hits"]] == ["49", "99", "149", "199", "249"]
    assert "sort" not in answer["hits"]["hits"][0] and answer["hits"]["hits"][0]["_score"] == 1.0
    status, _, answer = post(url, {"query": {"match": {"title": "717"}}})
    assert [hit["_source"]["title"] for hit in answer["hits"]["hits"]] == ["Book 717"]
    status, _, answer = post(url, {"from": 10, "sort": SORT, "search_after": [1950, 0]})
    assert status == 400 and answer["status"] == 400
    assert answer["error"]["type"] == "illegal_argument_exception"
    assert answer["error"]["root_cause"] == [{"type": answer["error"]["type"], "reason": answer["error"]["reason"]}]
    assert post(url, {"query": {"fuzzy": {}}})[2]["error"]["type"] == "parsing_exception"
