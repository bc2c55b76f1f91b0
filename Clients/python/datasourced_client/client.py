"""A synchronous client for ``datasourced``: the :class:`AsyncClient`'s API, blocking.

Example::

    from datasourced_client import Client

    with Client.spawn() as client:
        books = client.create_source(
            "books", kind="paginated",
            remoteConfiguration={"baseURL": "http://127.0.0.1:8080"},
            apiPath="/v1/books", keyPath="books", pageSize=20)
        books.fetch_all_pages()
        for book in books.objects():
            print(book["title"])

The asyncio client runs on an event loop in a thread of its own; each method here hands
it the call and waits. Every method returns once the daemon has answered and every
notification sent before that answer has been delivered to the callbacks.
"""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import threading
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

from .actions import Settlement
from .async_client import AsyncClient, AsyncDataSource
from .command import CacheOption, DaemonCommand
from .events import Event, EventCallback
from .methods import _GeneratedClientMethods, _GeneratedSourceMethods
from .protocol import JSON, Capabilities, IndexPath, SourceDescription
from .snapshot import Snapshot

__all__ = ["Client", "DataSource", "EventStream"]

T = TypeVar("T")
log = logging.getLogger("datasourced.client")


class _Delivery:
    """Delivers events to the synchronous callbacks and streams, in order, on a thread
    of its own, so that a callback may call the (blocking) client."""

    def __init__(self) -> None:
        self._queue: queue.Queue[Event | None] = queue.Queue()
        self._callbacks: list[tuple[str | None, EventCallback]] = []
        self._streams: list[EventStream] = []
        self._lock = threading.Lock()
        self._delivered = threading.Condition(self._lock)
        self._delivered_seq = 0
        self._thread = threading.Thread(target=self._run, name="datasourced-events", daemon=True)
        self._thread.start()

    def post(self, event: Event | None) -> None:
        """Called on the event loop for each event; ``None`` ends delivery."""
        self._queue.put(event)

    @property
    def on_delivery_thread(self) -> bool:
        return threading.current_thread() is self._thread

    def add_callback(self, callback: EventCallback, source: str | None) -> Callable[[], None]:
        entry = (source, callback)
        with self._lock:
            self._callbacks.append(entry)

        def remove() -> None:
            with self._lock:
                if entry in self._callbacks:
                    self._callbacks.remove(entry)

        return remove

    def add_stream(self, stream: EventStream) -> None:
        with self._lock:
            self._streams.append(stream)

    def remove_stream(self, stream: EventStream) -> None:
        with self._lock:
            if stream in self._streams:
                self._streams.remove(stream)

    def wait_delivered(self, seq: int) -> None:
        """Blocks until every event up to ``seq`` has been delivered to the callbacks."""
        if self.on_delivery_thread:
            return  # a callback waiting for itself would never return
        with self._delivered:
            self._delivered.wait_for(lambda: self._delivered_seq >= seq or not self._thread.is_alive())

    def close(self) -> None:
        self._queue.put(None)
        if not self.on_delivery_thread:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while (event := self._queue.get()) is not None:
            with self._lock:
                callbacks = [cb for source, cb in self._callbacks if source in (None, event.source)]
                streams = list(self._streams)
            for callback in callbacks:
                try:
                    callback(event)
                except Exception:  # a faulty callback must not stop delivery to the others
                    log.exception("event callback %r failed on %s", callback, event)
            for stream in streams:
                stream._offer(event)
            with self._delivered:
                self._delivered_seq = event.seq
                self._delivered.notify_all()
        with self._lock:
            streams = list(self._streams)
        for stream in streams:
            stream.close()
        with self._delivered:
            self._delivered.notify_all()


