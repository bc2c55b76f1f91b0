"""The pieces the cache tests share: a local HTTP API of lists, and a daemon driven over its
stdio (Content-Length framing, as Protocol.md describes)."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Any, Callable

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


class Daemon:
    def __init__(self, cache_path: Path, *arguments: str) -> None:
        self.process = subprocess.Popen([DAEMON, "serve", "--cache-path", str(cache_path), *arguments],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.next_id = 0
        self.notifications: list[dict[str, Any]] = []
        assert self.request("initialize", {})["protocolVersion"] == "1.10"

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

    def close(self, quiet: bool = True) -> str:
        """Shuts the daemon down; answers its stderr, which must hold no warning when `quiet`."""
        self.request("shutdown", None)
        body = b'{"jsonrpc":"2.0","method":"exit"}'
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.process.stdin.close()
        assert self.process.wait(timeout=30) == 0
        assert self.process.stderr is not None
        warnings = self.process.stderr.read().decode()
        if quiet:
            assert "warning" not in warnings.lower() and "error" not in warnings.lower(), warnings
        return warnings
