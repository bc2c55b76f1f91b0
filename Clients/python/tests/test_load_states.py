"""Load states per direction and retry (protocol 1.5, issue 31)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from datasourced_client import Client, LoadFailed
from datasourced_client.fixtures import FixtureServer


def page(ids: list[int], total: int = 4) -> dict[str, Any]:
    return {"items": [{"id": i} for i in ids], "total_count": total}


def serve(daemon: str, tmp_path: Path, routes: list[dict[str, Any]]) -> FixtureServer:
    path = tmp_path / "fixtures.json"
    path.write_text(json.dumps({"fixtures": routes}))
    return FixtureServer(daemon, path)


def test_retry_asks_again_for_the_failed_next_page_only_and_load_states_follow(daemon: str, tmp_path: Path):
    routes = [
        {"path": "/items", "query": {"page": "1"}, "body": page([1, 2])},
        {"path": "/items", "query": {"page": "2"}, "times": 1, "status": 500, "body": {"error": "again"}},
        {"path": "/items", "query": {"page": "2"}, "body": page([3, 4])},
    ]
    with serve(daemon, tmp_path, routes) as server, Client.spawn(daemon, timeout=10, load_states=True) as client:
        source = client.create_source("p", kind="paginated", identityKey="id", keyPath="items", pageSize=2,
                                      remoteConfiguration={"baseURL": server.base_url}, apiPath="/items")
        assert source.load_states() == {"refresh": {"state": "idle"}, "prepend": {"state": "idle"},
                                        "append": {"state": "idle"}}
        with client.events(timeout=10, source="p") as stream:
            source.fetch_data(wait=True)
            with pytest.raises(LoadFailed):
                source.fetch_next_page(wait=True)
            states = source.load_states()
            assert states is not None
            assert states["append"]["state"] == "error" and states["append"]["error"]["status"] == 500
            assert states["refresh"] == {"state": "idle"}, "the first page stays loaded"
            assert source.retry(wait=True) == {"started": True, "direction": "append"}
            assert source.count_objects() == 4
            assert source.retry() == {"started": False, "reason": "no direction has failed: loadStates has no error"}
            seen: list[str] = []
            finals = 0
            for event in stream:
                if event.method == "dataSource/didChangeLoadState":
                    seen.append(event.params["loadStates"]["append"]["state"])
                if event.method in ("dataSource/finishedLoading", "dataSource/failedWithError"):
                    finals += 1
                    if finals == 3:
                        break
        assert seen == ["idle", "idle", "loading", "error", "loading", "endReached"]


def test_fetch_previous_page_loads_the_page_before_a_run_started_in_the_middle(daemon: str, tmp_path: Path):
    routes = [
        {"path": "/items", "query": {"page": "3"}, "body": page([5, 6], total=6)},
        {"path": "/items", "query": {"page": "2"}, "body": page([3, 4], total=6)},
        {"path": "/items", "query": {"page": "1"}, "body": page([1, 2], total=6)},
    ]
    with serve(daemon, tmp_path, routes) as server, Client.spawn(daemon, timeout=10) as client:
        source = client.create_source("p", kind="paginated", identityKey="id", keyPath="items", pageSize=2, initialPage=3,
                                      remoteConfiguration={"baseURL": server.base_url}, apiPath="/items")
        source.fetch_data(wait=True)
        assert source.fetch_previous_page(wait=True) == {"started": True}
        assert source.fetch_previous_page(wait=True) == {"started": True}
        assert [row["id"] for row in source.snapshot().objects()] == [1, 2, 3, 4, 5, 6]
        assert source.fetch_previous_page() == {"started": False,
                                                "reason": "the first page is loaded: there is no page before it"}
        states = source.load_states()
        assert states is not None and states["prepend"] == {"state": "endReached"}