class Client(_GeneratedClientMethods):
    """One ``datasourced`` process and the connection to it (see :class:`AsyncClient`
    for the options: ``command``, ``timeout``, ``record``, ``change_values``, ``cache``,
    ``load_states``). The methods that send one request each are generated
    (methods.py): each runs :class:`AsyncClient`'s on the client's loop."""

    def __init__(self, command: DaemonCommand | None = None, *, timeout: float = 30.0,
                 client_name: str = "datasourced-client (python)",
                 record: str | os.PathLike[str] | None = None,
                 change_values: bool | int = False, cache: CacheOption = None, load_states: bool = False):
        self._loop = asyncio.new_event_loop()
        self._loop_thread = threading.Thread(target=self._loop.run_forever, name="datasourced-rpc", daemon=True)
        self._delivery: _Delivery | None = None
        self._async = AsyncClient(command, timeout=timeout, client_name=client_name, record=record,
                                  change_values=change_values, cache=cache, load_states=load_states)

    # -- lifecycle ----------------------------------------------------------------------

    @classmethod
    def spawn(cls, command: DaemonCommand | None = None, *, timeout: float = 30.0,
              client_name: str = "datasourced-client (python)",
              record: str | os.PathLike[str] | None = None,
              change_values: bool | int = False, cache: CacheOption = None, load_states: bool = False) -> Client:
        """Starts the daemon and initializes the connection."""
        client = cls(command, timeout=timeout, client_name=client_name, record=record,
                     change_values=change_values, cache=cache, load_states=load_states)
        client.start()
        return client

    def start(self) -> None:
        """Spawns the daemon and sends ``initialize``."""
        if self._delivery is not None:
            return
        self._delivery = _Delivery()
        self._async.on_event(self._delivery.post)
        self._async._on_end.append(lambda: self._delivery.post(None) if self._delivery else None)
        self._loop_thread.start()
        try:
            self._call(self._async.start())
        except BaseException:
            self._stop()
            raise

    def close(self, timeout: float = 5.0) -> int | None:
        """Sends ``shutdown`` and ``exit``, waits for the daemon to end; returns its exit status."""
        if self._delivery is None or not self._loop.is_running():
            return self._async.returncode
        try:
            self._call(self._async.close(timeout))
        finally:
            self._stop()
        return self._async.returncode

    def wait_exit(self, timeout: float | None = None) -> int | None:
        """Waits until the daemon process has ended (for whatever reason); returns its
        exit status. Raises :class:`TimeoutError` if it is still running after ``timeout``."""
        return self._call(self._async.wait_exit(timeout))

    def _stop(self) -> None:
        if self._delivery is not None:
            self._delivery.close()
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._loop_thread.join(timeout=5)

    def __enter__(self) -> Client:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- what the daemon said -------------------------------------------------------------

    @property
    def command(self) -> list[str]:
        """The daemon's command line, arguments included."""
        return self._async.command

    @property
    def timeout(self) -> float:
        """Seconds each request waits for its answer."""
        return self._async.timeout

    @property
    def protocol_version(self) -> str:
        """The protocol version the daemon speaks (from ``initialize``)."""
        return self._async.protocol_version

    @property
    def server_info(self) -> dict[str, str]:
        """The daemon's ``serverInfo``: its name and version."""
        return self._async.server_info

    @property
    def capabilities(self) -> Capabilities:
        """The daemon's ``capabilities`` from ``initialize``."""
        return self._async.capabilities

    @property
    def notifications(self) -> frozenset[str]:
        """The notifications the daemon said it sends."""
        return self._async.notifications

    @property
    def returncode(self) -> int | None:
        """The daemon's exit status once it ended, else None."""
        return self._async.returncode

    @property
    def stderr_tail(self) -> list[str]:
        """The daemon's last lines of log output (stderr)."""
        return self._async.stderr_tail

    @property
    def pid(self) -> int | None:
        """The daemon's process id, or None before it started."""
        return self._async.pid

    # -- messages -------------------------------------------------------------------------

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Runs ``coroutine`` on the client's loop and waits for it, then for the delivery
        of every event received meanwhile. (Timeouts are the coroutine's own.)"""
        async def run() -> tuple[T, int]:
            result = await coroutine
            return result, self._async.events_received

        if not self._loop.is_running():
            coroutine.close()
            raise RuntimeError("the client is not running: use spawn() or start()")
        result, seq = asyncio.run_coroutine_threadsafe(run(), self._loop).result()
        if self._delivery is not None:
            self._delivery.wait_delivered(seq)
        return result

    def request(self, method: str, params: dict[str, Any] | None = None, *,
                timeout: float | None = None) -> Any:
        """Sends a request and returns its result; raises :class:`RPCError` on an error answer,
        :class:`TimeoutError` (after sending ``$/cancelRequest``) when none comes in time."""
        return self._call(self._async.request(method, params, timeout=timeout))

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Sends a notification."""
        async def send() -> None:
            self._async.notify(method, params)

        self._call(send())

    def on_event(self, callback: EventCallback, source: str | None = None) -> Callable[[], None]:
        """Calls ``callback(event)`` for every notification (of ``source`` only, if given).

        Callbacks run on one thread of their own, in the order the daemon sent the
        events; they may call the client. Returns a function that removes the callback.
        """
        if self._delivery is None:
            raise RuntimeError("the client is not started: use spawn() or start()")
        return self._delivery.add_callback(callback, source)

    def events(self, timeout: float | None = None, *, source: str | None = None) -> EventStream:
        """An iterator over the notifications received from this call on (of ``source``
        only, if given). It ends when no event comes within ``timeout`` seconds (``None``:
        wait for ever) or when the client closes. Use it as a context manager, or call
        ``close()``, to stop collecting."""
        if self._delivery is None:
            raise RuntimeError("the client is not started: use spawn() or start()")
        return EventStream(self._delivery, source, timeout)

    def _handle(self, source: AsyncDataSource) -> DataSource:
        """The blocking face of a handle the asyncio client gave."""
        return DataSource(self, source)


class EventStream:
    """Notifications as an iterator (see :meth:`Client.events`). After ``close()`` it
    still yields the events it had collected, then ends."""

    def __init__(self, delivery: _Delivery, source: str | None, timeout: float | None):
        self._delivery = delivery
        self._source = source
        self._timeout = timeout
        self._queue: queue.Queue[Event | None] = queue.Queue()
        self._closed = False
        self._finished = False
        delivery.add_stream(self)

    def _offer(self, event: Event) -> None:
        if not self._closed and (self._source is None or event.source == self._source):
            self._queue.put(event)

    def __iter__(self) -> EventStream:
        return self

    def __next__(self) -> Event:
        if self._finished:
            raise StopIteration
        try:
            event = self._queue.get(timeout=self._timeout)
        except queue.Empty:
            event = None
        if event is None:
            self._finished = True
            self.close()
            raise StopIteration
        return event

    def close(self) -> None:
        """Stops collecting: the events collected so far are still yielded, then it ends."""
        if not self._closed:
            self._closed = True
            self._queue.put(None)
        self._delivery.remove_stream(self)

    def __enter__(self) -> EventStream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class DataSource(_GeneratedSourceMethods):
    """A handle on one named source of the daemon (the blocking face of
    :class:`AsyncDataSource`). It holds no rows: every read is a request (or two), so it
    is current, and costs a round trip; read once with :meth:`snapshot` to look at many
    rows. The methods that send one request each are generated (methods.py)."""

    def __init__(self, client: Client, source: AsyncDataSource):
        self.client = client
        self._async = source

    def __repr__(self) -> str:
        return f"DataSource({self.name!r}, kind={self.kind!r})"

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self.client._call(coroutine)

    @property
    def name(self) -> str:
        """The source's name."""
        return self._async.name

    @property
    def kind(self) -> str:
        """The source's kind: ``simple``, ``sectioned``, ``multi``, ``remote`` or ``paginated``."""
        return self._async.kind

    @property
    def description(self) -> SourceDescription:
        """The description as last read (``createSource``, :meth:`describe`); no request."""
        return self._async.description

    # -- reading with several requests ----------------------------------------------------

    def snapshot(self) -> Snapshot:
        """Every row, section by section, as they were at one revision (two requests)."""
        return self._call(self._async.snapshot())

    def rows(self) -> Iterator[tuple[IndexPath, JSON]]:
        """Every row with its index path, placeholders included (one :meth:`snapshot`)."""
        return self.snapshot().rows()

    def objects(self) -> list[JSON]:
        """Every row that is data, placeholders left out (one :meth:`snapshot`)."""
        return self._call(self._async.objects())

    def count_objects(self) -> int:
        """How many rows are data, placeholders not counted. Paginated sources: one
        ``describeSource``; other kinds: a :meth:`snapshot` (every row is read)."""
        return self._call(self._async.count_objects())

    # -- loading with several requests ----------------------------------------------------

    def fetch_all_pages(self, on_page: Callable[[int, DataSource], object] | None = None,
                        max_pages: int | None = None) -> int:
        """Paginated sources: loads from page one, then every next page (at most
        ``max_pages`` in all); returns the number of pages loaded. ``on_page(n, source)``
        follows each page. A source that pages without end is stopped by the daemon's
        loop guard (:class:`LoadFailed`, kind ``loop``) or by ``max_pages``."""
        self.fetch_data(wait=True)
        pages = 1
        if on_page:
            on_page(pages, self)
        while (max_pages is None or pages < max_pages) and self.has_more_pages():
            if not self.fetch_next_page(wait=True).get("started"):
                break
            pages += 1
            if on_page:
                on_page(pages, self)
        return pages

    # -- actions (protocol 1.9) -----------------------------------------------------------

    def act(self, action: str, identity: JSON | None = None, values: dict[str, Any] | None = None, *,
            wait: bool = True, stop_at_queued: bool = False, timeout: float | None = None,
            raise_on_error: bool = False) -> Settlement:
        """Performs one of the source's actions on a row and returns how it settled
        (``committed`` or ``rolledBack``, waiting through ``queued`` unless
        ``stop_at_queued``; ``wait=False``: ``pending`` at once). See :meth:`AsyncDataSource.act`.
        The optimistic change's ``didChange``, and the settlement's events, have been given
        to the callbacks when it returns."""
        return self._call(self._async.act(action, identity, values, wait=wait, stop_at_queued=stop_at_queued,
                                          timeout=timeout, raise_on_error=raise_on_error))

    def pending_mutations(self) -> list[dict[str, JSON]]:
        """The mutations called and not yet settled, in the order made (one ``describeSource``)."""
        return self._call(self._async.pending_mutations())

    def rows_with_pending(self, section: int = 0, start: int = 0,
                          count: int | None = None) -> list[tuple[JSON, list[str]]]:
        """A slice of a section, each row with the IDs of its pending mutations, oldest first."""
        return self._call(self._async.rows_with_pending(section, start, count))

    # -- events ---------------------------------------------------------------------------

    def on_event(self, callback: EventCallback) -> Callable[[], None]:
        """Calls ``callback(event)`` for this source's notifications; returns a remover."""
        return self.client.on_event(callback, self.name)

    def events(self, timeout: float | None = None) -> EventStream:
        """This source's notifications from now on (see :meth:`Client.events`)."""
        return self.client.events(timeout, source=self.name)
