"""The JSON-RPC connection to a ``datasourced`` process, on top of pygls.

pygls's ``JsonRPCClient`` spawns the daemon, frames messages (``Content-Length``
headers) and matches responses to requests. Two of its defaults do not suit a
client whose payloads are arbitrary JSON documents, so this module adjusts them:

* the default converter turns every ``params`` and ``result`` object into nested
  namedtuples, which renames keys that are not Python identifiers
  (``"$placeholder"`` would become ``_0``); here they stay plain dicts and lists;
* the reader structures *every* nested object that has a ``"jsonrpc"`` member as
  if it were a message, so a row holding such a member would be mangled; here only
  the top-level object of a frame is structured.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

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


def plain_json_converter():
    """A cattrs converter that leaves ``params`` and ``result`` as plain JSON values."""
    converter = converters.get_converter()
    for message_type in (JsonRPCRequestMessage, JsonRPCResponseMessage, JsonRPCNotification):
        converter.register_structure_hook(message_type, lambda obj, cls: cls(**obj))
    return converter


class _TopLevelOnlyProtocol(JsonRPCProtocol):
    """Structures a frame's top-level object only (see the module docstring)."""

    def structure_message(self, data: dict[str, Any]):
        # Called by json.loads as an object_hook for every object, innermost first.
        return data

    def handle_message(self, message: Any):
        if isinstance(message, dict):
            message = super().structure_message(message)
        super().handle_message(message)


class DaemonConnection(JsonRPCClient):
    """pygls's client with plain-JSON payloads, stderr drained and exit observed.

    ``on_exit`` is called on the event loop with the process's exit status when the
    daemon exits, for whatever reason.
    """

    def __init__(self, on_exit: Callable[[int | None], None] | None = None, stderr_lines: int = 50):
        super().__init__(protocol_cls=_TopLevelOnlyProtocol, converter_factory=plain_json_converter)
        self._on_exit = on_exit
        self._stderr_tail: list[str] = []
        self._stderr_lines = stderr_lines

    @property
    def process(self) -> asyncio.subprocess.Process | None:
        return self._server

    @property
    def stderr_tail(self) -> list[str]:
        """The daemon's last lines of stderr (its logs), for error messages."""
        return list(self._stderr_tail)

    async def start(self, command: list[str]) -> None:
        """Spawns ``command`` and starts reading its stdout (messages) and stderr (logs)."""
        await self.start_io(command[0], *command[1:])
        assert self._server is not None and self._server.stderr is not None
        # pygls pipes the daemon's stderr; unread, a chatty daemon would block on it.
        self._async_tasks.append(asyncio.create_task(self._drain_stderr(self._server.stderr)))

    async def _drain_stderr(self, stderr: asyncio.StreamReader) -> None:
        while line := await stderr.readline():
            text = line.decode("utf-8", "replace").rstrip("\n")
            daemon_log.info("%s", text)
            self._stderr_tail.append(text)
            del self._stderr_tail[: -self._stderr_lines]

    async def server_exit(self, server: asyncio.subprocess.Process) -> None:
        if self._on_exit is not None:
            self._on_exit(server.returncode)
