"""A source's rows as read at one moment: sections, titles, rows, and the revision."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from .protocol import JSON, IndexPath

__all__ = ["Section", "Snapshot", "is_placeholder"]


def is_placeholder(row: JSON) -> bool:
    """Whether a row is a placeholder (``{"$placeholder": "loading" | "noResults" | "error"}``)."""
    return isinstance(row, dict) and "$placeholder" in row


@dataclass(frozen=True)
class Section:
    title: JSON
    rows: list[JSON]


@dataclass(frozen=True)
class Snapshot:
    """Every row of a source, section after section, placeholders included.

    ``revision`` is the source's revision these rows are (protocol 1.1; ``None`` with a
    1.0 daemon, whose snapshots are checked by their counts only).
    """

    name: str
    kind: str
    sections: list[Section]
    revision: int | None

    @property
    def titles(self) -> list[JSON]:
        """Each section's title, in order."""
        return [section.title for section in self.sections]

    def rows(self) -> Iterator[tuple[IndexPath, JSON]]:
        """Every row with its index path, placeholders included."""
        for number, section in enumerate(self.sections):
            for item, row in enumerate(section.rows):
                yield (number, item), row

    def objects(self) -> list[JSON]:
        """Every row that is data, not a placeholder."""
        return [row for section in self.sections for row in section.rows if not is_placeholder(row)]

    def placeholders(self) -> list[JSON]:
        """Every row that is a placeholder (loading, error, no results)."""
        return [row for section in self.sections for row in section.rows if is_placeholder(row)]

    @property
    def number_of_rows(self) -> int:
        """Rows held, placeholders included (``len(snapshot.objects())`` counts data only)."""
        return sum(len(section.rows) for section in self.sections)
