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
from collections.abc import Callable, Coroutine, Iterator, Sequence
from typing import Any, TypeVar, Unpack

from .async_client import AsyncClient, AsyncDataSource
from .command import CacheOption, DaemonCommand
from .events import Event, EventCallback, Freshness
from .protocol import (
    JSON,
    Capabilities,
    FetchResult,
    IndexPath,
    LoadStates,
    NextPageResult,
    SourceConfig,
    SourceDescription,
    SourceKind,
    SourceSummary,
)
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


class Client:
    """One ``datasourced`` process and the connection to it (see :class:`AsyncClient`
    for the options: ``command``, ``timeout``, ``record``, ``change_values``, ``cache``,
    ``load_states``)."""

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

    # -- sources --------------------------------------------------------------------------

    def create_source(self, name: str, kind: SourceKind, **config: Unpack[SourceConfig]) -> DataSource:
        """Creates a source (``createSource``); ``config`` holds the kind's parameters as
        Protocol.md names them (``objects``, ``source``, ``sectioningKey``,
        ``remoteConfiguration``, ``apiPath``, ``keyPath``, ``pageSize``, ...)."""
        return DataSource(self, self._call(self._async.create_source(name, kind, **config)))

    def source(self, name: str) -> DataSource:
        """A handle on an existing source."""
        return DataSource(self, self._call(self._async.source(name)))

    def list_sources(self) -> list[SourceSummary]:
        """``[{name, kind}]``, oldest first."""
        return self._call(self._async.list_sources())

    def ping(self, delay_ms: int = 0) -> None:
        """``ping``: returns once the daemon answered (after ``delay_ms`` ms, if asked)."""
        self._call(self._async.ping(delay_ms))

    def allow_credential(self, env: str | None = None, file: str | None = None, *, origin: str) -> dict[str, Any]:
        """``allowCredential``: lets the daemon send the environment variable ``env`` (or the
        file ``file``, the path as the spec writes it) to ``origin`` (``scheme://host[:port]``),
        recorded for good in its allowances file. Returns ``{"env"|"file", "origin"
        (normalized), "path"}`` (the allowances file). A source whose load failed with kind
        ``credentialNotAllowed`` (:attr:`LoadFailed.credential_requests`) sends it once
        loaded again (``fetch_data``). Exactly one of ``env`` and ``file``."""
        return self._call(self._async.allow_credential(env, file, origin=origin))


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


