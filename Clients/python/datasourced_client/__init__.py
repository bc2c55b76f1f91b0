"""A Python client for datasourced: Instant Cocoa-style data sources over JSON-RPC.

See :class:`Client` to start a daemon and :class:`DataSource` to read and load a source.
"""

from .client import NOTIFICATIONS, Client, DataSource, IndexPath, is_placeholder
from .errors import DaemonExited, DatasourcedError, LoadFailed, RPCError
from .events import Event

__all__ = [
    "Client", "DataSource", "Event", "IndexPath", "NOTIFICATIONS", "is_placeholder",
    "DatasourcedError", "RPCError", "LoadFailed", "DaemonExited",
]
__version__ = "0.1.0"
