"""Paging a real GraphQL API (graphqlapi.py: Strawberry, a Relay connection over 1,000
books) with `graphql` sources, asserting the variables of every request the daemon made."""

from __future__ import annotations

import pytest

from datasourced_client import Client, LoadFailed, RPCError
from graphqlapi import GraphQLServer

QUERY = """
query Books($first: Int, $after: String, $last: Int, $before: String, $search: String) {
  books(first: $first, after: $after, last: $last, before: $before, search: $search) {
    totalCount
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor node { id title genre } }
  }
}
"""


def cursor(index: int) -> str:
    import base64
    return base64.b64encode(f"arrayconnection:{index}".encode()).decode()


def books(client: Client, server: GraphQLServer, **config):  # type: ignore[no-untyped-def]
    graphql = {"query": QUERY, "connection": "books"} | config.pop("graphql", {})
    return client.create_source("books", kind="paginated", remoteConfiguration={"baseURL": server.base_url},
                                apiPath="/graphql", identityKey="id", pageSize=100, graphql=graphql, **config)


def ids(source) -> list[int]:  # type: ignore[no-untyped-def]
    return [row["id"] for row in source.objects()]


def test_forward_paging_sends_first_and_after_until_has_next_page_is_false(client: Client, graphql: GraphQLServer) -> None:
    source = books(client, graphql)
    assert source.fetch_all_pages() == 10
    assert ids(source) == list(range(1000))
    assert [request.method for request in graphql.requests] == ["POST"] * 10
    assert graphql.variables() == [{"first": 100}] + [{"first": 100, "after": cursor(n * 100 - 1)} for n in range(1, 10)]
    assert all(request.body["query"] == QUERY for request in graphql.requests)
    assert source.has_more_pages() is False


def test_backward_paging_sends_last_and_before_until_has_previous_page_is_false(client: Client, graphql: GraphQLServer) -> None:
    source = books(client, graphql, initialCursor=cursor(699))
    source.fetch_data(wait=True)
    assert ids(source) == list(range(700, 800))
    while source.fetch_previous_page(wait=True).get("started"):
        pass
    assert ids(source) == list(range(0, 800))
    assert graphql.variables() == [{"first": 100, "after": cursor(699)}] + [
        {"last": 100, "before": cursor(n)} for n in range(700, 0, -100)]
    assert source.describe().get("previous") is None


def test_the_total_count_gives_a_counted_list_its_size_at_once(client: Client, graphql: GraphQLServer) -> None:
    source = books(client, graphql, placeholders="counted")
    source.fetch_data(wait=True)
    description = source.describe()
    assert description["numberOfTotalResults"] == 1000
    assert source.number_of_objects() == 1000
    assert source.object_at([0, 999]) == {"$placeholder": "unloaded", "index": 999}
    assert len(graphql.requests) == 1
    # A cursor cannot say where row 900 is: a jump is refused, naming why.
    assert description["capabilities"]["jump"] is False
    assert "cursor" in description["capabilities"]["reasons"]["jump"]
    assert description["capabilities"]["pageBackwards"] is True


def test_a_response_of_errors_without_data_fails_the_load_with_kind_graphql(client: Client, graphql: GraphQLServer) -> None:
    source = books(client, graphql)
    graphql.fail_next = "errors"
    with pytest.raises(LoadFailed) as failure:
        source.fetch_data(wait=True)
    error = failure.value.error
    assert error["kind"] == "graphql"
    assert error["serverMessage"] == "The book store is unavailable."
    assert error["graphqlErrors"] == [{"message": "The book store is unavailable.", "path": ["books"], "code": "INTERNAL_SERVER_ERROR"}]
    # The next load is a load like any other.
    source.fetch_data(wait=True)
    assert len(ids(source)) == 100


def test_a_response_with_data_and_errors_shows_the_rows_and_warns(client: Client, graphql: GraphQLServer) -> None:
    source = books(client, graphql)
    graphql.fail_next = "partial"
    source.fetch_data(wait=True)
    assert ids(source) == list(range(100))
    assert source.objects()[0]["genre"] is None
    warning = source.describe()["lastWarning"]
    assert warning["kind"] == "graphql"
    assert warning["graphqlErrors"] == [
        {"message": "The genre of book 0 is unavailable.", "path": ["books", "edges", 0, "node", "genre"],
         "code": "GENRE_UNAVAILABLE"}]
    source.fetch_data(wait=True)
    assert "lastWarning" not in source.describe(), "a load from the first page without errors clears it"


def test_a_rate_limited_error_says_when_to_retry(client: Client, graphql: GraphQLServer) -> None:
    source = books(client, graphql)
    graphql.fail_next = "rate-limit"
    with pytest.raises(LoadFailed) as failure:
        source.fetch_data(wait=True)
    error = failure.value.error
    assert (error["kind"], error["rateLimited"]) == ("graphql", True)
    assert 3500 < error["retryAfterSeconds"] <= 3600


def test_an_html_answer_is_a_decode_error(client: Client, graphql: GraphQLServer) -> None:
    source = books(client, graphql)
    graphql.fail_next = "html"
    with pytest.raises(LoadFailed) as failure:
        source.fetch_data(wait=True)
    assert failure.value.kind == "decode"
    assert "text/html" in failure.value.error["message"]


