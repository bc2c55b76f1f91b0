"""The command-line tool's account of what happens, on stderr: each request, each
notification, the rows each load left, and whether the rows shown are cached ones the
server has not confirmed yet (protocol 1.2)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from datetime import datetime
from typing import TextIO, cast

from .client import DataSource
from .errors import DatasourcedError, describe_fetch_error
from .events import FRESHNESS, Event, Freshness
from .render import describe_placeholders

__all__ = ["Progress", "describe_changes", "local_time"]

CHANGE_KEYS = ("inserted", "deleted", "moved", "updated", "insertedSections", "deletedSections")


def describe_changes(changes: Mapping[str, object] | None) -> str:
    """``1 inserted, 2 deleted``: the size of each non-empty part of a change set."""
    parts = cast(Mapping[str, list[object]], changes or {})
    return ", ".join(f"{len(parts[key])} {key}" for key in CHANGE_KEYS if parts.get(key))


def local_time(moment: datetime) -> str:
    """``2026-11-23 16:41``: a time from the daemon (UTC) in this machine's time zone."""
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")


class Progress:
    """Prints load progress and notifications to stderr, one line each.

    ``sources`` (set once they are created) lets it read a source when its cached rows
    are shown, to say how many there are.
    """

    def __init__(self, out: TextIO, raw_events: bool):
        self.out = out
        self.raw_events = raw_events
        self.lock = threading.Lock()
        self.sources: dict[str, DataSource] = {}
        self._fetch_started: dict[str, float] = {}
        self._revision: dict[str, int | None] = {}
        #: While a source is stale: the change sets received since (how the server's
        #: answer differed from the cached rows).
        self._changes_while_stale: dict[str, list[str]] = {}

    def say(self, text: str) -> None:
        """Prints a line of progress."""
        with self.lock:
            print(text, file=self.out, flush=True)

    def fetching(self, source: DataSource, method: str) -> None:
        """Says that ``method`` (``fetchData``, ``fetchNextPage``) was sent for ``source``."""
        self._fetch_started[source.name] = time.monotonic()
        self.say(f"{source.name}: {method}")

    def on_event(self, event: Event) -> None:
        """Prints an event as it arrives (the client's event callback)."""
        if event.kind == "didChange":
            self._revision[event.source] = event.revision
            if event.source in self._changes_while_stale:
                self._changes_while_stale[event.source].append(describe_changes(event.changes))
        if self.raw_events:
            self.say(f"  ← {event.method} {json.dumps(event.params, ensure_ascii=False)}")
        else:
            detail = ""
            if event.kind == "didChange" and event.changes is not None:
                detail = describe_changes(event.changes)
                detail = f": {detail}" if detail else ""
            elif event.kind == "failedWithError" and event.error is not None:
                detail = f": {event.error.get('kind')}: {describe_fetch_error(event.error)}"
            elif event.kind == "didSettleMutation":
                detail = f": {event.params.get('action')} {event.params.get('mutation')} {event.params.get('status')}"
                if event.error is not None:
                    detail += f" ({event.error.get('kind')}: {describe_fetch_error(event.error)})"
            elif event.freshness is not None:
                freshness = event.freshness
                detail = f": stale (cached {local_time(freshness.cached_at)})" if freshness.stale and freshness.cached_at \
                    else (": stale" if freshness.stale else ": fresh")
            self.say(f"  ← {event.source} {event.kind}{detail}")
        if event.kind == FRESHNESS and event.freshness is not None:
            self._freshness_changed(event.source, event.freshness)

    def _freshness_changed(self, name: str, freshness: Freshness) -> None:
        when = f"cached {local_time(freshness.cached_at)}" if freshness.cached_at else "cached"
        if freshness.stale:
            self._changes_while_stale[name] = []
            self.say(f"{name}: {self._cached_rows(name)} ({when} — revalidating)")
            return
        changes = self._changes_while_stale.pop(name, None)
        if changes is None:
            self.say(f"{name}: fresh")
        elif not any(changes):
            self.say(f"{name}: fresh: the server confirmed the cached rows, nothing changed")
        else:
            self.say(f"{name}: fresh: the server's rows replaced the cached ones ({'; '.join(c for c in changes if c)})")

    def _cached_rows(self, name: str) -> str:
        """``showing 10 cached objects, 3 ms after fetchData``, read as the freshness event
        arrives (callbacks may call the client). The count is said only when the rows read
        are still the cached ones (the same revision): a quick server may have answered
        meanwhile."""
        started = self._fetch_started.get(name)
        after = f", {(time.monotonic() - started) * 1000:.0f} ms after fetchData" if started is not None else ""
        source = self.sources.get(name)
        if source is None:
            return f"showing cached rows{after}"
        try:
            snapshot = source.snapshot()
        except (DatasourcedError, TimeoutError):
            return f"showing cached rows{after}"
        if snapshot.revision is None or snapshot.revision != self._revision.get(name):
            return f"showed cached rows{after}"
        objects = len(snapshot.objects())
        return f"showing {objects} cached object{'s' if objects != 1 else ''}{describe_placeholders(snapshot)}{after}"

    def rows(self, source: DataSource, what: str) -> None:
        """Says how many rows ``source`` has now, its placeholders and pages."""
        snapshot = source.snapshot()
        state = source.description  # read by the snapshot
        pages = ""
        if state.get("kind") == "paginated" and state.get("currentPage") is not None:
            pages = f" (page {state.get('currentPage')} of {state.get('numberOfPages') or '?'}, " \
                    f"{state.get('numberOfTotalResults') or '?'} objects in all)"
        objects = len(snapshot.objects())
        self.say(f"{source.name}: {what}: {objects} object{'s' if objects != 1 else ''}"
                 f"{describe_placeholders(snapshot)}{pages}")