class DataSource:
    """A handle on one named source of the daemon (the blocking face of
    :class:`AsyncDataSource`). It holds no rows: every read is a request (or two), so it
    is current, and costs a round trip; read once with :meth:`snapshot` to look at many
    rows."""

    def __init__(self, client: Client, source: AsyncDataSource):
        self.client = client
        self._async = source

    def __repr__(self) -> str:
        return f"DataSource({self.name!r}, kind={self.kind!r})"

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

    # -- reading (each call is a request) -------------------------------------------------

    def describe(self) -> SourceDescription:
        """``describeSource``: kind, counts, titles, ``isFetching``, ``revision`` (1.1) and
        the kind's state (paginated: ``currentPage``, ``hasMorePages``, ...)."""
        return self.client._call(self._async.describe())

    def number_of_sections(self) -> int:
        """How many sections the source has (``numberOfSections``)."""
        return self.client._call(self._async.number_of_sections())

    def number_of_objects(self, section: int = 0) -> int:
        """Rows in ``section``, placeholders included (see :meth:`count_objects` for data)."""
        return self.client._call(self._async.number_of_objects(section))

    def section_titles(self) -> list[JSON]:
        """Each section's title, in order (``sectionTitles``; ``""`` when unsectioned)."""
        return self.client._call(self._async.section_titles())

    def object_at(self, index_path: Sequence[int]) -> JSON:
        """The row at ``(section, item)`` (a placeholder is a row too)."""
        return self.client._call(self._async.object_at(index_path))

    def index_path_for(self, obj: JSON) -> IndexPath | None:
        """Where the first row with ``obj``'s identity is, or ``None``."""
        return self.client._call(self._async.index_path_for(obj))

    def objects_in_section(self, section: int = 0, start: int = 0, count: int | None = None) -> list[JSON]:
        """Rows of one section (placeholders included), from ``start``, ``count`` of them."""
        return self.client._call(self._async.objects_in_section(section, start, count))

    def snapshot(self) -> Snapshot:
        """Every row, section by section, as they were at one revision (two requests)."""
        return self.client._call(self._async.snapshot())

    def rows(self) -> Iterator[tuple[IndexPath, JSON]]:
        """Every row with its index path, placeholders included (one :meth:`snapshot`)."""
        return self.snapshot().rows()

    def objects(self) -> list[JSON]:
        """Every row that is data, placeholders left out (one :meth:`snapshot`)."""
        return self.client._call(self._async.objects())

    def count_objects(self) -> int:
        """How many rows are data, placeholders not counted. Paginated sources: one
        ``describeSource``; other kinds: a :meth:`snapshot` (every row is read)."""
        return self.client._call(self._async.count_objects())

    def has_more_pages(self) -> bool:
        """Paginated sources: whether another page may be fetched (one ``describeSource``)."""
        return self.client._call(self._async.has_more_pages())

    def is_fetching(self) -> bool:
        """Whether a load is in flight (one ``describeSource``)."""
        return self.client._call(self._async.is_fetching())

    def freshness(self) -> Freshness:
        """Whether the rows shown are unconfirmed rows from the persisted cache, and since
        when (protocol 1.2; one ``describeSource``). Never stale without ``cache``."""
        return self.client._call(self._async.freshness())

    # -- loading --------------------------------------------------------------------------

    def fetch_data(self, wait: bool = True, *, raise_on_error: bool = True,
                   timeout: float | None = None) -> FetchResult:
        """Loads the source (``fetchData``); with ``wait``, returns when the load ended.

        Raises :class:`LoadFailed` if it failed (unless ``raise_on_error`` is false; the
        result's ``outcome`` and ``error`` then tell).
        """
        return self.client._call(self._async.fetch_data(wait, raise_on_error=raise_on_error, timeout=timeout))

    def cancel_fetch(self) -> bool:
        """Ends a load in flight (its cycle fails with kind ``cancelled``); whether there was one."""
        return self.client._call(self._async.cancel_fetch())

    def fetch_next_page(self, wait: bool = True, *, timeout: float | None = None) -> NextPageResult:
        """Paginated sources: loads the next page. Returns ``{"started": bool, "reason"?}``;
        with ``wait``, returns once that page loaded and raises :class:`LoadFailed` if it
        failed (calling again retries the same page)."""
        return self.client._call(self._async.fetch_next_page(wait, timeout=timeout))

    def fetch_previous_page(self, wait: bool = True, *, timeout: float | None = None) -> NextPageResult:
        """Paginated sources (protocol 1.5): loads the page before the first one loaded, whose
        rows go in at the top. Returns ``{"started": bool, "reason"?}``; with ``wait``,
        returns once that page loaded and raises :class:`LoadFailed` if it failed."""
        return self.client._call(self._async.fetch_previous_page(wait, timeout=timeout))

    def retry(self, wait: bool = True, *, timeout: float | None = None) -> dict[str, Any]:
        """Paginated sources (protocol 1.5): asks again for the direction whose load failed,
        and only that one. Returns ``{"started": True, "direction"}`` or ``{"started": False,
        "reason"}``; with ``wait``, returns once that load ended and raises
        :class:`LoadFailed` if it failed again."""
        return self.client._call(self._async.retry(wait, timeout=timeout))

    def load_states(self) -> LoadStates | None:
        """Paginated sources (protocol 1.5): ``{"refresh", "prepend", "append"}``, each
        ``{"state": "idle" | "loading" | "endReached"}`` or ``{"state": "error", "error"}``;
        None for other kinds."""
        return self.client._call(self._async.load_states())

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

    def set_refresh_interval(self, seconds: float | None) -> SourceDescription:
        """Remote and paginated sources (protocol 1.2): revalidate the loaded pages every
        ``seconds`` (at least 1), a live list whose changes arrive as ``didChange`` events
        outside any load cycle (nothing when nothing changed); ``None`` stops it. Returns
        the description, whose ``refresh`` says when the next refresh is due."""
        return self.client._call(self._async.set_refresh_interval(seconds))

    def update_source(self, *, query_parameters: dict[str, Any] | None = None, api_path: str | None = None,
                      headers: dict[str, Any] | None = None, keep_rows: bool = True,
                      debounce_milliseconds: int = 0) -> SourceDescription:
        """Remote and paginated sources (protocol 1.4, ``updateSource``): change the query
        parameters, API path or headers in place, for search as you type. A load in flight
        ends cancelled; with ``keep_rows`` the rows stay, stale, until the new query's first
        page replaces them in one ``didChange``. ``debounce_milliseconds`` merges updates that
        come closer together than that: only the last one is loaded. Returns the description."""
        return self.client._call(self._async.update_source(
            query_parameters=query_parameters, api_path=api_path, headers=headers, keep_rows=keep_rows,
            debounce_milliseconds=debounce_milliseconds))

    def set_filter(self, **changes: Any) -> SourceDescription:
        """Filtered sources (protocol 1.4, ``setFilter``): ``filter=PREDICATE`` and/or
        ``match={"query": ..., "keyPaths": [...]}``; ``None`` removes one, an absent one stays.
        The rows change in one ``didChange``. Returns the description."""
        return self.client._call(self._async.set_filter(**changes))

    def will_display(self, index_path: Sequence[int]) -> bool:
        """Tells the daemon a row is shown (``willDisplayObjectAtIndexPath``); the last row of
        a paginated source loads the next page. Returns whether a fetch started."""
        return self.client._call(self._async.will_display(index_path))

    # -- editing (simple sources); each returns the new number of objects ---------------

    def replace_objects(self, objects: list[JSON]) -> int:
        """Simple sources: the objects become ``objects``; returns the new number of objects."""
        return self.client._call(self._async.replace_objects(objects))

    def insert_objects(self, objects: list[JSON], index: int | None = None) -> int:
        """Simple sources: inserts ``objects`` at ``index`` (default: the end); returns the new number of objects."""
        return self.client._call(self._async.insert_objects(objects, index))

    def remove_objects(self, index: int, count: int = 1) -> int:
        """Simple sources: removes ``count`` objects from ``index`` on; returns the new number of objects."""
        return self.client._call(self._async.remove_objects(index, count))

    def update_objects(self, objects: list[JSON]) -> int:
        """Simple sources: each object replaces the one with its identity; returns the number of objects."""
        return self.client._call(self._async.update_objects(objects))

    # -- events and lifetime ------------------------------------------------------------

    def on_event(self, callback: EventCallback) -> Callable[[], None]:
        """Calls ``callback(event)`` for this source's notifications; returns a remover."""
        return self.client.on_event(callback, self.name)

    def events(self, timeout: float | None = None) -> EventStream:
        """This source's notifications from now on (see :meth:`Client.events`)."""
        return self.client.events(timeout, source=self.name)

    def destroy(self, cascade: bool = False) -> list[str]:
        """``destroySource``; returns the names of every source removed."""
        return self.client._call(self._async.destroy(cascade))
