#!/usr/bin/env python3
"""Serves, for the clients' tests, two APIs on free loopback ports, as `datasourced fixtures
FILE` serves Clients/fixtures.json: Tests/Frameworks/graphqlapi.py's GraphQL API (Strawberry:
a Relay connection `books(first, after, last, before, search)` over 1,000 books) and
Tests/Frameworks/postapis.py's Elasticsearch-shaped search (`POST /books/_search` with a JSON
body, paged by `size` and `search_after`, over 1,000 documents whose year is
1950 + id % 50). Prints one JSON line once both listen,
`{"baseURL": "http://127.0.0.1:PORT", "searchURL": "http://127.0.0.1:PORT2"}` (`baseURL`
the GraphQL API's, `searchURL` the search's), then serves until its stdin closes.

    python3 Clients/tests/graphql-server.py

Needs Strawberry (`python3 -m pip install -r Tests/Frameworks/requirements.txt`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Tests" / "Frameworks"))

from graphqlapi import GraphQLServer  # noqa: E402
from postapis import ElasticsearchServer  # noqa: E402


def main() -> int:
    with GraphQLServer() as graphql, ElasticsearchServer() as search:
        print(json.dumps({"baseURL": graphql.base_url, "searchURL": search.base_url}), flush=True)
        sys.stdin.read()  # until stdin closes
    return 0


if __name__ == "__main__":
    sys.exit(main())
