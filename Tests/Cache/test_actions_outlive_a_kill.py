"""Pending actions in the cache file (Protocol.md, "Actions"): a daemon killed with SIGKILL while
a mutation is queued leaves it in the file, and the next daemon on that file sends it, with the
same Idempotency-Key, before anything else is asked of it; lists stored after it, beyond the
cache's bound, evict one another and never the pending actions.

Run by scripts/test.sh (pytest), with $DATASOURCED set to the daemon under test."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cachedaemon import DAEMON, Daemon

class Books:
    """`GET /books`, and `PATCH /books/1`: refused with 503 (Retry-After an hour) the first time,
    applied after; each PATCH's Idempotency-Key kept."""

    def __init__(self) -> None:
        self.rows = [{"id": 1, "title": "Dune"}, {"id": 2, "title": "Emma"}]
        self.keys: list[str] = []
        self.lock = threading.Lock()

    def serve(self) -> tuple[ThreadingHTTPServer, str]:
        books = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def answer(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                with books.lock:
                    self.answer(200, books.rows)

            def do_PATCH(self) -> None:
                change = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                with books.lock:
                    books.keys.append(self.headers.get("Idempotency-Key", ""))
                    first = len(books.keys) == 1
                    if not first:
                        books.rows[0] = {"id": 1, **change}
                if first:
                    self.answer(503, {"detail": "down for maintenance"}, {"Retry-After": "3600"})
                else:
                    self.answer(200, {"id": 1, **change})

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server, f"http://127.0.0.1:{server.server_address[1]}"


def params(base: str) -> dict[str, Any]:
    return {"name": "books", "kind": "remote", "identityKey": "id", "remoteConfiguration": {"baseURL": base},
            "apiPath": "/books", "cache": {"enabled": True},
            "actions": {"rename": {"method": "PATCH", "path": "/books/{id}", "body": {"title": "{$values.title}"},
                                   "values": {"title": {"type": "string", "required": True}}, "optimistic": "update"}}}


def labels(cache_path: Path) -> str:
    return subprocess.run([DAEMON, "cache", "list", "--cache-path", str(cache_path)], capture_output=True, text=True,
                          check=True).stdout


def wait_for(condition: Any, what: str) -> None:
    """Polls state the test can read (the file's entries), never a fixed wait."""
    deadline = time.monotonic() + 20
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_queued_action_outlives_a_kill_and_the_next_daemon_sends_it(tmp_path: Path) -> None:
    books = Books()
    server, base = books.serve()
    cache_path = tmp_path / "cache.sqlite"
    try:
        first = Daemon(cache_path)
        first.request("createSource", params(base))
        first.request("fetchData", {"source": "books", "wait": True})
        answer = first.request("performAction", {"source": "books", "action": "rename", "identity": 1,
                                                  "values": {"title": "Dune Messiah"}})
        assert answer == {"mutation": "m1", "status": "pending"}
        settled = first.event("didSettleMutation")["params"]
        assert settled["status"] == "queued" and settled["error"]["status"] == 503
        wait_for(lambda: "(pending actions)" in labels(cache_path), "the pending actions' entry")
        first.process.send_signal(signal.SIGKILL)
        first.process.wait()

        second = Daemon(cache_path)
        second.request("createSource", params(base))
        committed = second.event("didSettleMutation")["params"]
        assert committed["mutation"] == "m1" and committed["status"] == "committed", committed
        assert len(books.keys) == 2 and books.keys[0] == books.keys[1] and len(books.keys[0]) == 36, books.keys
        second.request("fetchData", {"source": "books", "wait": True})
        rows = second.request("allObjects", {"source": "books"})
        assert {"id": 1, "title": "Dune Messiah"} in rows
        wait_for(lambda: "(pending actions)" not in labels(cache_path), "the entry to go once nothing is pending")
        second.close(quiet=False)
    finally:
        server.shutdown()


def test_lists_beyond_the_bound_evict_one_another_never_the_pending_actions(tmp_path: Path,
                                                                          api: tuple[Any, str]) -> None:
    _, lists = api
    books = Books()
    server, base = books.serve()
    cache_path = tmp_path / "cache.sqlite"
    bound = ("--cache-max-bytes", "300000")  # two of the API's lists (about 120 KB each)
    try:
        first = Daemon(cache_path, *bound)
        first.request("createSource", params(base))
        first.request("fetchData", {"source": "books", "wait": True})
        first.request("performAction", {"source": "books", "action": "rename", "identity": 1,
                                         "values": {"title": "Dune Messiah"}})
        assert first.event("didSettleMutation")["params"]["status"] == "queued"
        wait_for(lambda: "(pending actions)" in labels(cache_path), "the pending actions' entry")
        for name in ["a", "b", "c", "d"]:
            first.create(lists, name)
            first.request("fetchData", {"source": name, "wait": True})
        wait_for(lambda: "/list/d" in labels(cache_path), "the last list stored")
        stored = labels(cache_path)
        assert "/list/a" not in stored and "/list/b" not in stored, stored  # evicted, the oldest first
        assert "(pending actions)" in stored, stored
        first.process.send_signal(signal.SIGKILL)
        first.process.wait()

        second = Daemon(cache_path, *bound)
        second.request("createSource", params(base))
        committed = second.event("didSettleMutation")["params"]
        assert (committed["mutation"], committed["status"]) == ("m1", "committed"), committed
        assert len(books.keys) == 2 and books.keys[0] == books.keys[1], books.keys
        second.close(quiet=False)
    finally:
        server.shutdown()
