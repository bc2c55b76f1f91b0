"""Rows as text: a table for people, JSON lines for programs."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, TextIO

from .client import DataSource, IndexPath, is_placeholder

__all__ = ["describe_row", "pick_columns", "write_table", "write_jsonl"]


def describe_row(row: Any) -> str:
    """A one-line rendering of a placeholder (or of any row, compactly)."""
    if is_placeholder(row):
        kind = row["$placeholder"]
        if kind == "loading":
            return "⋯ loading…"
        if kind == "noResults":
            return "(no results)"
        if kind == "error":
            return f"✗ error: {(row.get('error') or {}).get('message', 'unknown error')}"
        return f"<{kind}>"
    return json.dumps(row, ensure_ascii=False, separators=(",", ":"))


def pick_columns(rows: Iterable[Any], limit: int = 8) -> list[str]:
    """The object members seen in ``rows``, in order of first appearance."""
    columns: list[str] = []
    for row in rows:
        if isinstance(row, dict) and not is_placeholder(row):
            columns += [key for key in row if key not in columns]
    return columns[:limit]


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def write_table(source: DataSource, out: TextIO, columns: list[str] | None = None,
                max_width: int = 40) -> int:
    """Prints ``source`` as a table, with a header line per section when it has titles.
    Returns the number of rows printed."""
    titles = source.section_titles
    sections = [(title, source.objects_in_section(section)) for section, title in enumerate(titles)]
    columns = columns or pick_columns(row for _, rows in sections for row in rows)
    cells = [[_cell(row.get(c) if isinstance(row, dict) else row)[:max_width] for c in columns]
             for _, rows in sections for row in rows if not is_placeholder(row)]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]

    def line(values: list[str]) -> str:
        return "  ".join(v.ljust(w) for v, w in zip(values, widths)).rstrip()

    count = sum(len(rows) for _, rows in sections)
    print(f"{source.name} ({source.kind}): {count} rows in {len(titles)} section{'s' if len(titles) != 1 else ''}", file=out)
    print(line(columns), file=out)
    print(line(["-" * w for w in widths]), file=out)
    for title, rows in sections:
        if title != "" or len(titles) > 1:
            print(f"## {_cell(title) if title is not None else 'null'}", file=out)
        for row in rows:
            if is_placeholder(row) or not isinstance(row, dict):
                print(describe_row(row), file=out)
            else:
                print(line([_cell(row.get(c))[:max_width] for c in columns]), file=out)
    return count


def write_jsonl(source: DataSource, out: TextIO) -> int:
    """Prints one JSON object per row: ``{"source", "indexPath", "section", "object"}``."""
    titles = source.section_titles
    count = 0
    for (section, item), row in source.rows():
        index_path: IndexPath = (section, item)
        print(json.dumps({"source": source.name, "indexPath": list(index_path),
                          "section": titles[section] if section < len(titles) else None,
                          "object": row}, ensure_ascii=False), file=out)
        count += 1
    return count
