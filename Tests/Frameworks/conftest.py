"""Fixtures of the framework tests: the APIs they page, each on loopback (a real Django REST
framework API, with a ModelViewSet the actions tests change, a real GraphQL API by Strawberry, and Notion- and Elasticsearch-shaped APIs that
page by a JSON body), and the Python client (Clients/python) on the daemon under test
($DATASOURCED)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Iterator

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "Clients" / "python"))
os.environ.setdefault("DATASOURCED", str(REPO / ".build" / "debug" / "datasourced"))

from datasourced_client import Client  # noqa: E402
from drfapi import DRFServer  # noqa: E402
from graphqlapi import GraphQLServer  # noqa: E402
from postapis import ElasticsearchServer, NotionServer  # noqa: E402


@pytest.fixture()
def drf() -> Iterator[DRFServer]:
    with DRFServer(rows=1000) as server:
        yield server


@pytest.fixture()
def graphql() -> Iterator[GraphQLServer]:
    with GraphQLServer() as server:
        yield server


@pytest.fixture()
def notion() -> Iterator[NotionServer]:
    with NotionServer(rows=250) as server:
        yield server


@pytest.fixture()
def elasticsearch() -> Iterator[ElasticsearchServer]:
    with ElasticsearchServer(docs=1000) as server:
        yield server


@pytest.fixture()
def client() -> Iterator[Client]:
    client = Client.spawn(timeout=30)
    yield client
    client.close()
