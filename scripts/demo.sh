#!/usr/bin/env bash
# The main job: build the daemon, serve the books API of Clients/fixtures.json (the file
# the clients' tests serve too; its books are those of Examples/quickstart.json) on a free
# loopback port, and load it with the Python client's command-line tool, twice:
#   1. a paginated source page by page (its placeholders and notifications on stderr),
#      then a sectioned view of the same books; the daemon keeps the pages in a persisted
#      cache (a private, temporary file);
#   2. a new daemon on the same cache file: the list opens at once from the cache, marked
#      stale, while the server is asked whether it changed (it answers 304: no).
# Arguments go to both runs (--events prints every notification in full). No internet, no
# configuration, nothing left behind. $DATASOURCED, when set, is the daemon to use instead
# of building one (a release build, or a snapshot).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >&2

if [ -n "${DATASOURCED:-}" ]; then
  daemon="$DATASOURCED"
else
  swift build --product datasourced >&2
  daemon=.build/debug/datasourced
fi

work="$(mktemp -d)"
fixtures_pid=""
cleanup() {
  if [ -n "$fixtures_pid" ]; then
    exec {fixtures_in}>&- # the fixture server serves until its stdin closes
    wait "$fixtures_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# One fixture server for both runs: a cache entry is named by everything that decides what
# the server returns, the base URL (and so its port) included.
coproc FIXTURES { exec "$daemon" fixtures Clients/fixtures.json; }
fixtures_pid=$FIXTURES_PID
fixtures_in=${FIXTURES[1]}
IFS= read -r announced <&"${FIXTURES[0]}"
base_url="$(sed -n 's/.*"baseURL" *: *"\([^"]*\)".*/\1/p' <<<"$announced")"
[ -n "$base_url" ] || { echo "demo: the fixture server did not start" >&2; exit 1; }
echo "fixture API: $base_url (from Clients/fixtures.json)" >&2

books() {
  PYTHONPATH=Clients/python python3 -m datasourced_client --daemon "$daemon" --set "baseURL=$base_url" \
    --cache-path "$work/cache.sqlite" Clients/python/examples/books.toml "$@"
}
echo "== first run: from the server, page by page (the daemon keeps the pages in $work/cache.sqlite)" >&2
books "$@"
echo "== second run, a new daemon on the same cache file: the books at once, then the server's word" >&2
books --show books "$@"
