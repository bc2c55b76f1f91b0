"""Paging APIs whose queries go in a POST body (postapis.py): a Notion-shaped cursor API and
an Elasticsearch-shaped search, by `from`/`size` and by `search_after`."""

from __future__ import annotations

from datasourced_client import Client
from postapis import ElasticsearchServer, NotionServer


def test_notion_pages_by_start_cursor_in_the_body(client: Client, notion: NotionServer) -> None:
    pages = client.create_source(
        "pages", kind="paginated", remoteConfiguration={"baseURL": notion.base_url}, apiPath=notion.query_path,
        keyPath="results", identityKey="id", pageSize=100, request={"method": "POST", "body": {}},
        requestKeys={"cursor": "start_cursor", "pageSize": "page_size"},
        pagination={"strategy": "cursor", "cursorPath": "next_cursor", "hasMorePath": "has_more"})
    assert pages.fetch_all_pages() == 3
    assert [row["id"] for row in pages.objects()] == [row["id"] for row in notion.rows]
    assert [request.body for request in notion.requests] == [
        {"page_size": 100}, {"start_cursor": notion.rows[100]["id"], "page_size": 100},
        {"start_cursor": notion.rows[200]["id"], "page_size": 100}]
    assert {request.method for request in notion.requests} == {"POST"}


def test_a_filter_in_the_body_is_kept_and_updated(client: Client, notion: NotionServer) -> None:
    title = {"property": "Name", "title": {"contains": "Page 1"}}
    pages = client.create_source(
        "pages", kind="paginated", remoteConfiguration={"baseURL": notion.base_url}, apiPath=notion.query_path,
        keyPath="results", identityKey="id", request={"method": "POST", "body": {"filter": title}},
        requestKeys={"cursor": "start_cursor"},
        pagination={"strategy": "cursor", "cursorPath": "next_cursor", "hasMorePath": "has_more"})
    pages.fetch_data(wait=True)
    assert notion.requests[-1].body == {"filter": title}
    named = [row["properties"]["Name"]["title"][0]["plain_text"] for row in pages.objects()]
    assert named and all("Page 1" in name for name in named)
    other = {"property": "Name", "title": {"contains": "Page 24"}}
    pages.update_source(request={"body": {"filter": other}})
    pages.fetch_data(wait=True)
    assert notion.requests[-1].body == {"filter": other}
    assert len(pages.objects()) == 11


def test_elasticsearch_pages_by_from_and_size(client: Client, elasticsearch: ElasticsearchServer) -> None:
    docs = client.create_source(
        "docs", kind="paginated", remoteConfiguration={"baseURL": elasticsearch.base_url}, apiPath="/books/_search",
        keyPath="hits.hits", identityKey="_id", pageSize=250,
        request={"method": "POST", "body": {"query": {"match_all": {}}}},
        pagination={"strategy": "offset", "offsetKey": "from", "limitKey": "size", "totalPath": "hits.total.value"})
    assert docs.fetch_all_pages() == 4
    assert [row["_source"]["id"] for row in docs.objects()] == list(range(1000))
    assert [(request.body["from"], request.body["size"]) for request in elasticsearch.requests] == [
        (0, 250), (250, 250), (500, 250), (750, 250)]


def test_elasticsearch_pages_by_search_after_the_last_hits_sort_values(client: Client, elasticsearch: ElasticsearchServer) -> None:
    sort = [{"year": "asc"}, {"id": "asc"}]
    docs = client.create_source(
        "docs", kind="paginated", remoteConfiguration={"baseURL": elasticsearch.base_url}, apiPath="/books/_search",
        keyPath="hits.hits", identityKey="_id", pageSize=300, request={"method": "POST", "body": {"sort": sort}},
        requestKeys={"pageSize": "size"},
        pagination={"strategy": "cursor", "cursorKey": "search_after", "cursorFromLastObject": "sort"})
    assert docs.fetch_all_pages() == 5
    assert len(docs.objects()) == 1000
    # The cursor keeps its JSON type: an array, as the last hit gave it.
    assert [request.body.get("search_after") for request in elasticsearch.requests] == [
        None, [1964, 964], [1979, 979], [1994, 994], [1999, 999]]
    assert all(request.body["sort"] == sort for request in elasticsearch.requests)
