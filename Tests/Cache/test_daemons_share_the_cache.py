"""The persisted cache as daemons use it (issue 14, "Data safety"): real `datasourced serve`
processes on one cache file, against a local HTTP API.

- Two daemons in parallel, 200 cycles each: no error, and every entry either wrote is there.
- kill -9 while a daemon writes, 200 times: the file always opens, and the list a new daemon
  shows from it is one whole version, never a mix of two.

Run by scripts/test.sh (pytest), with $DATASOURCED set to the daemon under test."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib.parse import parse_qs, urlparse

import pytest

DAEMON = os.environ.get("DATASOURCED", str(Path(__file__).resolve().parents[2] / ".build" / "debug" / "datasourced"))


class API:
    """`/list/NAME`: ROWS objects stamped with the current version of NAME (bumped by `bump`),
    with an ETag per version."""

    def __init__(self, rows: int) -> None:
        self.rows = rows
        self.versions: dict[str, int] = {}
        self.lock = threading.Lock()

    def bump(self, name: str) -> int:
        with self.lock:
            self.versions[name] = self.versions.get(name, 0) + 1
            return self.versions[name]

    def body(self, name: str) -> tuple[bytes, str]:
        with self.lock:
            version = self.versions.get(name, 0)
        items = [{"id": i, "version": version, "text": "x" * 40} for i in range(self.rows)]
        return json.dumps({"items": items}).encode(), f'"{name}-{version}"'


@pytest.fixture()
def api() -> Iterator[tuple[API, str]]:
    state = API(rows=2000)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            name = urlparse(self.path).path.rsplit("/", 1)[-1]
            body, etag = state.body(name)
            if self.headers.get("If-None-Match") == etag:
                self.send_response(304)
                self.send_header("ETag", etag)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("ETag", etag)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield state, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


class Daemon:
    def __init__(self, cache_path: Path) -> None:
        self.process = subprocess.Popen([DAEMON, "serve", "--cache-path", str(cache_path)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.next_id = 0
        self.notifications: list[dict[str, Any]] = []
        assert self.request("initialize", {})["protocolVersion"] == "1.2"

    def send(self, method: str, params: Any) -> int:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        body = json.dumps(message).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.process.stdin.flush()
        return self.next_id

    def message(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = 0
        while True:
            line = self.process.stdout.readline()
            if line in (b"\r\n", b""):
                break
            if line.lower().startswith(b"content-length"):
                length = int(line.split(b":")[1])
        assert length > 0, "the daemon closed its output"
        message: dict[str, Any] = json.loads(self.process.stdout.read(length))
        return message

    def until(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        while True:
            message = self.message()
            assert "error" not in message, message
            if predicate(message):
                return message
            if "method" in message:
                self.notifications.append(message)

    def event(self, *names: str) -> dict[str, Any]:
        """The first notification named one of `names`, among those already read or the next ones."""
        wanted = {f"dataSource/{name}" for name in names}
        for index, notification in enumerate(self.notifications):
            if notification["method"] in wanted:
                return self.notifications.pop(index)
        return self.until(lambda m: m.get("method") in wanted)

    def request(self, method: str, params: Any) -> Any:
        number = self.send(method, params)
        return self.until(lambda m: m.get("id") == number)["result"]

    def create(self, base: str, name: str) -> None:
        self.request("createSource", {"name": name, "kind": "remote", "identityKey": "id", "remoteConfiguration": {"baseURL": base},
                                      "apiPath": f"/list/{name}", "keyPath": "items", "cache": {"enabled": True}})

    def close(self) -> None:
        self.request("shutdown", None)
        body = b'{"jsonrpc":"2.0","method":"exit"}'
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.process.stdin.close()
        assert self.process.wait(timeout=30) == 0
        assert self.process.stderr is not None
        warnings = self.process.stderr.read().decode()
        assert "warning" not in warnings.lower() and "error" not in warnings.lower(), warnings


def cached_versions(cache_path: Path, base: str, names: list[str]) -> dict[str, set[int]]:
    """What a fresh daemon shows from the cache for each list before any response: the versions
    its rows carry (one, for a whole entry), or nothing when it has no entry."""
    daemon = Daemon(cache_path)
    shown: dict[str, set[int]] = {}
    for name in names:
        daemon.create(base, name)
        daemon.notifications.clear()
        number = daemon.send("fetchData", {"source": name})
        daemon.until(lambda m: m.get("id") == number)
        stale = [n for n in daemon.notifications if n["method"] == "dataSource/didChangeFreshness" and n["params"]["stale"]]
        if stale:
            rows = daemon.request("allObjects", {"source": name})
            shown[name] = {row["version"] for row in rows}
            assert len(rows) == 2000, f"{name}: {len(rows)} rows"
        daemon.event("finishedLoading", "failedWithError")
    daemon.close()
    return shown


def test_two_daemons_on_one_file_lose_no_entry(api: tuple[API, str], tmp_path: Path) -> None:
    state, base = api
    cache_path = tmp_path / "cache.sqlite"
    names = {0: [f"a{i}" for i in range(3)], 1: [f"b{i}" for i in range(3)]}
    daemons = {side: Daemon(cache_path) for side in names}
    for side, daemon in daemons.items():
        for name in names[side]:
            daemon.create(base, name)
    failures: list[str] = []

    def cycles(side: int) -> None:
        daemon = daemons[side]
        try:
            for cycle in range(200):
                name = names[side][cycle % 3]
                if cycle % 2 == 0:
                    state.bump(name)  # a new version: a 200 and a write
                result = daemon.request("fetchData", {"source": name, "wait": True})
                if result.get("outcome") != "finished":
                    failures.append(f"{name} cycle {cycle}: {result}")
        except Exception as error:  # a thread's failure must reach the test
            failures.append(repr(error))

    threads = [threading.Thread(target=cycles, args=(side,)) for side in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    for daemon in daemons.values():
        daemon.close()
    everything = names[0] + names[1]
    shown = cached_versions(cache_path, base, everything)
    assert shown == {name: {state.versions[name]} for name in everything}, "every entry holds its last version"


def test_kill_9_during_writes_leaves_a_whole_entry(api: tuple[API, str], tmp_path: Path) -> None:
    state, base = api
    cache_path = tmp_path / "cache.sqlite"
    rng = random.Random(14)
    versions_written: set[int] = set()
    for round in range(200):
        daemon = Daemon(cache_path)
        daemon.create(base, "k")
        versions_written.add(state.bump("k"))
        daemon.send("fetchData", {"source": "k", "wait": True})
        # Killed at a random moment: before, during or after the response and the write.
        try:
            daemon.process.wait(timeout=rng.uniform(0, 0.05))
        except subprocess.TimeoutExpired:
            pass
        daemon.process.send_signal(signal.SIGKILL)
        daemon.process.wait()
        if round % 20 == 19 or round == 199:
            shown = cached_versions(cache_path, base, ["k"])
            if "k" in shown:
                assert len(shown["k"]) == 1, f"round {round}: a mix of versions {shown['k']}"
                assert shown["k"] <= versions_written
    # The file still opens for a writer, and a complete load replaces the entry whole.
    final = Daemon(cache_path)
    final.create(base, "k")
    assert final.request("fetchData", {"source": "k", "wait": True})["outcome"] == "finished"
    final.close()
    assert cached_versions(cache_path, base, ["k"]) == {"k": {state.versions["k"]}}
