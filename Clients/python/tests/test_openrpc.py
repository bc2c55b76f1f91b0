"""The client's expectations against Protocol/openrpc.json, the protocol's machine-checked
form: the protocol version, the members of every TypedDict, and every message of a session
that uses the whole API (each request's params and result, each notification), validated
with jsonschema.

protocol.py is generated from the document (tests/test_protocol_generated.py keeps it
current); the member checks below hold each name the generator gives to the schema it
stands for (FetchError to LoadFailure, FetchResult to fetchData's result...)."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from conftest import REPO
from datasourced_client import AsyncClient, Client, protocol
from datasourced_client.async_client import SUPPORTED_PROTOCOL_MAJOR
from datasourced_client.events import FINAL_EVENTS

DOCUMENT: dict[str, Any] = json.loads((REPO / "Protocol" / "openrpc.json").read_text())
BASE = "urn:datasourced:openrpc"
REGISTRY = Registry().with_resource(BASE, Resource(contents=DOCUMENT, specification=DRAFT202012))
METHODS = {method["name"]: index for index, method in enumerate(DOCUMENT["methods"])}
NOTIFICATIONS = {note["name"]: index for index, note in enumerate(DOCUMENT["x-notifications"])}
SCHEMAS = DOCUMENT["components"]["schemas"]


def resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = SCHEMAS[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def members(schema: dict[str, Any]) -> set[str]:
    """Every member an object of this schema may have (across its anyOf/oneOf alternatives)."""
    schema = resolve(schema)
    found = set(schema.get("properties", {}))
    for combined in ("anyOf", "oneOf", "allOf"):
        for alternative in schema.get(combined, []):
            found |= members(alternative)
    return found


def member(schema: dict[str, Any], name: str) -> dict[str, Any]:
    """The schema of member ``name`` (in whichever alternative has it)."""
    schema = resolve(schema)
    if name in schema.get("properties", {}):
        return resolve(schema["properties"][name])
    for combined in ("anyOf", "oneOf", "allOf"):
        for alternative in schema.get(combined, []):
            if name in members(alternative):
                return member(alternative, name)
    raise KeyError(name)


def keys(typed_dict: type) -> set[str]:
    return set(typed_dict.__required_keys__ | typed_dict.__optional_keys__)  # type: ignore[attr-defined]


def method(name: str) -> dict[str, Any]:
    return DOCUMENT["methods"][METHODS[name]]


def result(name: str) -> dict[str, Any]:
    return resolve(method(name)["result"]["schema"])


def test_the_client_speaks_the_documented_protocol_version():
    assert int(DOCUMENT["info"]["version"].split(".")[0]) == SUPPORTED_PROTOCOL_MAJOR


@pytest.mark.parametrize("typed_dict, schema", [
    (protocol.SourceDescription, SCHEMAS["SourceDescription"]),
    (protocol.FetchError, SCHEMAS["LoadFailure"]),
    (protocol.ChildFailure, member(SCHEMAS["LoadFailure"], "failures")["items"]),
    (protocol.RemoteConfiguration, SCHEMAS["RemoteConfiguration"]),
    (protocol.SortDescriptor, SCHEMAS["SortDescriptor"]),
    (protocol.Limits, SCHEMAS["Limits"]),
    (protocol.Pagination, SCHEMAS["Pagination"]),
    (protocol.RetryAfter, member(SCHEMAS["Pagination"], "retryAfter")),
    (protocol.PaginatorKeys, member(SCHEMAS["SourceSpec"], "paginatorKeys")),
    (protocol.RequestKeys, member(SCHEMAS["SourceSpec"], "requestKeys")),
    (protocol.Changes, SCHEMAS["ChangeSet"]),
    (protocol.Move, member(SCHEMAS["ChangeSet"], "moved")["items"]),
    (protocol.ChangeValues, member(DOCUMENT["x-notifications"][NOTIFICATIONS["dataSource/didChange"]]["params"],
                                   "values")),
    (protocol.InitializeResult, result("initialize")),
    (protocol.Capabilities, member(result("initialize"), "capabilities")),
    (protocol.FetchResult, result("fetchData")),
    (protocol.NextPageResult, result("fetchNextPage")),
    (protocol.SourceSummary, result("listSources")["items"]),
    (protocol.CacheSettings, SCHEMAS["CacheSettings"]),
    (protocol.TLSFiles, SCHEMAS["TLSFiles"]),
    (protocol.CacheState, member(SCHEMAS["SourceDescription"], "cache")),
    (protocol.RefreshState, member(SCHEMAS["SourceDescription"], "refresh")),
], ids=lambda value: getattr(value, "__name__", ""))
def test_a_typed_dict_has_the_members_of_its_schema(typed_dict: type, schema: dict[str, Any]):
    assert keys(typed_dict) == members(schema)


def test_the_source_config_is_create_sources_params_but_name_and_kind():
    assert keys(protocol.SourceConfig) | {"name", "kind"} == members(SCHEMAS["SourceSpec"])


def test_the_notification_params_and_kinds_are_the_documented_ones():
    documented = set().union(*(members(note["params"]) for note in DOCUMENT["x-notifications"]))
    assert keys(protocol.NotificationParams) == documented
    assert FINAL_EVENTS <= {name.rsplit("/", 1)[-1] for name in NOTIFICATIONS}


def test_the_literal_types_list_the_documented_values():
    assert set(typing.get_args(protocol.SourceKind)) == set(member(SCHEMAS["SourceDescription"], "kind")["enum"])
    storage = resolve(SCHEMAS["PlaceholderStorageOptions"])["anyOf"][1]["items"]["enum"]
    assert set(typing.get_args(protocol.PlaceholderKind)) == set(storage)


# -- a session that uses the whole API, every message validated -------------------------


def validator(pointer: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": f"{BASE}#{pointer}"}, registry=REGISTRY)


def params_validator(name: str) -> Draft202012Validator:
    index = METHODS[name]
    spec = DOCUMENT["methods"][index]
    if "x-params-schema" in spec:
        return validator(f"/methods/{index}/x-params-schema")
    return Draft202012Validator({
        "type": "object",
        "properties": {p["name"]: {"$ref": f"{BASE}#/methods/{index}/params/{i}/schema"}
                       for i, p in enumerate(spec["params"])},
        "required": [p["name"] for p in spec["params"] if p.get("required")],
        "additionalProperties": False,
    }, registry=REGISTRY)


def problems(checker: Draft202012Validator, instance: object) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:300]}" for e in checker.iter_errors(instance)]


def use_the_whole_api(client: Client, api: str) -> None:
    client.ping()
    client.list_sources()
    people = client.create_source("people", kind="simple", identityKey="id", objects=[{"id": 1, "name": "Ada"}])
    people.insert_objects([{"id": 2, "name": "Grace"}], index=0)
    people.update_objects([{"id": 1, "name": "Ada Lovelace"}])
    people.remove_objects(0)
    people.replace_objects([{"id": 3, "name": "Barbara"}, {"id": 4, "name": "Frances"}])
    people.number_of_sections()
    people.number_of_objects(0)
    people.section_titles()
    people.object_at((0, 1))
    people.index_path_for({"id": 4})
    people.objects_in_section(0, 1, 1)
    people.snapshot()
    people.count_objects()
    people.fetch_data(wait=True)
    people.fetch_data(wait=False)

    books = client.create_source(
        "books", kind="paginated", identityKey="id", keyPath="books", pageSize=4, firstPage=1,
        remoteConfiguration={"baseURL": api, "headers": {"X-Client": "python"}, "timeoutSeconds": 30},
        apiPath="/v1/books", queryParameters={"lang": "en"}, placeholderStorageOptions=["loading", "errors"],
        limits={"maxBodyBytes": 1 << 20, "maxDepth": 32}, prefetchDistance=0,
        paginatorKeys={"currentPage": "page", "pageSize": "page_size", "numberOfPages": "number_of_pages",
                       "numberOfTotalObjects": "total_count"},
        requestKeys={"currentPage": "page", "pageSize": "page_size"},
        pagination={"strategy": "pageNumber", "maxPagesWithoutNewObjects": 2})
    by_genre = client.create_source("byGenre", kind="sectioned", source="books", sectioningKey="genre",
                                    sortDescriptors=[{"keyPath": "year", "ascending": False}])
    everything = client.create_source("everything", kind="multi", sources=["people", "byGenre"], preserveSections=True)
    books.fetch_data(wait=True)
    books.will_display((0, 0))
    books.fetch_next_page(wait=True)
    books.fetch_all_pages(max_pages=3)
    books.has_more_pages()
    books.is_fetching()
    books.load_states()
    books.retry()  # nothing failed: refused with a reason
    books.fetch_previous_page()  # at the first page: refused with a reason
    by_genre.snapshot()
    everything.fetch_data(wait=True)  # didPartiallyLoad as its first child finishes
    client.source("books").describe()

    # 1.2: a cached, live source; a second one with the same members shares its cache
    # entry, so it opens from it (didChangeFreshness).
    cached: dict[str, Any] = {"identityKey": "id", "keyPath": "books", "pageSize": 4, "apiPath": "/v1/catalog",
                              "remoteConfiguration": {"baseURL": api}}
    shelf = client.create_source("shelf", kind="paginated", **cached,
                                 cache={"enabled": True, "maxAgeSeconds": 3600, "maxPages": 5},
                                 refreshIntervalSeconds=3600)
    shelf.fetch_data(wait=True)
    shelf.set_refresh_interval(None)
    client.create_source("shelfAgain", kind="paginated", **cached, cache={"enabled": True}).fetch_data(wait=True)
    # 1.4: the same list, another query, in place.
    shelf.update_source(query_parameters={"genre": "poetry"}, keep_rows=True)
    shelf.fetch_data(wait=True)
    # 1.4: a filtered view of it, narrowed as a person types.
    narrowed = client.create_source("narrowed", kind="filtered", source="shelf", match={"query": "d", "keyPaths": ["title"]})
    narrowed.set_filter(match={"query": "du", "keyPaths": ["title"]}, filter={"keyPath": "year", "op": "ge", "value": 1900})
    narrowed.set_filter(filter=None)

    slow = client.create_source("slow", kind="remote", remoteConfiguration={"baseURL": api}, apiPath="/v1/slow",
                                keyPath="books")
    slow.fetch_data(wait=False)
    slow.cancel_fetch()
    broken = client.create_source("broken", kind="remote", remoteConfiguration={"baseURL": api},
                                  apiPath="/v1/broken", placeholderStorageOptions=14)
    broken.fetch_data(wait=True, raise_on_error=False)
    broken.destroy()
    # 1.9: actions on rows (Clients/fixtures.json answers PATCH /v1/books/1, refuses /v1/books/2,
    # and queues /v1/books/3 with a 503 and Retry-After: 3600).
    shop = client.create_source(
        "shop", kind="paginated", identityKey="id", keyPath="books", pageSize=4, apiPath="/v1/books",
        remoteConfiguration={"baseURL": api},
        actions={"edit": {"method": "PATCH", "path": "/v1/books/{id}", "body": {"title": "{$values.title}"},
                          "values": {"title": {"type": "string", "required": True}}, "optimistic": "update"}})
    shop.fetch_data(wait=True)
    with client.events(timeout=10, source="shop") as stream:
        def settle(count: int) -> list[str]:
            statuses = []
            for event in stream:
                if event.method == "dataSource/didSettleMutation":
                    statuses.append(event.params["status"])
                    if len(statuses) == count:
                        return statuses
            return statuses

        queued = shop.perform_action("edit", identity=3, values={"title": "Later"})["mutation"]
        assert settle(1) == ["queued"]
        # Behind the queued one, the next waits: both can be cancelled.
        waiting = shop.perform_action("edit", identity=4, values={"title": "Never sent"})["mutation"]
        client.request("objectAtIndexPath", {"source": "shop", "indexPath": [0, 2], "withPending": True})
        client.request("objectsInSection", {"source": "shop", "section": 0, "count": 3, "withPending": True})
        shop.cancel_mutation(waiting)
        shop.cancel_mutation(queued)
        shop.perform_action("edit", identity=1, values={"title": "Dune Messiah"})
        shop.perform_action("edit", identity=2, values={"title": ""})
        assert settle(4) == ["rolledBack", "rolledBack", "committed", "rolledBack"]
    books.destroy(cascade=True)
    if "allowCredential" in METHODS:
        # Recorded under the session's private $XDG_CONFIG_HOME (conftest.py).
        client.allow_credential(env="DATASOURCED_TEST_TOKEN", origin=api)


def test_every_message_of_a_session_using_the_whole_api_validates(daemon: str, api: str, cache_file: Path,
                                                                  monkeypatch: pytest.MonkeyPatch):
    sent: list[tuple[str, dict[str, Any], Any]] = []
    send = AsyncClient.request

    async def recording(self: AsyncClient, name: str, params: dict[str, Any] | None = None, **options: Any) -> Any:
        answer = await send(self, name, params, **options)
        sent.append((name, params or {}, answer))
        return answer

    monkeypatch.setattr(AsyncClient, "request", recording)
    notes: list[tuple[str, Any]] = []
    with Client.spawn(daemon, timeout=10, change_values=True, cache=cache_file, load_states=True) as client:
        client.on_event(lambda event: notes.append((event.method, event.params)))
        use_the_whole_api(client, api)

    assert {name for name, _, _ in sent} == set(METHODS), "the API sends every documented method"
    failures: list[str] = []
    for name, params, answer in sent:
        failures += [f"{name} params {p}" for p in problems(params_validator(name), params)]
        failures += [f"{name} result {p}" for p in problems(validator(f"/methods/{METHODS[name]}/result/schema"), answer)]
    for name, params in notes:
        failures += [f"{name} {p}" for p in problems(validator(f"/x-notifications/{NOTIFICATIONS[name]}/params"), params)]
    assert {name for name, _ in notes} == set(NOTIFICATIONS)
    assert len(sent) > 40 and len(notes) > 40, (len(sent), len(notes))
    assert not failures, "\n".join(failures[:30])


def test_the_checks_above_can_fail():
    checker = params_validator("createSource")
    assert not problems(checker, {"name": "s", "kind": "simple", "objects": []})
    assert problems(checker, {"name": "s", "kind": "simple", "pageSize": 4})
    assert keys(protocol.Limits) != members(SCHEMAS["Pagination"])
