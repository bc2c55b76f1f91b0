"""An asyncio client for ``datasourced``: spawn it, create sources, read and load them.

Example::

    import asyncio
    from datasourced_client import AsyncClient

    async def main() -> None:
        async with AsyncClient.spawn() as client:
            books = await client.create_source(
                "books", kind="paginated",
                remoteConfiguration={"baseURL": "http://127.0.0.1:8080"},
                apiPath="/v1/books", keyPath="books", pageSize=20)
            async with books.events() as events:
                await books.fetch_data(wait=False)
                async for event in events:
                    print(event.kind)
                    if event.is_final:
                        break
            print(await books.objects())

    asyncio.run(main())

Every coroutine returns once the daemon has answered; the notifications it sent before
that answer have been passed to the callbacks (:meth:`AsyncClient.on_event`) by then.
Every read is one or two requests to the daemon: the client keeps no rows of its own.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Sequence
from typing import Any, cast

from pygls.exceptions import JsonRpcException

from ._version import package_version
from .actions import SETTLE_EVENT, ActionRolledBack, ActionTimeout, Settlement, settlement_of
from .command import CacheOption, DaemonCommand, daemon_command
from .errors import DaemonExited, DatasourcedTimeout, IncompatibleDaemon, LoadFailed, RPCError
from .events import Event, EventCallback
from .methods import _GeneratedAsyncClientMethods, _GeneratedAsyncSourceMethods
from .protocol import (
    JSON,
    Capabilities,
    FetchError,
    IndexPath,
    InitializeResult,
    NextPageResult,
    NotificationParams,
    SourceDescription,
)
from .snapshot import Section, Snapshot
from .transport import DaemonConnection

__all__ = ["AsyncClient", "AsyncDataSource", "AsyncEventStream", "Spawning", "SUPPORTED_PROTOCOL_MAJOR"]

log = logging.getLogger("datasourced.client")

#: The protocol's major version this client speaks; minor versions only add (Protocol.md).
SUPPORTED_PROTOCOL_MAJOR = 1
#: How often a snapshot is read again when the source changed between its two requests.
SNAPSHOT_ATTEMPTS = 5


class Spawning:
    """What :meth:`AsyncClient.spawn` returns: awaited, the started client; in ``async
    with``, the started client, closed when the block ends."""

    def __init__(self, client: AsyncClient):
        self.client = client

    async def _started(self) -> AsyncClient:
        await self.client.start()
        return self.client

    def __await__(self) -> Generator[Any, None, AsyncClient]:
        return self._started().__await__()

    async def __aenter__(self) -> AsyncClient:
        return await self._started()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.client.close()


class AsyncClient(_GeneratedAsyncClientMethods):
    """One ``datasourced`` process and the connection to it, for asyncio code.

    ``command``: the daemon, as a path (``str`` or ``Path``) or a command line (a list);
    default ``$DATASOURCED`` (split as a shell would, so it may carry arguments) or
    ``datasourced`` on the PATH. ``timeout`` bounds every request in seconds; a request
    that times out is cancelled with ``$/cancelRequest`` and raises :class:`DatasourcedTimeout`
    (a :class:`TimeoutError` too).
    ``record``: a file the daemon records the session to (``--record PATH``), a
    transcript that ``datasourced replay PATH`` replays as a test. ``change_values``:
    ask that each ``didChange`` carry the inserted and updated rows (protocol 1.1;
    ``True``, or the largest size in bytes), read through :attr:`Event.values`.
    ``cache``: the daemon's persisted page cache (protocol 1.2), for sources created
    with ``cache={"enabled": True}``: a file (``--cache-path PATH``), ``False`` for none
    (``--no-cache``), ``None`` for the daemon's default file. ``load_states``: ask for
    ``dataSource/didChangeLoadState`` events (protocol 1.5; kind ``didChangeLoadState``).

    The methods that send one request each (:meth:`create_source`, :meth:`source`,
    :meth:`list_sources`, :meth:`ping`, :meth:`allow_credential`) are generated from
    Protocol/openrpc.json (methods.py); this class is the session they use.
    """

    def __init__(self, command: DaemonCommand | None = None, *, timeout: float = 30.0,
                 client_name: str = "datasourced-client (python)",
                 record: str | os.PathLike[str] | None = None,
                 change_values: bool | int = False, cache: CacheOption = None, load_states: bool = False):
        self.command = daemon_command(command, record=record, cache=cache)
        self.load_states = load_states
        self.timeout = timeout
        self.client_name = client_name
        self.change_values = change_values
        #: From the ``initialize`` result: ``protocolVersion``, ``serverInfo``, ``capabilities``.
        self.protocol_version = ""
        self.server_info: dict[str, str] = {}
        self.capabilities: Capabilities = {}
        #: The notifications the daemon said it sends (``capabilities.notifications``).
        self.notifications: frozenset[str] = frozenset()
        self.returncode: int | None = None
        #: How many notifications have been received (and passed to the callbacks).
        self.events_received = 0
        self._ids = itertools.count(1)
        self._started = False
        self._closed = False
        self._exited = asyncio.Event()
        self._callbacks: list[tuple[str | None, EventCallback]] = []
        self._streams: list[AsyncEventStream] = []
        self._final_waiters: list[tuple[str, asyncio.Future[Event]]] = []
        #: Called once event delivery ends (the daemon exited, or the client closed).
        self._on_end: list[Callable[[], object]] = []
        self._connection = DaemonConnection(on_notification=self._on_notification, on_exit=self._on_exit)
        #: Requests sent for their effect alone (a cancelFetch for a wait given up): kept
        #: referenced until they end, as the loop keeps only weak references to tasks.
        self._background: set[asyncio.Task[Any]] = set()

    # -- lifecycle ----------------------------------------------------------------------

    @classmethod
    def spawn(cls, command: DaemonCommand | None = None, *, timeout: float = 30.0,
              client_name: str = "datasourced-client (python)",
              record: str | os.PathLike[str] | None = None,
              change_values: bool | int = False, cache: CacheOption = None, load_states: bool = False) -> Spawning:
        """Starts the daemon and initializes the connection (see the class for the options):
        ``client = await AsyncClient.spawn(...)``, or ``async with AsyncClient.spawn(...) as
        client:``, which closes it at the end."""
        return Spawning(cls(command, timeout=timeout, client_name=client_name, record=record,
                            change_values=change_values, cache=cache, load_states=load_states))

    async def start(self) -> None:
        """Spawns the daemon and sends ``initialize``."""
        if self._started:
            return
        self._started = True
        try:
            await self._connection.start(self.command)
        except OSError as error:  # not found, a directory, not executable
            self._closed = True
            reason = "is a directory" if os.path.isdir(self.command[0]) else error.strerror
            raise type(error)(
                f"cannot start the daemon {self.command[0]!r}: {reason}; "
                "build it (swift build) and pass its path, or set $DATASOURCED") from error
        try:
            self._initialized(cast(InitializeResult, await self.request("initialize", self._initialize_params())))
        except BaseException:
            await self.close()
            raise

    def _initialize_params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"clientInfo": {"name": self.client_name, "version": package_version()}}
        capabilities: dict[str, Any] = {}
        if self.change_values:
            capabilities["changeValues"] = (self.change_values if self.change_values is True
                                            else {"maxBytes": int(self.change_values)})
        if self.load_states:
            capabilities["loadStates"] = True
        if capabilities:
            params["capabilities"] = capabilities
        return params

    def _initialized(self, result: InitializeResult) -> None:
        self.protocol_version = str(result.get("protocolVersion", ""))
        self.server_info = dict(result.get("serverInfo", {}))
        self.capabilities = result.get("capabilities", {})
        major = self.protocol_version.split(".", 1)[0]
        if major != str(SUPPORTED_PROTOCOL_MAJOR):
            raise IncompatibleDaemon(
                f"{self.command[0]} speaks protocol {self.protocol_version or '(none given)'}; "
                f"this client speaks {SUPPORTED_PROTOCOL_MAJOR}.x")
        self.notifications = frozenset(self.capabilities.get("notifications", []))

    async def close(self, timeout: float = 5.0) -> int | None:
        """Sends ``shutdown`` and ``exit``, waits for the daemon to end; returns its exit status."""
        if self._closed:
            return self.returncode
        self._closed = True
        process = self._connection.process
        if process is not None and not self._exited.is_set():
            try:
                await self.request("shutdown", timeout=timeout)
                self.notify("exit")
            except (DaemonExited, TimeoutError, RPCError):
                pass
            try:
                await asyncio.wait_for(self._exited.wait(), timeout)
            except TimeoutError:
                process.kill()
                try:
                    await asyncio.wait_for(self._exited.wait(), timeout)
                except TimeoutError:
                    # Closing goes on (often on the way out of a Ctrl-C): an error here
                    # would take the place of the exception that is leaving.
                    log.warning("datasourced (pid %s) had not exited %s s after SIGKILL", process.pid, timeout)
        try:
            await asyncio.wait_for(self._connection.stop(), timeout)  # type: ignore[no-untyped-call]
        except TimeoutError:
            log.warning("the connection to datasourced did not stop within %s s", timeout)
        self._end_event_delivery()
        return self.returncode

    async def wait_exit(self, timeout: float | None = None) -> int | None:
        """Waits until the daemon process has ended (for whatever reason); returns its
        exit status. Raises :class:`DatasourcedTimeout` if it is still running after ``timeout``."""
        try:
            await asyncio.wait_for(self._exited.wait(), timeout)
        except TimeoutError:
            raise DatasourcedTimeout(f"datasourced (pid {self.pid}) was still running after {timeout} s") from None
        return self.returncode

    async def __aenter__(self) -> AsyncClient:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def stderr_tail(self) -> list[str]:
        """The daemon's last lines of log output (stderr)."""
        return self._connection.stderr_tail

    @property
    def pid(self) -> int | None:
        """The daemon's process id, or None before it started."""
        process = self._connection.process
        return None if process is None else process.pid

    # -- messages -------------------------------------------------------------------------

    async def request(self, method: str, params: dict[str, Any] | None = None, *,
                      timeout: float | None = None) -> Any:
        """Sends a request and returns its result; raises :class:`RPCError` on an error answer,
        :class:`DatasourcedTimeout` (after sending ``$/cancelRequest``) when none comes in time."""
        self._check_running()
        timeout = self.timeout if timeout is None else timeout
        msg_id = next(self._ids)
        protocol = self._connection.protocol
        # An absent params must not go out as "params": null, which JSON-RPC forbids.
        answer = protocol.send_request_async(method, params if params is not None else {}, msg_id=msg_id)
        try:
            return await asyncio.wait_for(answer, timeout)
        except TimeoutError:
            self._cancel_request(msg_id)
            raise DatasourcedTimeout(f"{method}: no answer from datasourced within {timeout} s") from None
        except asyncio.CancelledError:
            self._cancel_request(msg_id)
            raise
        except JsonRpcException as error:
            raise RPCError(method, error.code, error.message, error.data) from None
        except RuntimeError as error:  # pygls fails pending requests this way when the daemon exits
            if self._exited.is_set():
                raise DaemonExited(self.returncode, self.stderr_tail) from error
            raise

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Sends a notification."""
        self._check_running()
        self._connection.protocol.notify(method, params if params is not None else {})

    async def _rpc(self, method: str, params: dict[str, Any]) -> Any:
        """How the generated methods send their request."""
        return await self.request(method, params)

    def _handle(self, description: SourceDescription) -> AsyncDataSource:
        """A handle on the source ``description`` describes (createSource's, describeSource's)."""
        return AsyncDataSource(self, description["name"], description)

    def _background_done(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.debug("a request sent in the background failed: %s", task.exception())

    def _cancel_request(self, msg_id: int) -> None:
        if not self._exited.is_set():
            self._connection.protocol.notify("$/cancelRequest", {"id": msg_id})

    def _check_running(self) -> None:
        if self._exited.is_set():
            raise DaemonExited(self.returncode, self.stderr_tail)
        if not self._started:
            raise RuntimeError("the client is not started: use spawn() or start()")

    # -- events ---------------------------------------------------------------------------

    def on_event(self, callback: EventCallback, source: str | None = None) -> Callable[[], None]:
        """Calls ``callback(event)`` for every notification (of ``source`` only, if given).

        Callbacks run on the event loop, in the order the daemon sent the events, as
        each arrives: they must not block (to call the client, start a task). Returns a
        function that removes the callback.
        """
        entry = (source, callback)
        self._callbacks.append(entry)

        def remove() -> None:
            if entry in self._callbacks:
                self._callbacks.remove(entry)

        return remove

    def events(self, timeout: float | None = None, *, source: str | None = None) -> AsyncEventStream:
        """An async iterator over the notifications received from this call on (of
        ``source`` only, if given). It ends when no event comes within ``timeout``
        seconds (``None``: wait for ever) or when the client closes. Use it as an async
        context manager, or call ``close()``, to stop collecting."""
        stream = AsyncEventStream(self, source, timeout)
        self._streams.append(stream)
        return stream

    def _on_notification(self, method: str, params: Any) -> None:
        if self.notifications and method not in self.notifications:
            log.debug("ignored %s: not among the notifications the daemon announced", method)
            return
        self.events_received += 1
        event = Event(self.events_received, method, cast(NotificationParams, params if isinstance(params, dict) else {}))
        for source, callback in list(self._callbacks):
            if source is None or source == event.source:
                try:
                    callback(event)
                except Exception:  # a faulty callback must not stop delivery to the others
                    log.exception("event callback %r failed on %s", callback, event)
        for stream in list(self._streams):
            stream._offer(event)
        if event.is_final:
            for waiter in [w for w in self._final_waiters if w[0] == event.source]:
                self._final_waiters.remove(waiter)
                if not waiter[1].done():
                    waiter[1].set_result(event)

    def _expect_final(self, source: str) -> asyncio.Future[Event]:
        """A future for the next final event of ``source`` received from now on."""
        future: asyncio.Future[Event] = asyncio.get_running_loop().create_future()
        self._final_waiters.append((source, future))
        return future

    def _forget(self, future: asyncio.Future[Event]) -> None:
        self._final_waiters = [w for w in self._final_waiters if w[1] is not future]

    def _on_exit(self, returncode: int | None) -> None:
        self.returncode = returncode
        self._exited.set()
        self._end_event_delivery()

    def _end_event_delivery(self) -> None:
        for stream in list(self._streams):
            stream.close()
        hooks, self._on_end = self._on_end, []
        for hook in hooks:
            hook()
        waiters, self._final_waiters = self._final_waiters, []
        for _, future in waiters:
            if not future.done():
                future.set_exception(DaemonExited(self.returncode, self.stderr_tail))


class AsyncEventStream:
    """Notifications as an async iterator (see :meth:`AsyncClient.events`). After
    ``close()`` it still yields the events it had collected, then ends."""

    def __init__(self, client: AsyncClient, source: str | None, timeout: float | None):
        self._client = client
        self._source = source
        self._timeout = timeout
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._closed = False
        self._finished = False

    def _offer(self, event: Event) -> None:
        if not self._closed and (self._source is None or event.source == self._source):
            self._queue.put_nowait(event)

    def __aiter__(self) -> AsyncEventStream:
        return self

    async def __anext__(self) -> Event:
        if self._finished:
            raise StopAsyncIteration
        try:
            event = await asyncio.wait_for(self._queue.get(), self._timeout)
        except TimeoutError:
            event = None
        if event is None:
            self._finished = True
            self.close()
            raise StopAsyncIteration
        return event

    def close(self) -> None:
        """Stops collecting: the events collected so far are still yielded, then it ends."""
        if not self._closed:
            self._closed = True
            self._queue.put_nowait(None)
        if self in self._client._streams:
            self._client._streams.remove(self)

    async def __aenter__(self) -> AsyncEventStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()


class AsyncDataSource(_GeneratedAsyncSourceMethods):
    """A handle on one named source of the daemon. It holds no rows: every read is a
    request (or two), so it is current, and costs a round trip; read once with
    :meth:`snapshot` to look at many rows.

    The methods that send one request each (:meth:`describe`, :meth:`fetch_data`,
    :meth:`update_source`, ...) are generated from Protocol/openrpc.json (methods.py); the
    ones here read or load with several (:meth:`snapshot`, :meth:`fetch_all_pages`)."""

    def __init__(self, client: AsyncClient, name: str, description: SourceDescription):
        self.client = client
        self.name = name
        self.kind: str = description.get("kind", "")
        #: The description as last read (``createSource``, :meth:`describe`).
        self.description = description

    def __repr__(self) -> str:
        return f"AsyncDataSource({self.name!r}, kind={self.kind!r})"

    # -- what the generated methods (methods.py) send with ----------------------------------

    async def _rpc(self, method: str, params: dict[str, Any]) -> Any:
        return await self.client.request(method, params)

    def _described(self, description: SourceDescription) -> SourceDescription:
        self.description = description
        return description

    def _index_path(self, value: Sequence[int]) -> IndexPath:
        section, item = value
        return (int(section), int(item))

    async def _load(self, method: str, params: dict[str, Any], *, wait: bool, timeout: float | None = None,
                    raise_on_error: bool = True) -> Any:
        """Sends a request that starts a load. With ``wait``, returns once that load ended and
        raises :class:`LoadFailed` if it failed: the daemon answers then when the request says
        ``wait`` (fetchData), else the client waits for the source's final event. A wait given
        up (a timeout, a cancelled task) cancels the load."""
        if not wait:
            return await self._rpc(method, params)
        if not params.get("wait"):
            return await self._wait_for_load(self._rpc(method, params), timeout)
        try:
            result: dict[str, Any] = await self.client.request(method, params, timeout=timeout)
        except (asyncio.CancelledError, DatasourcedTimeout):
            # The caller gave up the wait (task.cancel(), wait_for, a timeout): the load
            # must not go on in the daemon as if someone still wanted it.
            self._cancel_fetch_soon()
            raise
        if raise_on_error and result.get("outcome") == "failed":
            raise LoadFailed(self.name, cast(FetchError, result.get("error") or {}))
        return result

    # -- reading with several requests ----------------------------------------------------

    async def snapshot(self) -> Snapshot:
        """Every row, section by section, as they were at one revision: two requests
        (``describeSource``, ``allObjects``), read again if the source changed between
        them. With a 1.0 daemon (no revisions) the check is that the counts agree."""
        for _ in range(SNAPSHOT_ATTEMPTS):
            description = await self.describe()
            revision = description.get("revision")
            if revision is None:
                rows, rows_revision = await self._rpc("allObjects", {"source": self.name}), None
            else:
                answer = await self._rpc("allObjects", {"source": self.name, "withRevision": True})
                rows, rows_revision = answer["objects"], answer.get("revision")
            counts = description.get("counts", [])
            if rows_revision == revision and len(rows) == sum(counts):
                sections, start = [], 0
                for title, count in zip(description.get("sectionTitles", []), counts):
                    sections.append(Section(title, rows[start:start + count]))
                    start += count
                return Snapshot(self.name, self.kind, sections, revision)
        raise RuntimeError(f"{self.name!r} kept changing while it was read ({SNAPSHOT_ATTEMPTS} attempts)")

    async def rows(self) -> AsyncIterator[tuple[IndexPath, JSON]]:
        """Every row with its index path, placeholders included (one :meth:`snapshot`)."""
        for entry in (await self.snapshot()).rows():
            yield entry

    async def objects(self) -> list[JSON]:
        """Every row that is data, placeholders left out (one :meth:`snapshot`)."""
        return (await self.snapshot()).objects()

    async def count_objects(self) -> int:
        """How many rows are data, placeholders not counted. Paginated sources: one
        ``describeSource``; other kinds: a :meth:`snapshot` (every row is read)."""
        description = await self.describe()
        if description.get("kind") == "paginated" and "numberOfObjects" in description:
            return int(description["numberOfObjects"])
        return len(await self.objects())

    # -- loading with several requests ----------------------------------------------------

    def _cancel_fetch_soon(self) -> None:
        """Sends ``cancelFetch`` without waiting for its answer: the caller is leaving."""
        if self.client._closed or self.client._exited.is_set():
            return
        task = asyncio.get_running_loop().create_task(self.cancel_fetch())
        self.client._background.add(task)
        task.add_done_callback(self.client._background_done)

    async def _wait_for_load(self, start: Awaitable[Any], timeout: float | None) -> NextPageResult:
        final = self.client._expect_final(self.name)
        try:
            result = cast(NextPageResult, await start)
            if not result.get("started"):
                return result
            try:
                event = await asyncio.wait_for(final, self.client.timeout if timeout is None else timeout)
            except TimeoutError:
                self._cancel_fetch_soon()
                raise DatasourcedTimeout(f"{self.name!r} did not finish loading its next page in time") from None
            except asyncio.CancelledError:
                self._cancel_fetch_soon()
                raise
            if event.kind == "failedWithError":
                raise LoadFailed(self.name, event.error or {})
            return result
        finally:
            self.client._forget(final)

    async def fetch_all_pages(self, on_page: Callable[[int, AsyncDataSource], Awaitable[object]] | None = None,
                              max_pages: int | None = None) -> int:
        """Paginated sources: loads from page one, then every next page (at most
        ``max_pages`` in all); returns the number of pages loaded. ``await on_page(n,
        source)`` follows each page. A source that pages without end is stopped by the
        daemon's loop guard (:class:`LoadFailed`, kind ``loop``) or by ``max_pages``."""
        await self.fetch_data(wait=True)
        pages = 1
        if on_page:
            await on_page(pages, self)
        while (max_pages is None or pages < max_pages) and await self.has_more_pages():
            if not (await self.fetch_next_page(wait=True)).get("started"):
                break
            pages += 1
            if on_page:
                await on_page(pages, self)
        return pages

    # -- actions (protocol 1.9) -----------------------------------------------------------

    async def act(self, action: str, identity: JSON | None = None, values: dict[str, Any] | None = None, *,
                  wait: bool = True, stop_at_queued: bool = False, timeout: float | None = None,
                  raise_on_error: bool = False) -> Settlement:
        """Performs one of the source's actions on a row (``performAction``) and returns how
        it settled: ``{"mutation", "action", "source", "status", "error"?}``.

        The optimistic change is shown (its ``didChange`` delivered) before this returns, even
        with ``wait=False``, which returns at once with status ``pending``. Else it waits for
        the mutation's ``didSettleMutation``: ``committed`` or ``rolledBack`` (its ``error``
        holds the server's words in ``serverMessage``; kind ``conflict`` for a 409 or 412).
        A ``queued`` mutation (a network failure, a 408, 429 or 5xx: the daemon sends it again)
        is waited through, unless ``stop_at_queued``, which returns the first ``queued``.
        ``timeout``: seconds to wait for the settlement (None: the client's timeout); then
        :class:`ActionTimeout` names the mutation, which goes on in the daemon.
        ``raise_on_error``: a rollback raises :class:`ActionRolledBack` instead of returning.
        A refused call (an action not declared, a value missing or of another type, no row
        of that identity) raises :class:`RPCError`; nothing shown changes then.
        """
        # Collected from before the request: the settlement may arrive on the answer's heels.
        stream = self.events()
        try:
            answer = await self.perform_action(action, identity, values)
            mutation = str(answer["mutation"])
            settlement: Settlement = {"mutation": mutation, "action": action, "source": self.name,
                                      "status": answer.get("status", "pending")}
            if not wait:
                return settlement
            limit = self.client.timeout if timeout is None else timeout
            last: Settlement | None = None
            loop = asyncio.get_running_loop()
            deadline = loop.time() + limit
            while True:
                try:
                    event = await asyncio.wait_for(anext(stream, None), max(0.0, deadline - loop.time()))
                except TimeoutError:
                    raise ActionTimeout(self.name, action, mutation, last, limit) from None
                if event is None:  # the stream ends when the client does
                    raise DaemonExited(self.client.returncode, self.client.stderr_tail)
                if event.kind != SETTLE_EVENT or event.params.get("mutation") != mutation:
                    continue
                settlement = settlement_of(event)
                if settlement["status"] == "queued" and not stop_at_queued:
                    last = settlement
                    continue
                if raise_on_error and settlement["status"] == "rolledBack":
                    raise ActionRolledBack(settlement)
                return settlement
        finally:
            stream.close()

    async def pending_mutations(self) -> list[dict[str, JSON]]:
        """The mutations called and not yet settled, in the order made (``describeSource``'s
        ``pendingMutations``): ``mutation``, ``action``, ``identity``, ``values``, ``status``
        (``waiting``, ``inFlight``, ``queued``), ``attempts``, ``lastError``. One request."""
        return list((await self.describe()).get("pendingMutations", []))

    async def rows_with_pending(self, section: int = 0, start: int = 0,
                                count: int | None = None) -> list[tuple[JSON, list[str]]]:
        """A slice of a section, each row with the IDs of its pending mutations, oldest first
        (``objectsInSection`` with ``withPending``): to show pending rows dimmed. One request."""
        params: dict[str, Any] = {"source": self.name, "section": section, "start": start, "withPending": True}
        if count is not None:
            params["count"] = count
        answer = await self._rpc("objectsInSection", params)
        objects: list[JSON] = answer.get("objects", [])
        pending: list[list[str]] = answer.get("pending") or [[] for _ in objects]
        return [(row, list(ids)) for row, ids in zip(objects, pending)]

    # -- events ---------------------------------------------------------------------------

    def on_event(self, callback: EventCallback) -> Callable[[], None]:
        """Calls ``callback(event)`` for this source's notifications; returns a remover."""
        return self.client.on_event(callback, self.name)

    def events(self, timeout: float | None = None) -> AsyncEventStream:
        """This source's notifications from now on (see :meth:`AsyncClient.events`)."""
        return self.client.events(timeout, source=self.name)
