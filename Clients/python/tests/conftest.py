"""Fixtures: the real daemon (built by `swift build`) and the fixture HTTP API it serves."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from datasourced_client import Client
from datasourced_client.cli import FixtureServer

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "Clients" / "fixtures.json"  # shared with the Neovim plugin's tests


@pytest.fixture(scope="session")
def daemon() -> str:
    """The daemon under test: $DATASOURCED, else the repository's debug build."""
    path = os.environ.get("DATASOURCED") or str(REPO / ".build" / "debug" / "datasourced")
    if not os.access(path, os.X_OK):
        pytest.fail(f"no datasourced executable at {path}: run `swift build` first or set $DATASOURCED")
    return path


@pytest.fixture(scope="session")
def api(daemon: str) -> Iterator[str]:
    """The base URL of tests/fixtures.json served on loopback, shared by the session's tests."""
    server = FixtureServer(daemon, FIXTURES)
    yield server.base_url
    server.close()


@pytest.fixture
def fresh_api(daemon: str) -> Iterator[str]:
    """The same API, served anew: for routes that answer a limited number of times."""
    server = FixtureServer(daemon, FIXTURES)
    yield server.base_url
    server.close()


@pytest.fixture
def client(daemon: str) -> Iterator[Client]:
    """A started client; the daemon must end cleanly (status 0) when it closes."""
    started = Client.spawn([daemon], timeout=10)
    yield started
    assert started.close() == 0, started.stderr_tail


def books_source(client: Client, base_url: str, name: str = "books", api_path: str = "/v1/books", **extra):
    return client.create_source(name, kind="paginated", remoteConfiguration={"baseURL": base_url},
                                apiPath=api_path, keyPath="books", pageSize=4, identityKey="id", **extra)
