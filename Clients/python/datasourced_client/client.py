"""A synchronous client for ``datasourced``: spawn it, create sources, read and load them.

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

Every method blocks until the daemon has answered and every notification sent before
that answer has been delivered to the callbacks (see :meth:`Client.on_event`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import os
import queue
import threading
from collections.abc import Iterator, Sequence
from typing import Any, Callable

from pygls.exceptions import JsonRpcException

from .errors import DaemonExited, LoadFailed, RPCError
from .events import Event, EventDispatcher
from .transport import DaemonConnection

__all__ = ["Client", "DataSource", "EventStream", "IndexPath", "is_placeholder", "NOTIFICATIONS"]

IndexPath = tuple[int, int]

#: The notifications the daemon sends, each with ``params.source``.
NOTIFICATIONS = (
    "dataSource/willLoadData",
    "dataSource/didPartiallyLoad",
    "dataSource/finishedLoading",
    "dataSource/failedWithError",
    "dataSource/didChange",
)

_VERSION = "0.1.0"


def is_placeholder(row: Any) -> bool:
    """Whether a row is a placeholder (``{"$placeholder": "loading" | "noResults" | "error"}``)."""
    return isinstance(row, dict) and "$placeholder" in row


def _index_path(value: Sequence[int]) -> IndexPath:
    section, item = value
    return (int(section), int(item))


class Client:
    """One ``datasourced`` process and the connection to it.

    ``command`` is the daemon's command line (default: ``$DATASOURCED`` or
    ``datasourced`` on the PATH). ``timeout`` bounds every request in seconds; a request
    that times out is cancelled with ``$/cancelRequest`` and raises :class:`TimeoutError`.
    """

    def __init__(self, command: Sequence[str] | None = None, *, timeout: float = 30.0,
                 client_name: str = "datasourced-client (python)"):
        self.command = list(command) if command else [os.environ.get("DATASOURCED", "datasourced")]
        self.timeout = timeout
        self.client_name = client_name
        self.server_info: dict[str, Any] = {}
        self.capabilities: dict[str, Any] = {}
        self.returncode: int | None = None
        self._ids = itertools.count(1)
        self._exited = threading.Event()
        self._closed = False
        self._events = EventDispatcher()
        self._loop = asyncio.new_event_loop()
        self._loop_thread = threading.Thread(target=self._loop.run_forever, name="datasourced-rpc", daemon=True)
        self._connection = DaemonConnection(on_exit=self._daemon_exited)
        for method in NOTIFICATIONS:
            self._connection.feature(method)(self._notification_handler(method))

    # -- lifecycle --------------------------------------------------------------------

    @classmethod
    def spawn(cls, command: Sequence[str] | None = None, **options: Any) -> Client:
        """Starts the daemon and initializes the connection."""
        client = cls(command, **options)
        client.start()
        return client

    def start(self) -> None:
        """Spawns the daemon and sends ``initialize``."""
        self._loop_thread.start()
        try:
            self._run(self._connection.start(self.command), self.timeout)
        except FileNotFoundError as error:
            self._stop_loop()
            raise FileNotFoundError(
                f"cannot start the daemon {self.command[0]!r}: {error.strerror}; "
                "build it (swift build) and pass its path, or set $DATASOURCED") from error
        result = self.request("initialize", {"clientInfo": {"name": self.client_name, "version": _VERSION}})
        self.server_info = result.get("serverInfo", {})
        self.capabilities = result.get("capabilities", {})

    def close(self, timeout: float = 5.0) -> int | None:
        """Sends ``shutdown`` and ``exit``, waits for the daemon to end; returns its exit status."""
        if self._closed:
            return self.returncode
        self._closed = True
        if not self._exited.is_set():
            try:
                self.request("shutdown", timeout=timeout)
                self.notify("exit")
            except (DaemonExited, TimeoutError, RPCError):
                pass
            if not self._exited.wait(timeout) and self._connection.process is not None:
                self._connection.process.kill()
                self._exited.wait(timeout)
        try:
            self._run(self._connection.stop(), timeout)
        except (TimeoutError, concurrent.futures.TimeoutError):
            pass
        self._stop_loop()
        self._events.close()
        return self.returncode

    def __enter__(self) -> Client:
        if not self._loop_thread.is_alive():
            self.start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    @property
    def stderr_tail(self) -> list[str]:
        """The daemon's last lines of log output (stderr)."""
        return self._connection.stderr_tail

    # -- messages ---------------------------------------------------------------------

    def request(self, method: str, params: dict[str, Any] | None = None, *,
                timeout: float | None = None) -> Any:
        """Sends a request and returns its result; raises :class:`RPCError` on an error answer."""
        if self._exited.is_set():
            raise DaemonExited(self.returncode, self.stderr_tail)
        timeout = self.timeout if timeout is None else timeout
        msg_id = next(self._ids)
        protocol = self._connection.protocol

        async def send() -> tuple[Any, int]:
            try:
                result = await protocol.send_request_async(method, params if params is not None else {}, msg_id=msg_id)
            except JsonRpcException as error:
                raise RPCError(method, error.code, error.message, error.data) from None
            # Every notification sent before this answer has been received by now.
            return result, self._events.received_seq

        future = asyncio.run_coroutine_threadsafe(send(), self._loop)
        try:
            result, seq = future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            self._loop.call_soon_threadsafe(protocol.notify, "$/cancelRequest", {"id": msg_id})
            raise TimeoutError(f"{method}: no answer from datasourced within {timeout} s") from None
        except RuntimeError as error:  # pygls fails pending requests this way when the daemon exits
            if self._exited.is_set():
                raise DaemonExited(self.returncode, self.stderr_tail) from error
            raise
        self._events.wait_delivered(seq, timeout)
        return result

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Sends a notification."""
        if self._exited.is_set():
            raise DaemonExited(self.returncode, self.stderr_tail)
        # An absent params must not go out as "params": null, which JSON-RPC forbids.
        self._loop.call_soon_threadsafe(self._connection.protocol.notify, method, params if params is not None else {})

    def on_event(self, callback: Callable[[Event], None], source: str | None = None) -> Callable[[], None]:
        """Calls ``callback(event)`` for every notification (of ``source`` only, if given).

        Callbacks run on one thread of their own, in the order the daemon sent the
        events; they may call the client. Returns a function that removes the callback.
        """
        return self._events.add_callback(callback, source)

    def events(self, timeout: float | None = None) -> EventStream:
        """An iterator over the notifications received from this call on.

        It ends when no event comes within ``timeout`` seconds (``None``: wait for
        ever) or when the client closes. Use it as a context manager, or call
        ``close()``, to stop collecting.
        """
        return EventStream(self._events, timeout)

    # -- sources ------------------------------------------------------------------------

    def create_source(self, name: str, kind: str, **config: Any) -> DataSource:
        """Creates a source (``createSource``); ``config`` holds the kind's parameters as
        Protocol.md names them (``objects``, ``source``, ``sectioningKey``,
        ``remoteConfiguration``, ``apiPath``, ``keyPath``, ``pageSize``, ...)."""
        description = self.request("createSource", {"name": name, "kind": kind, **config})
        return DataSource(self, name, description)

    def source(self, name: str) -> DataSource:
        """A handle on an existing source."""
        return DataSource(self, name, self.request("describeSource", {"source": name}))

    def list_sources(self) -> list[dict[str, Any]]:
        """``[{name, kind}]``, oldest first."""
        return self.request("listSources")

    def ping(self, delay_ms: int = 0) -> None:
        self.request("ping", {"delayMilliseconds": delay_ms})

    # -- internals ------------------------------------------------------------------------

    def _notification_handler(self, method: str) -> Callable[[Any], None]:
        kind = method.split("/", 1)[1]

        def handle(params: Any) -> None:
            self._events.post(kind, params if isinstance(params, dict) else {})

        return handle

    def _daemon_exited(self, returncode: int | None) -> None:
        self.returncode = returncode
        self._exited.set()

    def _run(self, coroutine: Any, timeout: float | None) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    def _stop_loop(self) -> None:
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._loop_thread.join(timeout=5)

    def _wait_for_load(self, source: str, method: str, params: dict[str, Any],
                       started: Callable[[Any], bool], timeout: float | None) -> Any:
        """Sends a request that starts a load and waits for that load's final event."""
        if self._events.on_dispatch_thread:
            raise RuntimeError(f"{method}(wait=True) cannot wait inside an event callback: "
                               "the events it waits for are delivered on this thread")
        waiter = self._events.expect_final(source)
        try:
            result = self.request(method, params)
            if not started(result):
                return result
            if not waiter.done.wait(self.timeout if timeout is None else timeout):
                raise TimeoutError(f"{method}: {source!r} did not finish loading in time")
            if waiter.event is None:
                raise DaemonExited(self.returncode, self.stderr_tail)
            if waiter.event.kind == "failedWithError":
                raise LoadFailed(source, waiter.event.error or {})
            return result
        finally:
            self._events.forget(waiter)