def test_a_repeating_cursor_is_stopped_by_the_loop_guard(client: Client, graphql: GraphQLServer) -> None:
    graphql.mode = "repeat-cursor"
    source = books(client, graphql, pagination={"duplicates": "keep"})
    source.fetch_data(wait=True)
    with pytest.raises(LoadFailed) as failure:
        source.fetch_next_page(wait=True)
    assert failure.value.kind == "loop"
    assert len(graphql.requests) == 2


def test_updating_the_variables_searches(client: Client, graphql: GraphQLServer) -> None:
    source = books(client, graphql)
    source.fetch_data(wait=True)
    source.update_source(graphql={"variables": {"search": "Book 99"}})
    source.fetch_data(wait=True)
    assert ids(source) == [99] + list(range(990, 1000))
    assert graphql.variables()[-1] == {"first": 100, "search": "Book 99"}
    assert source.describe()["graphql"]["variables"] == {"search": "Book 99"}


def test_renamed_page_variables(client: Client, graphql: GraphQLServer) -> None:
    query = QUERY.replace("$first: Int", "$count: Int").replace("first: $first", "first: $count")
    source = books(client, graphql, graphql={"query": query, "pageVariables": {"first": "count"}})
    source.fetch_data(wait=True)
    assert graphql.variables() == [{"count": 100}]
    assert len(ids(source)) == 100


@pytest.mark.parametrize("config, field", [
    ({"graphql": {"query": QUERY}}, "graphql.connection"),
    ({"graphql": {"query": 7, "connection": "books"}}, "graphql.query"),
    ({"graphql": {"query": QUERY, "connection": "books"}, "keyPath": "data"}, "keyPath"),
    ({"graphql": {"query": QUERY, "connection": "books"}, "pagination": {"strategy": "offset"}}, "pagination.strategy"),
    ({"request": {"method": "GET", "body": {}}}, "request.body"),
    ({"pagination": {"requestIn": "body"}}, "pagination.requestIn"),
    ({"pagination": {"strategy": "offset", "cursorFromLastObject": "sort"}}, "pagination.cursorFromLastObject"),
])
def test_bad_configurations_are_refused_naming_the_field(client: Client, graphql: GraphQLServer, config, field) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(RPCError) as refusal:
        client.create_source("bad", kind="paginated", remoteConfiguration={"baseURL": graphql.base_url}, apiPath="/graphql",
                             **config)
    assert refusal.value.code == -32602
    assert refusal.value.data["field"] == field


def test_a_cached_graphql_list_reopens_stale_and_a_first_page_alike_changes_nothing(graphql: GraphQLServer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    cache = tmp_path / "cache.sqlite"
    with Client.spawn(timeout=30, cache=cache) as first:
        source = books(first, graphql, cache={"enabled": True})
        assert source.fetch_all_pages(max_pages=2) == 2
    # POST answers carry no validators: the second daemon shows the cached rows, stale, and
    # asks for the first page again; its rows are the same, so no didChange, and it is fresh.
    with Client.spawn(timeout=30, cache=cache) as second:
        source = books(second, graphql, cache={"enabled": True})
        with source.events(timeout=10) as stream:
            source.fetch_data(wait=False)
            kinds = []
            for event in stream:
                kinds.append((event.kind, event.params.get("stale")))
                if event.kind in ("finishedLoading", "failedWithError"):
                    break
        assert kinds == [("willLoadData", None), ("didChange", None), ("didChangeFreshness", True),
                         ("didChangeFreshness", False), ("finishedLoading", None)]
        assert ids(source) == list(range(200))
    assert graphql.variables()[-1] == {"first": 100}, "the first page, asked for again"
    assert len(graphql.requests) == 3


def test_a_live_graphql_list_revalidates_its_pages_with_their_own_variables(client: Client, graphql: GraphQLServer) -> None:
    source = books(client, graphql)
    assert source.fetch_all_pages(max_pages=2) == 2
    with source.events(timeout=15) as stream:
        source.set_refresh_interval(1)
        for event in stream:
            if event.kind == "didRefresh" or len(graphql.requests) >= 4:
                break
    source.set_refresh_interval(None)
    # The walk asks for the pages held again, each with the variables that asked for it; the
    # rows are the same, so they stay as they are.
    assert graphql.variables()[2:4] == [{"first": 100}, {"first": 100, "after": cursor(99)}]
    assert ids(source) == list(range(200))


def test_a_window_over_a_graphql_list_drops_far_pages_and_pages_back_with_before(client: Client, graphql: GraphQLServer) -> None:
    source = books(client, graphql, window={"maxPages": 2})
    assert source.fetch_all_pages(max_pages=3) == 3
    assert ids(source) == list(range(100, 300)), "the first page was dropped"
    # The page dropped at the top is the page before: the first page, asked for again as it was.
    assert source.fetch_previous_page(wait=True).get("started")
    assert ids(source) == list(range(0, 200))
    assert graphql.variables()[-1] == {"first": 100}
    assert len(graphql.requests) == 4


def test_paging_back_from_the_middle_shows_the_before_cursor(client: Client, graphql: GraphQLServer) -> None:
    source = books(client, graphql, initialCursor=cursor(299))
    source.fetch_data(wait=True)
    assert source.describe()["previousPage"] == {"before": cursor(300)}


def test_a_filtered_view_over_a_graphql_list(client: Client, graphql: GraphQLServer) -> None:
    source = books(client, graphql)
    source.fetch_data(wait=True)
    view = client.create_source("found", kind="filtered", source="books", match={"query": "book 4", "keyPaths": ["title"]})
    titles = [row["title"] for row in view.objects()]
    assert titles and all("4" in title for title in titles)
