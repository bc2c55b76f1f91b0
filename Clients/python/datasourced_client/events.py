"""Notifications from the daemon, as values."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable

from .protocol import Changes, ChangeValues, FetchError, NotificationParams

__all__ = ["Event", "EventCallback", "FINAL_EVENTS", "FRESHNESS", "Freshness", "parse_timestamp"]

#: The events that end a load cycle: exactly one of them follows each ``willLoadData``.
FINAL_EVENTS = frozenset({"finishedLoading", "failedWithError"})
#: The kind of ``dataSource/didChangeFreshness`` (protocol 1.2).
FRESHNESS = "didChangeFreshness"


def parse_timestamp(text: str) -> datetime:
    """A protocol time (RFC 3339 in UTC, ``2026-11-23T16:41:37.123Z``) as an aware datetime."""
    return datetime.fromisoformat(text)


@dataclass(frozen=True)
class Freshness:
    """Whether the rows a source shows came from the daemon's persisted cache and no
    response has confirmed them yet (protocol 1.2).

    ``stale``: they did; ``cached_at``: while stale, when they were stored or last
    confirmed (an aware UTC datetime). Read from a ``didChangeFreshness`` event
    (:attr:`Event.freshness`) or a description (:meth:`Freshness.of`).
    """

    stale: bool
    cached_at: datetime | None = None

    @classmethod
    def of(cls, members: Mapping[str, Any]) -> Freshness:
        """From a ``didChangeFreshness``'s params or a description: not stale when it says
        nothing of it (a source without a cache, or a daemon before 1.2)."""
        cached_at = members.get("cachedAt")
        return cls(bool(members.get("stale", False)),
                   parse_timestamp(cached_at) if isinstance(cached_at, str) and cached_at else None)


@dataclass(frozen=True)
class Event:
    """One notification.

    ``method`` is the notification's method (``dataSource/didChange``); ``kind`` the part
    after its last ``/`` (``willLoadData``, ``didPartiallyLoad``, ``finishedLoading``,
    ``failedWithError``, ``didChange``, ``didChangeFreshness``); ``params`` its params;
    ``seq`` numbers the events in the order the daemon sent them, from 1.
    """

    seq: int
    method: str
    params: NotificationParams = field(repr=False)

    @property
    def kind(self) -> str:
        """The notification's name without ``dataSource/``: ``didChange``, ``finishedLoading``..."""
        return self.method.rsplit("/", 1)[-1]

    @property
    def source(self) -> str:
        """The name of the source the notification is about."""
        return self.params.get("source", "")

    @property
    def error(self) -> FetchError | None:
        """``failedWithError``: what failed (see :func:`describe_fetch_error`); else None."""
        return self.params.get("error")

    @property
    def changes(self) -> Changes | None:
        """``didChange``: the index paths inserted, deleted, updated and moved; else None."""
        return self.params.get("changes")

    @property
    def values(self) -> ChangeValues | None:
        """The inserted and updated rows (protocol 1.1, when the client asked for
        ``change_values`` and they fitted the daemon's size limit)."""
        return self.params.get("values")

    @property
    def revision(self) -> int | None:
        """The source's revision after this change (protocol 1.1; ``None`` before)."""
        return self.params.get("revision")

    @property
    def previous_revision(self) -> int | None:
        """The revision this change applies to (protocol 1.1)."""
        return self.params.get("previousRevision")

    @property
    def freshness(self) -> Freshness | None:
        """A ``didChangeFreshness``'s news (protocol 1.2): whether the rows shown are now
        unconfirmed cached rows, and from when; ``None`` for other events."""
        return Freshness.of(self.params) if self.kind == FRESHNESS else None

    @property
    def stale(self) -> bool | None:
        """``didChangeFreshness``: whether the rows shown are unconfirmed cached rows."""
        return self.params.get("stale")

    @property
    def cached_at(self) -> str | None:
        """``didChangeFreshness`` while stale: when the cached rows were stored or last
        confirmed, as sent (RFC 3339, UTC); :attr:`freshness` has it as a datetime."""
        return self.params.get("cachedAt")

    @property
    def is_final(self) -> bool:
        """Whether the event ends a load cycle (``finishedLoading`` or ``failedWithError``)."""
        return self.kind in FINAL_EVENTS


#: A function called with each event; what it returns is ignored.
EventCallback = Callable[[Event], object]
