"""Notifications from the daemon, as values, and the thread that delivers them."""

from __future__ import annotations

import logging
import queue
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["Event", "EventDispatcher", "FINAL_EVENTS"]

log = logging.getLogger("datasourced.client")

#: The events that end a load cycle: exactly one of them follows each ``willLoadData``.
FINAL_EVENTS = frozenset({"finishedLoading", "failedWithError"})


@dataclass(frozen=True)
class Event:
    """One ``dataSource/...`` notification.

    ``kind`` is the method name without its ``dataSource/`` prefix (``willLoadData``,
    ``didPartiallyLoad``, ``finishedLoading``, ``failedWithError``, ``didChange``);
    ``params`` is the notification's params (``source``, and ``error`` or ``changes``);
    ``seq`` numbers the events in the order the daemon sent them, from 1.
    """

    seq: int
    kind: str
    params: dict[str, Any] = field(repr=False)

    @property
    def source(self) -> str:
        return self.params.get("source", "")

    @property
    def error(self) -> dict[str, Any] | None:
        return self.params.get("error")

    @property
    def changes(self) -> dict[str, Any] | None:
        return self.params.get("changes")

    @property
    def is_final(self) -> bool:
        return self.kind in FINAL_EVENTS


Callback = Callable[[Event], None]


class _FinalWaiter:
    def __init__(self, source: str, after_seq: int):
        self.source = source
        self.after_seq = after_seq
        self.event: Event | None = None
        self.done = threading.Event()


class EventDispatcher:
    """Delivers events, in order, on a thread of its own.

    The connection's event loop only enqueues; callbacks run here, so a callback may
    call the client's (blocking) methods without stalling the connection.
    """

    def __init__(self) -> None:
        self._queue: queue.Queue[Event | None] = queue.Queue()
        self._callbacks: list[tuple[str | None, Callback]] = []
        self._subscribers: list[queue.Queue[Event | None]] = []
        self._waiters: list[_FinalWaiter] = []
        self._lock = threading.Lock()
        self._delivered = threading.Condition(self._lock)
        self._delivered_seq = 0
        self.received_seq = 0  # written by the event loop only
        self._thread = threading.Thread(target=self._run, name="datasourced-events", daemon=True)
        self._thread.start()

    # Called on the event loop.
    def post(self, kind: str, params: dict[str, Any]) -> None:
        self.received_seq += 1
        self._queue.put(Event(self.received_seq, kind, params))

    def close(self) -> None:
        self._queue.put(None)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)

    @property
    def on_dispatch_thread(self) -> bool:
        return threading.current_thread() is self._thread

    def add_callback(self, callback: Callback, source: str | None = None) -> Callable[[], None]:
        """Calls ``callback`` for every event (of ``source`` only, if given); returns a remover."""
        entry = (source, callback)
        with self._lock:
            self._callbacks.append(entry)

        def remove() -> None:
            with self._lock:
                if entry in self._callbacks:
                    self._callbacks.remove(entry)

        return remove

    def subscribe(self) -> queue.Queue[Event | None]:
        """A queue receiving every event from now on (``None`` once the client closes)."""
        subscriber: queue.Queue[Event | None] = queue.Queue()
        with self._lock:
            self._subscribers.append(subscriber)
        return subscriber

    def unsubscribe(self, subscriber: queue.Queue[Event | None]) -> None:
        with self._lock:
            if subscriber in self._subscribers:
                self._subscribers.remove(subscriber)

    def expect_final(self, source: str) -> _FinalWaiter:
        """Registers interest in the next final event of ``source`` received from now on."""
        waiter = _FinalWaiter(source, self.received_seq)
        with self._lock:
            self._waiters.append(waiter)
        return waiter

    def forget(self, waiter: _FinalWaiter) -> None:
        with self._lock:
            if waiter in self._waiters:
                self._waiters.remove(waiter)

    def wait_delivered(self, seq: int, timeout: float | None) -> bool:
        """Blocks until every event up to ``seq`` has been delivered to the callbacks."""
        if self.on_dispatch_thread:
            return True  # a callback waiting for itself would never return
        with self._delivered:
            return self._delivered.wait_for(lambda: self._delivered_seq >= seq, timeout)

    def _run(self) -> None:
        while (event := self._queue.get()) is not None:
            with self._lock:
                callbacks = [cb for source, cb in self._callbacks if source in (None, event.source)]
                subscribers = list(self._subscribers)
            for callback in callbacks:
                try:
                    callback(event)
                except Exception:  # a faulty callback must not stop delivery to the others
                    log.exception("event callback %r failed on %s", callback, event)
            for subscriber in subscribers:
                subscriber.put(event)
            with self._delivered:
                if event.is_final:
                    for waiter in [w for w in self._waiters if w.source == event.source and event.seq > w.after_seq]:
                        waiter.event = event
                        waiter.done.set()
                        self._waiters.remove(waiter)
                self._delivered_seq = event.seq
                self._delivered.notify_all()
        with self._lock:
            subscribers = list(self._subscribers)
            waiters, self._waiters = self._waiters, []
        for subscriber in subscribers:
            subscriber.put(None)
        for waiter in waiters:
            waiter.done.set()
