"""Exceptions raised by the client, and fetch errors put into words for people."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .protocol import FetchError

__all__ = ["DatasourcedError", "DatasourcedTimeout", "RPCError", "LoadFailed", "DaemonExited", "IncompatibleDaemon",
           "CredentialRequest", "credential_requests", "describe_fetch_error"]


def describe_fetch_error(error: FetchError | Mapping[str, Any]) -> str:
    """One line for people: the daemon's message, the URL, and the server's own words.

    ``HTTP status 500 from http://host/v1/books?page=1: "the database is on fire"``.
    The server's text is ``serverMessage`` (protocol 1.1); without it, the start of the
    response ``body`` when the daemon sent one.
    """
    message = str(error.get("message") or error.get("kind") or "unknown error")
    url = error.get("finalURL") or error.get("url")
    text = message if not url or str(url) in message else f"{message} from {url}"
    server_text = error.get("serverMessage")
    if not server_text and isinstance(error.get("body"), str):
        server_text = " ".join(str(error["body"]).split())[:200]
    if server_text and str(server_text) not in message:
        text += f": {server_text!r}" if isinstance(server_text, str) else f": {server_text}"
    retry = error.get("retryAfterSeconds")
    if retry is not None:
        text += f" (retry after {retry} s)"
    failures = error.get("failures")
    if isinstance(failures, list):
        text += "".join(f"; {f.get('source')}: {describe_fetch_error(f.get('error') or {})}"
                        for f in failures if isinstance(f, dict))
    return text


@dataclass(frozen=True)
class CredentialRequest:
    """A credential the daemon did not send because the user has not allowed it for that
    origin (a load failed with kind ``credentialNotAllowed``): ``env`` (an environment
    variable's name) or ``file`` (a path, as the spec wrote it), and ``origin``
    (``scheme://host[:port]``). :meth:`question` asks the person;
    ``allow_credential(**request.params())`` records their yes."""

    origin: str
    env: str | None = None
    file: str | None = None

    @classmethod
    def of(cls, error: Mapping[str, object]) -> CredentialRequest | None:
        """The request a ``credentialNotAllowed`` error makes; None for any other error."""
        credential = error.get("credential")
        origin = error.get("origin")
        if error.get("kind") != "credentialNotAllowed" or not isinstance(credential, Mapping) \
                or not isinstance(origin, str):
            return None
        env, file = credential.get("env"), credential.get("file")
        if isinstance(env, str) and env:
            return cls(origin, env=env)
        if isinstance(file, str) and file:
            return cls(origin, file=file)
        return None

    @property
    def what(self) -> str:
        """``the environment variable GITHUB_TOKEN`` or ``the file ~/.config/x/token``."""
        return f"the environment variable {self.env}" if self.env is not None else f"the file {self.file}"

    def question(self) -> str:
        """``Allow the daemon to send the environment variable GITHUB_TOKEN to https://api.github.com?``"""
        return f"Allow the daemon to send {self.what} to {self.origin}?"

    def params(self) -> dict[str, str]:
        """``allowCredential``'s params: ``{"env": NAME, "origin": ORIGIN}`` or ``{"file": PATH, ...}``."""
        if self.env is not None:
            return {"env": self.env, "origin": self.origin}
        return {"file": str(self.file), "origin": self.origin}

    def option(self) -> str:
        """The command line tool's ``--allow-credential`` value: ``GITHUB_TOKEN=https://api.github.com``."""
        return f"{self.env if self.env is not None else self.file}={self.origin}"


def credential_requests(error: Mapping[str, object]) -> list[CredentialRequest]:
    """Every credential a failed load needed and lacked: its own, and its children's
    (``failures`` of a multi source), each once."""
    found: list[CredentialRequest] = []
    request = CredentialRequest.of(error)
    if request is not None:
        found.append(request)
    failures = error.get("failures")
    if isinstance(failures, list):
        for failure in failures:
            if isinstance(failure, Mapping) and isinstance(failure.get("error"), Mapping):
                found += [r for r in credential_requests(failure["error"]) if r not in found]
    return found


class DatasourcedError(Exception):
    """Base class of every error this package raises."""


class DatasourcedTimeout(DatasourcedError, TimeoutError):
    """No answer (or no end of a load) came in time. Also a :class:`TimeoutError`, so code
    that caught the built-in one still does."""


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

    ``error`` is the structured error (see :class:`~datasourced_client.protocol.FetchError`):
    ``kind``, ``message``, and where there are some ``status``, ``url`` and (protocol 1.1)
    ``serverMessage``, ``body``, ``finalURL``, ``retryAfterSeconds``. ``str()`` shows the
    URL and the server's own text.
    """

    def __init__(self, source: str, error: FetchError):
        self.source = source
        self.error = error
        self.kind = str(error.get("kind", "unknown"))
        super().__init__(f"loading {source!r} failed ({self.kind}): {describe_fetch_error(error)}")

    @property
    def credential_requests(self) -> list[CredentialRequest]:
        """The credentials this load lacked an allowance for (kind ``credentialNotAllowed``,
        its own or a child's): allowing them (``allow_credential``) and loading again sends them."""
        return credential_requests(self.error)


class DaemonExited(DatasourcedError):
    """The daemon process ended while the client still needed it."""

    def __init__(self, returncode: int | None, stderr_tail: list[str]):
        detail = ("; its last log lines:\n  " + "\n  ".join(stderr_tail)) if stderr_tail else ""
        super().__init__(f"datasourced exited with status {returncode}{detail}")
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class IncompatibleDaemon(DatasourcedError):
    """The daemon speaks a protocol version this client does not understand."""
