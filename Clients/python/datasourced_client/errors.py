"""Exceptions raised by the client."""

from __future__ import annotations

from typing import Any

__all__ = ["DatasourcedError", "RPCError", "LoadFailed", "DaemonExited"]


class DatasourcedError(Exception):
    """Base class of every error this package raises."""


class RPCError(DatasourcedError):
    """The daemon answered a request with a JSON-RPC error.

    ``code`` is the JSON-RPC code (``-32602`` for invalid params, see Protocol.md),
    ``data`` the structured detail (for ``-32602``: ``field``, ``expected``, ``got``).
    """

    def __init__(self, method: str, code: int, message: str, data: Any = None):
        super().__init__(f"{method}: {message} (code {code})")
        self.method = method
        self.code = code
        self.message = message
        self.data = data


class LoadFailed(DatasourcedError):
    """A load cycle ended with ``dataSource/failedWithError``.

    ``error`` is the structured error: ``kind`` (``http``, ``timeout``, ``transport``,
    ``decode``, ``keyPath``, ``mapping``, ``cancelled``, ``tooLarge``, ``children``),
    ``message``, and ``status`` and ``url`` where there are some.
    """

    def __init__(self, source: str, error: dict[str, Any]):
        kind = error.get("kind", "unknown")
        message = error.get("message", "")
        super().__init__(f"loading {source!r} failed ({kind}): {message}")
        self.source = source
        self.error = error
        self.kind = kind


class DaemonExited(DatasourcedError):
    """The daemon process ended while the client still needed it."""

    def __init__(self, returncode: int | None, stderr_tail: list[str]):
        detail = ("; its last log lines:\n  " + "\n  ".join(stderr_tail)) if stderr_tail else ""
        super().__init__(f"datasourced exited with status {returncode}{detail}")
        self.returncode = returncode
        self.stderr_tail = stderr_tail
