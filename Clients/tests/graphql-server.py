#!/usr/bin/env python3
"""Serves Tests/Frameworks/graphqlapi.py's GraphQL API (Strawberry: a Relay connection
`books(first, after, last, before, search)` over 1,000 books) on a free loopback port for
the clients' tests, as `datasourced fixtures FILE` serves Clients/fixtures.json: prints
`{"baseURL": "http://127.0.0.1:PORT"}` once listening, then serves until its stdin closes.

    python3 Clients/tests/graphql-server.py

Needs Strawberry (`python3 -m pip install -r Tests/Frameworks/requirements.txt`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Tests" / "Frameworks"))

from graphqlapi import GraphQLServer  # noqa: E402


def main() -> int:
    with GraphQLServer() as server:
        print(json.dumps({"baseURL": server.base_url}), flush=True)
        sys.stdin.read()  # until stdin closes
    return 0


if __name__ == "__main__":
    sys.exit(main())
