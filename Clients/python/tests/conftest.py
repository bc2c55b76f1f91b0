"""Fixtures: the real daemon ($DATASOURCED, else the repository's debug build) and the
fixture HTTP API it serves from Clients/fixtures.json (the demo's file too), the GraphQL
API of Tests/Frameworks/graphqlapi.py and the Elasticsearch-shaped search of
Tests/Frameworks/postapis.py (Clients/tests/graphql-server.py serves both).

No daemon of the tests touches the user's persisted cache: $XDG_CACHE_HOME (where a daemon
puts its cache file unless told) is a temporary folder for the whole session, and the tests
of the cache give each daemon a private --cache-path besides. Nor the user's allowed
credentials: $XDG_CONFIG_HOME (where a daemon records them) is a temporary folder too."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from datasourced_client import AsyncClient, Client, DataSource
from datasourced_client.fixtures import FixtureServer

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "Clients" / "fixtures.json"  # shared with the demo and the Neovim plugin's tests


@pytest.fixture(scope="session", autouse=True)
def private_cache_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """$XDG_CACHE_HOME for every daemon the tests start (children inherit it)."""
    home = tmp_path_factory.mktemp("xdg-cache")
    before = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(home)
    yield home
    if before is None:
        del os.environ["XDG_CACHE_HOME"]
    else:
        os.environ["XDG_CACHE_HOME"] = before


@pytest.fixture(scope="session", autouse=True)
def private_config_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """$XDG_CONFIG_HOME for every daemon the tests start: the credentials they allow
    (allowCredential) are written under it, never among the user's own."""
    home = tmp_path_factory.mktemp("xdg-config")
    before = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(home)
    yield home
    if before is None:
        del os.environ["XDG_CONFIG_HOME"]
    else:
        os.environ["XDG_CONFIG_HOME"] = before


@pytest.fixture
def cache_file(tmp_path: Path) -> Path:
    """A private persisted cache for one test's daemons (--cache-path)."""
    return tmp_path / "cache" / "cache.sqlite"


@pytest.fixture(scope="session")
def daemon() -> str:
    """The daemon's executable: $DATASOURCED (its first word), else the debug build."""
    words = shlex.split(os.environ.get("DATASOURCED", ""))
    path = words[0] if words else str(REPO / ".build" / "debug" / "datasourced")
    if not os.access(path, os.X_OK):
        pytest.fail(f"no datasourced executable at {path}: run `swift build` first or set $DATASOURCED")
    return path


@pytest.fixture(scope="session")
def api(daemon: str) -> Iterator[str]:
    """The base URL of Clients/fixtures.json served on loopback, shared by the session's tests."""
    with FixtureServer(daemon, FIXTURES) as server:
        yield server.base_url


@pytest.fixture(scope="session")
def graphql_server() -> Iterator[dict[str, str]]:
    """What Clients/tests/graphql-server.py announces once its servers listen on loopback:
    `baseURL`, Tests/Frameworks/graphqlapi.py's GraphQL API (1,000 books, a Relay
    connection), and `searchURL`, Tests/Frameworks/postapis.py's Elasticsearch-shaped search
    (1,000 documents). Both serve until its stdin closes."""
    server = subprocess.Popen([sys.executable, str(REPO / "Clients" / "tests" / "graphql-server.py")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert server.stdin is not None and server.stdout is not None
    line = server.stdout.readline()
    if not line:
        server.wait()
        pytest.fail("Clients/tests/graphql-server.py did not start: "
                    "python3 -m pip install -r Tests/Frameworks/requirements.txt installs Strawberry")
    yield json.loads(line)
    server.stdin.close()
    server.wait(timeout=5)
    server.stdout.close()


@pytest.fixture(scope="session")
def graphql_api(graphql_server: dict[str, str]) -> str:
    """The base URL of the GraphQL API."""
    return graphql_server["baseURL"]


@pytest.fixture(scope="session")
def search_api(graphql_server: dict[str, str]) -> str:
    """The base URL of the Elasticsearch-shaped search (`POST /books/_search`)."""
    return graphql_server["searchURL"]


@pytest.fixture
def fresh_api(daemon: str) -> Iterator[str]:
    """The same API, served anew: for routes that answer a limited number of times."""
    with FixtureServer(daemon, FIXTURES) as server:
        yield server.base_url


@pytest.fixture
def client(daemon: str) -> Iterator[Client]:
    """A started client; the daemon must end cleanly (status 0) when it closes."""
    started = Client.spawn([daemon], timeout=10)
    yield started
    assert started.close() == 0, started.stderr_tail


@pytest.fixture
async def aclient(daemon: str) -> AsyncIterator[AsyncClient]:
    """A started asyncio client; the daemon must end cleanly (status 0) when it closes."""
    started = await AsyncClient.spawn([daemon], timeout=10)
    yield started
    assert await started.close() == 0, started.stderr_tail


def speaks(client: Client | AsyncClient, version: tuple[int, int]) -> bool:
    """The daemon speaks this protocol version or a later one of the same major."""
    major, _, minor = client.protocol_version.partition(".")
    return (int(major), int(minor or 0)) >= version


def speaks_1_1(client: Client | AsyncClient) -> bool:
    """Protocol 1.1 (revisions, server error text, loop guard) is what the daemon speaks."""
    return speaks(client, (1, 1))


@pytest.fixture(scope="session")
def daemon_sends_server_text(daemon: str, api: str) -> bool:
    """Whether the daemon's fetch errors carry the server's own text (protocol 1.1)."""
    with Client.spawn(daemon, timeout=10) as client:
        broken = client.create_source("broken", kind="remote", remoteConfiguration={"baseURL": api},
                                      apiPath="/v1/broken")
        error = broken.fetch_data(wait=True, raise_on_error=False).get("error", {})
        return "serverMessage" in error


BOOKS: dict[str, Any] = {"keyPath": "books", "pageSize": 4, "identityKey": "id"}


def books_source(client: Client, base_url: str, name: str = "books", api_path: str = "/v1/books",
                 **extra: Any) -> DataSource:
    return client.create_source(name, kind="paginated", remoteConfiguration={"baseURL": base_url},
                                apiPath=api_path, **BOOKS, **extra)
