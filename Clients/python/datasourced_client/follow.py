"""Following live lists from the command line: each change the daemon sends after the
rows were printed, as it arrives, until a time limit, a number of changes, or Ctrl-C."""

from __future__ import annotations

import json
import queue
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import TextIO

from .client import Client
from .events import Event
from .progress import describe_changes
from .listspec import Column
from .protocol import JSON
from .render import as_columns, cell, describe_row, pick_columns
from .snapshot import is_placeholder

__all__ = ["ChangeFollower"]


class ChangeFollower:
    """Collects the ``didChange`` events of some sources from the moment it is made (so
    that none is missed while the rows are being printed), and prints those that come
    after the revision printed."""

    def __init__(self, client: Client, names: Iterable[str]):
        self.names = set(names)
        self._queue: queue.Queue[Event] = queue.Queue()
        self._printed_revision: dict[str, int | None] = {}
        self._remove: Callable[[], None] = client.on_event(self._collect)

    def _collect(self, event: Event) -> None:
        if event.kind == "didChange" and event.source in self.names:
            self._queue.put(event)

    def printed(self, name: str, revision: int | None) -> None:
        """The rows of ``name`` were printed as they were at ``revision``: changes up to it
        are in them."""
        self._printed_revision[name] = revision

    def follow(self, seconds: float, out: TextIO, *, columns: Sequence[str | Column] | None, jsonl: bool,
               max_changes: int | None = None) -> int:
        """Prints each change as it arrives, for at most ``seconds`` or ``max_changes``
        changes; returns how many were printed. Ctrl-C ends it early (KeyboardInterrupt
        is the caller's)."""
        deadline = time.monotonic() + seconds
        printed = 0
        try:
            while max_changes is None or printed < max_changes:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                try:
                    event = self._queue.get(timeout=remaining)
                except queue.Empty:
                    break
                shown = self._printed_revision.get(event.source)
                if shown is not None and event.revision is not None and event.revision <= shown:
                    continue  # already in the rows printed
                if jsonl:
                    print(json.dumps({"source": event.source, "revision": event.revision, "changes": event.changes,
                                      "values": event.values}, ensure_ascii=False), file=out)
                else:
                    self._print_change(event, out, columns)
                out.flush()
                printed += 1
        finally:
            self._remove()
        return printed

    @staticmethod
    def _print_change(event: Event, out: TextIO, columns: Sequence[str | Column] | None) -> None:
        """``books: 1 updated (revision 7, 16:42:05)``, then a line per row: ``+`` inserted,
        ``~`` updated (with their values, when the daemon sent them), ``-`` deleted."""
        changes = event.changes or {}
        values = event.values or {}
        revision = f"revision {event.revision}, " if event.revision is not None else ""
        print(f"{event.source}: {describe_changes(changes) or 'no rows'} "
              f"({revision}{datetime.now().strftime('%H:%M:%S')})", file=out)
        rows_shown = [*values.get("inserted", []), *values.get("updated", [])]
        chosen = as_columns(columns or pick_columns(rows_shown))

        def row_text(row: JSON) -> str:
            if is_placeholder(row) or not isinstance(row, dict) or not chosen:
                return describe_row(row)
            return "  ".join(cell(column.value(row)) for column in chosen)

        for mark, paths, rows in (("+", changes.get("inserted", []), values.get("inserted")),
                                  ("~", changes.get("updated", []), values.get("updated"))):
            for index, path in enumerate(paths):
                text = row_text(rows[index]) if rows is not None and index < len(rows) else ""
                print(f"  {mark} {list(path)} {text}".rstrip(), file=out)
        for path in changes.get("deleted", []):
            print(f"  - {list(path)}", file=out)
        for move in changes.get("moved", []):
            print(f"  > {list(move['from'])} → {list(move['to'])}", file=out)

