"""Notifications from the daemon, as values."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .protocol import Changes, ChangeValues, FetchError, NotificationParams

__all__ = ["Event", "EventCallback", "FINAL_EVENTS"]

#: The events that end a load cycle: exactly one of them follows each ``willLoadData``.
FINAL_EVENTS = frozenset({"finishedLoading", "failedWithError"})


@dataclass(frozen=True)
class Event:
    """One notification.

    ``method`` is the notification's method (``dataSource/didChange``); ``kind`` the part
    after its last ``/`` (``willLoadData``, ``didPartiallyLoad``, ``finishedLoading``,
    ``failedWithError``, ``didChange``); ``params`` its params; ``seq`` numbers the events
    in the order the daemon sent them, from 1.
    """

    seq: int
    method: str
    params: NotificationParams = field(repr=False)

    @property
    def kind(self) -> str:
        return self.method.rsplit("/", 1)[-1]

    @property
    def source(self) -> str:
        return self.params.get("source", "")

    @property
    def error(self) -> FetchError | None:
        return self.params.get("error")

    @property
    def changes(self) -> Changes | None:
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
    def is_final(self) -> bool:
        return self.kind in FINAL_EVENTS


#: A function called with each event; what it returns is ignored.
EventCallback = Callable[[Event], object]
