"""Rows as text: a table for people, JSON lines for programs."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TextIO

from .errors import describe_fetch_error
from .listspec import Column
from .protocol import JSON
from .snapshot import Snapshot, is_placeholder

__all__ = ["as_columns", "cell", "describe_row", "describe_placeholders", "pick_columns", "write_table", "write_jsonl"]


def describe_row(row: JSON) -> str:
    """A one-line rendering of a placeholder (or of any row, compactly)."""
    if is_placeholder(row):
        kind = row["$placeholder"]
        if kind == "loading":
            return "⋯ loading…"
        if kind == "noResults":
            return "(no results)"
        if kind == "error":
            return f"✗ error: {describe_fetch_error(row.get('error') or {})}"
        if kind == "unloaded":
            return f"… row {_row_number(row)}"
        return f"<{kind}>"
    return json.dumps(row, ensure_ascii=False, separators=(",", ":"))


def _row_number(row: JSON) -> int:
    """The number (from 1, as people count) of an unloaded row: its ``index`` plus one."""
    index = row.get("index") if isinstance(row, dict) else None
    return index + 1 if isinstance(index, int) else 0


def _is_unloaded(row: JSON) -> bool:
    return is_placeholder(row) and row["$placeholder"] == "unloaded"


def describe_placeholders(snapshot: Snapshot) -> str:
    """`` + ⋯ loading…`` (the placeholders a snapshot holds), or nothing. The unloaded rows
    of counted placeholders (protocol 1.5) are counted, not listed: ``+ 999900 unloaded``."""
    placeholders = [row for row in snapshot.placeholders() if not _is_unloaded(row)]
    unloaded = len(snapshot.placeholders()) - len(placeholders)
    described = [describe_row(row) for row in placeholders] + ([f"{unloaded} unloaded"] if unloaded else [])
    return f" + {', '.join(described)}" if described else ""


def pick_columns(rows: Iterable[JSON], limit: int = 8) -> list[str]:
    """The object members seen in ``rows``, in order of first appearance."""
    columns: list[str] = []
    for row in rows:
        if isinstance(row, dict) and not is_placeholder(row):
            columns += [key for key in row if key not in columns]
    return columns[:limit]


def as_columns(columns: Sequence[str | Column]) -> list[Column]:
    """Columns of a list spec; a key is the column of that key, titled with it."""
    return [column if isinstance(column, Column) else Column(column, column) for column in columns]


def cell(value: JSON) -> str:
    """A member's value in a table cell: text as it is, other values as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def write_table(snapshot: Snapshot, out: TextIO, columns: Sequence[str | Column] | None = None, max_width: int = 40,
                note: str = "") -> int:
    """Prints a snapshot as a table, with a header line per section when it has titles;
    placeholders are shown as what they mean (``⋯ loading…``), not as data. ``note`` ends
    the first line (``stale: ...``). A column's value is cut to its width (default
    ``max_width``). Returns the number of objects (data rows) printed."""
    chosen = as_columns(columns or pick_columns(row for _, row in snapshot.rows()))

    def values(row: JSON) -> list[str]:
        return [cell(c.value(row))[:c.width or max_width] for c in chosen]

    cells = [values(row) for row in snapshot.objects()]
    titles = [c.title for c in chosen]
    widths = [max([len(t)] + [len(r[i]) for r in cells]) for i, t in enumerate(titles)]

    def line(values: list[str]) -> str:
        return "  ".join(v.ljust(w) for v, w in zip(values, widths)).rstrip()

    objects = len(cells)
    sections = len(snapshot.sections)
    print(f"{snapshot.name} ({snapshot.kind}): {objects} object{'s' if objects != 1 else ''}"
          f"{describe_placeholders(snapshot)} in {sections} section{'s' if sections != 1 else ''}{note}", file=out)
    print(line(titles), file=out)
    print(line(["-" * w for w in widths]), file=out)
    for section in snapshot.sections:
        if section.title != "" or sections > 1:
            print(f"## {cell(section.title) if section.title is not None else 'null'}", file=out)
        run: list[JSON] = []  # consecutive unloaded rows, printed as one line

        def end_run() -> None:
            if len(run) == 1:
                print(describe_row(run[0]), file=out)
            elif run:
                print(f"… rows {_row_number(run[0])}–{_row_number(run[-1])}", file=out)
            run.clear()

        for row in section.rows:
            if _is_unloaded(row):
                run.append(row)
                continue
            end_run()
            if is_placeholder(row) or not isinstance(row, dict):
                print(describe_row(row), file=out)
            else:
                print(line(values(row)), file=out)
        end_run()
    return objects


def write_jsonl(snapshot: Snapshot, out: TextIO) -> int:
    """Prints one JSON object per data row: ``{"source", "indexPath", "section", "object"}``.
    Placeholders are not data and are left out (progress and errors go to stderr).
    Returns the number of rows printed."""
    count = 0
    titles = snapshot.titles
    for (section, item), row in snapshot.rows():
        if is_placeholder(row):
            continue
        print(json.dumps({"source": snapshot.name, "indexPath": [section, item],
                          "section": titles[section], "object": row}, ensure_ascii=False), file=out)
        count += 1
    return count
