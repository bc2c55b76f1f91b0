"""A Python client for datasourced: Instant Cocoa-style data sources over JSON-RPC.

:class:`Client` (blocking) and :class:`AsyncClient` (asyncio) start a daemon and share
one API; :class:`DataSource` / :class:`AsyncDataSource` read and load one source.
"""

from ._version import package_version
from .actions import ActionRolledBack, ActionTimeout, ActionValueError, Settlement
from .async_client import AsyncClient, AsyncDataSource, AsyncEventStream
from .client import Client, DataSource, EventStream
from .command import CacheOption, DaemonCommand, daemon_command
from .errors import (CredentialRequest, DaemonExited, DatasourcedError, DatasourcedTimeout, IncompatibleDaemon,
                     LoadFailed, RPCError, credential_requests, describe_fetch_error)
from .events import Event, Freshness
from .protocol import IndexPath
from .snapshot import Section, Snapshot, is_placeholder

__all__ = [
    "Client", "DataSource", "EventStream",
    "AsyncClient", "AsyncDataSource", "AsyncEventStream",
    "Event", "Freshness", "Snapshot", "Section", "IndexPath", "is_placeholder",
    "CacheOption", "DaemonCommand", "daemon_command",
    "DatasourcedError", "DatasourcedTimeout", "RPCError", "LoadFailed", "DaemonExited", "IncompatibleDaemon",
    "CredentialRequest", "credential_requests", "describe_fetch_error",
    "Settlement", "ActionRolledBack", "ActionTimeout", "ActionValueError",
]
__version__ = package_version()
