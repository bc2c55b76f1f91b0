#!/usr/bin/env bash
# The main job: build the daemon, serve the books API of Clients/fixtures.json (the file
# the clients' tests serve too; its /v1/books is the books API of Examples/quickstart.json)
# on a free loopback port, and load it with the Python client's command-line tool: a
# paginated source page by page (its placeholders and notifications on stderr), then
# a sectioned view of the same books. No internet, no configuration.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >&2

swift build --product datasourced >&2
PYTHONPATH=Clients/python python3 -m datasourced_client \
  --daemon .build/debug/datasourced --fixtures Clients/fixtures.json \
  Clients/python/examples/books.toml "$@"
