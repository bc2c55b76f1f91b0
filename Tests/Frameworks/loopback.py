"""The plumbing that graphqlapi.py and postapis.py share: an HTTP server on an ephemeral
loopback port, in a thread, that records every request and hands it to `answer`.

A request is recorded as `Request(method, path, body, headers)`: `path` keeps its query
string, `body` is the parsed JSON body (None when there is none; the raw text when it is not
JSON), and `headers` has the header names in lower case.
A POST whose Content-Type is not application/json, or whose body is not JSON, is answered
415 or 400 with `{"error": "..."}` before `answer` sees it, as a JSON API would."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple


class Request(NamedTuple):
    method: str
    path: str
    body: Any
    headers: dict[str, str] = {}


class Answer(NamedTuple):
    status: int
    body: Any  # JSON-encoded unless it is already bytes
    headers: dict[str, str] = {}


class LoopbackServer:
    """Subclasses implement `answer(request)`; `requests` lists every request, in order."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                self._handle()

            def do_POST(self) -> None:
                self._handle()

            def _handle(self) -> None:
                text = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("utf-8", "replace")
                try:
                    body = json.loads(text) if text else None
                    parsed = True
                except ValueError:
                    body, parsed = text, False
                request = Request(self.command, self.path, body, {k.lower(): v for k, v in self.headers.items()})
                owner.requests.append(request)
                content_type = self.headers.get("Content-Type", "").split(";")[0].strip()
                if self.command == "POST" and content_type != "application/json":
                    answer = Answer(415, {"error": f"Content-Type must be application/json, not {content_type!r}"})
                elif not parsed:
                    answer = Answer(400, {"error": "the body is not JSON"})
                else:
                    answer = owner.answer(request)
                payload = answer.body if isinstance(answer.body, bytes) else json.dumps(answer.body).encode()
                self.send_response(answer.status)
                headers = {"Content-Type": "application/json", **answer.headers}
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def answer(self, request: Request) -> Answer:
        raise NotImplementedError

    def bodies(self) -> list[Any]:
        """The parsed body of each request, in order."""
        return [request.body for request in self.requests]

    def __enter__(self):  # type: ignore[no-untyped-def]
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
