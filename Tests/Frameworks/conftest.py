"""Fixtures of the framework tests: a real Django REST framework API on loopback, and the
Python client (Clients/python) on the daemon under test ($DATASOURCED)."""

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


@pytest.fixture()
def drf() -> Iterator[DRFServer]:
    with DRFServer(rows=1000) as server:
        yield server


@pytest.fixture()
def client() -> Iterator[Client]:
    client = Client.spawn(timeout=30)
    yield client
    client.close()