class EventStream:
    """Notifications as an iterator (see :meth:`Client.events`)."""

    def __init__(self, dispatcher: EventDispatcher, timeout: float | None):
        self._dispatcher = dispatcher
        self._queue = dispatcher.subscribe()
        self._timeout = timeout

    def __iter__(self) -> EventStream:
        return self

    def __next__(self) -> Event:
        try:
            event = self._queue.get(timeout=self._timeout)
        except queue.Empty:
            event = None
        if event is None:
            self.close()
            raise StopIteration
        return event

    def close(self) -> None:
        self._dispatcher.unsubscribe(self._queue)

    def __enter__(self) -> EventStream:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


class DataSource:
    """A handle on one named source of the daemon. It holds no rows itself: every
    read asks the daemon, so it is always current."""

    def __init__(self, client: Client, name: str, description: dict[str, Any]):
        self.client = client
        self.name = name
        self.kind: str = description.get("kind", "")
        self.description = description

    def __repr__(self) -> str:
        return f"DataSource({self.name!r}, kind={self.kind!r})"

    def _request(self, method: str, **params: Any) -> Any:
        return self.client.request(method, {"source": self.name, **params})

    # -- reading --------------------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """``describeSource``: kind, counts, titles, ``isFetching`` and the kind's state."""
        self.description = self._request("describeSource")
        return self.description

    @property
    def number_of_sections(self) -> int:
        return self._request("numberOfSections")

    def number_of_objects(self, section: int = 0) -> int:
        """Rows in ``section`` (placeholders included)."""
        return self._request("numberOfObjectsInSection", section=section)

    @property
    def section_titles(self) -> list[Any]:
        return self._request("sectionTitles")

    def object_at(self, index_path: Sequence[int]) -> Any:
        """The row at ``(section, item)``."""
        return self._request("objectAtIndexPath", indexPath=list(index_path))

    def index_path_for(self, obj: Any) -> IndexPath | None:
        """Where the first row with ``obj``'s identity is, or ``None``."""
        found = self._request("indexPathForObject", object=obj)
        return None if found is None else _index_path(found)

    def objects_in_section(self, section: int = 0, start: int = 0, count: int | None = None) -> list[Any]:
        params: dict[str, Any] = {"section": section, "start": start}
        if count is not None:
            params["count"] = count
        return self._request("objectsInSection", **params)["objects"]

    def rows(self, chunk: int = 1000) -> Iterator[tuple[IndexPath, Any]]:
        """Every row with its index path, section after section, fetched ``chunk`` at a time."""
        for section in range(self.number_of_sections):
            start = 0
            while True:
                answer = self._request("objectsInSection", section=section, start=start, count=chunk)
                for offset, row in enumerate(answer["objects"]):
                    yield (section, start + offset), row
                start += len(answer["objects"])
                if not answer["objects"] or start >= answer["numberOfObjects"]:
                    break

    def __iter__(self) -> Iterator[Any]:
        """Every row (placeholders included), section after section."""
        return (row for _, row in self.rows())

    def __len__(self) -> int:
        return sum(self.describe().get("counts", []))

    def objects(self) -> list[Any]:
        """Every row that is not a placeholder."""
        return [row for row in self if not is_placeholder(row)]

    # -- loading --------------------------------------------------------------------------

    @property
    def is_fetching(self) -> bool:
        return bool(self.describe().get("isFetching"))

    @property
    def has_more_pages(self) -> bool:
        """Paginated sources: whether another page may be fetched."""
        return bool(self.describe().get("hasMorePages"))

    def fetch_data(self, wait: bool = True, *, raise_on_error: bool = True,
                   timeout: float | None = None) -> dict[str, Any]:
        """Loads the source (``fetchData``); with ``wait``, returns when the load ended.

        Raises :class:`LoadFailed` if it failed (unless ``raise_on_error`` is false; the
        result's ``outcome`` and ``error`` then tell).
        """
        if not wait:
            return self._request("fetchData")
        result = self.client.request("fetchData", {"source": self.name, "wait": True}, timeout=timeout)
        if raise_on_error and result.get("outcome") == "failed":
            raise LoadFailed(self.name, result.get("error") or {})
        return result

    def cancel_fetch(self) -> bool:
        """Ends a load in flight (its cycle fails with kind ``cancelled``); whether there was one."""
        return bool(self._request("cancelFetch").get("cancelled"))

    def fetch_next_page(self, wait: bool = True, *, timeout: float | None = None) -> dict[str, Any]:
        """Paginated sources: loads the next page. Returns ``{"started": bool, "reason"?}``;
        with ``wait``, returns once that page loaded and raises :class:`LoadFailed` if it
        failed (calling again retries the same page)."""
        params = {"source": self.name}
        if not wait:
            return self.client.request("fetchNextPage", params)
        return self.client._wait_for_load(self.name, "fetchNextPage", params,
                                          lambda result: bool(result.get("started")), timeout)

    def fetch_all_pages(self, on_page: Callable[[int, DataSource], None] | None = None,
                        max_pages: int | None = None) -> int:
        """Paginated sources: loads from page one, then every next page; returns the
        number of pages loaded. ``on_page(n, source)`` is called after each."""
        self.fetch_data(wait=True)
        pages = 1
        if on_page:
            on_page(pages, self)
        while (max_pages is None or pages < max_pages) and self.has_more_pages:
            if not self.fetch_next_page(wait=True).get("started"):
                break
            pages += 1
            if on_page:
                on_page(pages, self)
        return pages

    def will_display(self, index_path: Sequence[int]) -> bool:
        """Tells the daemon a row is shown (``willDisplayObjectAtIndexPath``); the last row of
        a paginated source loads the next page. Returns whether a fetch started."""
        return bool(self._request("willDisplayObjectAtIndexPath", indexPath=list(index_path)).get("fetchStarted"))

    # -- editing (simple sources) --------------------------------------------------------

    def replace_objects(self, objects: list[Any]) -> int:
        return self._request("replaceObjects", objects=objects)

    def insert_objects(self, objects: list[Any], index: int | None = None) -> int:
        params: dict[str, Any] = {"objects": objects}
        if index is not None:
            params["index"] = index
        return self._request("insertObjects", **params)

    def remove_objects(self, index: int, count: int = 1) -> int:
        return self._request("removeObjects", index=index, count=count)

    def update_objects(self, objects: list[Any]) -> int:
        return self._request("updateObjects", objects=objects)

    # -- events and lifetime ------------------------------------------------------------

    def on_event(self, callback: Callable[[Event], None]) -> Callable[[], None]:
        """Calls ``callback(event)`` for this source's notifications; returns a remover."""
        return self.client.on_event(callback, self.name)

    def destroy(self, cascade: bool = False) -> None:
        self.client.request("destroySource", {"name": self.name, "cascade": cascade})
