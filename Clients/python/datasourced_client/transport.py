"""The JSON-RPC connection to a ``datasourced`` process, on top of pygls.

pygls's ``JsonRPCClient`` spawns the daemon, frames messages (``Content-Length``
headers) and matches responses to requests. Some of its defaults do not suit a client
whose payloads are arbitrary JSON documents and whose requests may time out, so this
module adjusts them:

* the default converter turns every ``params`` and ``result`` object into nested
  namedtuples, which renames keys that are not Python identifiers
  (``"$placeholder"`` would become ``_0``); here they stay plain dicts and lists;
* the reader structures *every* nested object that has a ``"jsonrpc"`` member as
  if it were a message, so a row holding such a member would be mangled; here only
  the top-level object of a frame is structured;
* an answer that arrives after its request was given up (a timeout) made pygls log
  ``Unable to handle message ... InvalidStateError: CANCELLED`` with a traceback; here it
  is dropped quietly, as the client asked for;
* notifications go to one function (``on_notification``), whatever their method: the
  client decides which it knows, from the daemon's ``initialize`` result.
* the daemon starts in a session of its own: Ctrl-C at a terminal interrupts the program
  alone, which then decides how the daemon ends (an action cancelled, a ``shutdown`` that
  lets it finish its cache file), instead of the signal killing it mid-way. It still
  ends when its stdin closes, the program gone.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, cast

from cattrs import Converter
from lsprotocol import converters
from pygls.client import JsonRPCClient
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCProtocol,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
)

__all__ = ["DaemonConnection", "plain_json_converter"]

daemon_log = logging.getLogger("datasourced.daemon")
log = logging.getLogger("datasourced.client")

NotificationHandler = Callable[[str, Any], None]
ExitHandler = Callable[[int | None], None]


def plain_json_converter() -> Converter:
    """A cattrs converter that leaves ``params`` and ``result`` as plain JSON values."""
    converter = converters.get_converter()
    for message_type in (JsonRPCRequestMessage, JsonRPCResponseMessage, JsonRPCNotification):
        converter.register_structure_hook(message_type, lambda obj, cls: cls(**obj))
    return converter


class _DaemonProtocol(JsonRPCProtocol):
    """pygls's protocol with the adjustments the module docstring lists."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        # Called by json.loads as an object_hook for every object, innermost first.
        return data

    def handle_message(self, message: Any) -> None:
        if isinstance(message, dict):
            message = super().structure_message(message)
        super().handle_message(message)

    def _handle_response(self, msg_id: Any, result: Any | None = None, error: Any | None = None) -> None:
        future = self._request_futures.get(msg_id)
        if future is not None and future.done():
            # Given up on (timed out, then cancelled): the answer has nobody to go to.
            del self._request_futures[msg_id]
            log.debug("dropped the late answer to request %r", msg_id)
            return
        super()._handle_response(msg_id, result, error)

    def _handle_notification(self, method_name: str, params: Any) -> None:
        cast(DaemonConnection, self._server).on_notification(method_name, params)


class DaemonConnection(JsonRPCClient):
    """pygls's client with plain-JSON payloads, stderr drained and exit observed.

    ``on_notification(method, params)`` is called on the event loop for every
    notification, in the order received; ``on_exit(status)`` when the daemon exits, for
    whatever reason.
    """

    def __init__(self, on_notification: NotificationHandler, on_exit: ExitHandler, stderr_lines: int = 50):
        super().__init__(protocol_cls=_DaemonProtocol, converter_factory=plain_json_converter)
        self.on_notification = on_notification
        self._on_exit = on_exit
        self._stderr_tail: list[str] = []
        self._stderr_lines = stderr_lines
        self._stderr_drained: asyncio.Task[None] | None = None

    @property
    def process(self) -> asyncio.subprocess.Process | None:
        """The daemon's process once started, else None."""
        return self._server

    @property
    def stderr_tail(self) -> list[str]:
        """The daemon's last lines of stderr (its logs), for error messages."""
        return list(self._stderr_tail)

    async def start(self, command: list[str]) -> None:
        """Spawns ``command`` and starts reading its stdout (messages) and stderr (logs)."""
        await self.start_io(command[0], *command[1:], start_new_session=True)
        assert self._server is not None and self._server.stderr is not None
        # pygls pipes the daemon's stderr; unread, a chatty daemon would block on it.
        self._stderr_drained = asyncio.create_task(self._drain_stderr(self._server.stderr))
        self._async_tasks.append(self._stderr_drained)

    async def _drain_stderr(self, stderr: asyncio.StreamReader) -> None:
        while line := await stderr.readline():
            text = line.decode("utf-8", "replace").rstrip("\n")
            daemon_log.info("%s", text)
            self._stderr_tail.append(text)
            del self._stderr_tail[: -self._stderr_lines]

    async def server_exit(self, server: asyncio.subprocess.Process) -> None:
        """pygls calls this when the daemon's process ends: reports its exit."""
        if self._stderr_drained is not None:
            # Its last words (why it exited) belong in the DaemonExited that follows.
            await asyncio.wait([self._stderr_drained], timeout=1)
        self._on_exit(server.returncode)
