"""The list spec: the JSON or TOML document every client opens (Neovim, Vim, Emacs and this
package's command-line tool), whose schema is Protocol/listspec.schema.json.

    {"title": "Books by genre", "sources": [CREATESOURCE, ...], "show": "byGenre",
     "columns": ["id", {"key": "title", "width": 18, "title": "Title"}], "maxPages": 5}

``sources`` holds createSource params, children first; ``show`` is one source name (a
string is never split) or a list of them (default: the last source). A document with no
``sources`` that has ``name`` and ``kind`` is one source, its ``title`` and ``columns``
taken out before it is sent. ``${NAME}`` in any string is replaced from the variables
given; an unknown name is an error naming it and the file."""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .protocol import (
    LIST_SPEC_COLUMNS_WIDTH_MIN,
    LIST_SPEC_MAX_PAGES_MIN,
    LIST_SPEC_PAGES_MIN,
    LIST_SPEC_SEARCH_DEBOUNCE_MILLISECONDS_MAX,
    LIST_SPEC_SEARCH_DEBOUNCE_MILLISECONDS_MIN,
)

__all__ = ["Column", "ListSpec", "ListSpecError", "Search", "read_list_spec", "parse_list_spec", "substitute"]

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
#: The members of a list spec (anything else is a mistake, named in the error).
MEMBERS = ("$schema", "title", "sources", "show", "columns", "search", "maxPages", "pages")
#: The members of the one-source shorthand that are the list's, not createSource params.
DISPLAY_MEMBERS = ("title", "columns", "search")


class ListSpecError(ValueError):
    """A list spec that cannot be used: the message names the file and the member."""


@dataclass(frozen=True)
class Column:
    """A column of a table: the key path it shows, its header, and a width it is cut to."""

    key: str
    title: str
    width: int | None = None

    def value(self, row: Any) -> Any:
        """The row's value at the key path (dot-separated; a component of digits also
        indexes arrays), or None when it has none."""
        value = row
        for part in self.key.split("."):
            if isinstance(value, dict):
                value = value.get(part)
            elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
                value = value[int(part)]
            else:
                return None
        return value


@dataclass(frozen=True)
class Search:
    """A list's search as you type: the query parameter updateSource sets, or for a GraphQL
    source the variable (and its debounce, and the source it changes), and the key paths a
    filter's match covers."""

    parameter: str | None = None
    source: str | None = None
    debounce_milliseconds: int | None = None
    key_paths: list[str] | None = None
    variable: str | None = None


@dataclass(frozen=True)
class ListSpec:
    """A list spec read and checked: what to create, what to show and how."""

    sources: list[dict[str, Any]]
    show: list[str]
    title: str
    columns: list[Column] | None = None
    max_pages: int | None = None
    pages: int | None = None
    search: Search | None = None
    path: str = field(default="the list spec", compare=False)


def substitute(value: Any, variables: dict[str, str], origin: str = "the list spec", where: str = "") -> Any:
    """``value`` with ``${NAME}`` replaced in every string inside it; ``$$`` is not special."""
    if isinstance(value, str):
        def replace(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in variables:
                hint = " or --fixtures FILE" if name == "baseURL" else ""
                raise ListSpecError(f"{origin}: {where or 'a value'} uses ${{{name}}}; "
                                    f"pass --set {name}=VALUE{hint}")
            return variables[name]
        return _VARIABLE.sub(replace, value)
    if isinstance(value, list):
        return [substitute(v, variables, origin, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: substitute(v, variables, origin, f"{where}.{k}" if where else k) for k, v in value.items()}
    return value


def read_list_spec(path: Path, variables: dict[str, str] | None = None) -> ListSpec:
    """Reads a JSON (or, for a ``.toml`` file, TOML) list spec and checks it."""
    try:
        text = path.read_text(encoding="utf-8")
        document = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (OSError, ValueError) as error:
        raise ListSpecError(f"{path}: {error}") from error
    return parse_list_spec(document, variables or {}, str(path))


def _columns(value: Any, origin: str) -> list[Column]:
    if not isinstance(value, list) or not value:
        raise ListSpecError(f"{origin}: columns must be a non-empty list of keys or {{key, width, title}}, got {value!r}")
    columns = []
    for index, column in enumerate(value):
        where = f"{origin}: columns[{index}]"
        if isinstance(column, str) and column:
            columns.append(Column(column, column))
            continue
        if not isinstance(column, dict) or not isinstance(column.get("key"), str) or not column["key"]:
            raise ListSpecError(f"{where} must be a key or an object with a \"key\", got {column!r}")
        unknown = sorted(set(column) - {"key", "width", "title"})
        if unknown:
            raise ListSpecError(f"{where} has {', '.join(unknown)}: a column has only key, width and title")
        width = column.get("width")
        if width is not None and (not isinstance(width, int) or isinstance(width, bool)
                                  or width < LIST_SPEC_COLUMNS_WIDTH_MIN):
            raise ListSpecError(f"{where}.width must be a whole number of at least {LIST_SPEC_COLUMNS_WIDTH_MIN}, "
                                f"got {width!r}")
        title = column.get("title", column["key"])
        if not isinstance(title, str):
            raise ListSpecError(f"{where}.title must be a string, got {title!r}")
        columns.append(Column(column["key"], title, width))
    return columns


def _search(value: Any, origin: str) -> Search:
    where = f"{origin}: search"
    if not isinstance(value, dict):
        raise ListSpecError(f"{where} must be an object with parameter (or variable), source, debounceMilliseconds, "
                            f"keyPaths; got {value!r}")
    unknown = sorted(set(value) - {"parameter", "variable", "source", "debounceMilliseconds", "keyPaths"})
    if unknown:
        raise ListSpecError(f"{where} has {', '.join(unknown)}: search has only parameter, variable, source, "
                            "debounceMilliseconds and keyPaths")
    for member in ("parameter", "variable", "source"):
        if member in value and (not isinstance(value[member], str) or not value[member]):
            raise ListSpecError(f"{where}.{member} must be a non-empty string, got {value[member]!r}")
    if "parameter" in value and "variable" in value:
        raise ListSpecError(f"{where} has both parameter and variable: a search sets a query parameter, "
                            "or a GraphQL source's variable")
    debounce = value.get("debounceMilliseconds")
    low, high = LIST_SPEC_SEARCH_DEBOUNCE_MILLISECONDS_MIN, LIST_SPEC_SEARCH_DEBOUNCE_MILLISECONDS_MAX
    if debounce is not None and (not isinstance(debounce, int) or isinstance(debounce, bool)
                                 or not low <= debounce <= high):
        raise ListSpecError(f"{where}.debounceMilliseconds must be a whole number in {low}...{high}, got {debounce!r}")
    key_paths = value.get("keyPaths")
    if key_paths is not None and (not isinstance(key_paths, list) or not key_paths
                                  or not all(isinstance(path, str) and path for path in key_paths)):
        raise ListSpecError(f"{where}.keyPaths must be a non-empty list of key paths, got {key_paths!r}")
    return Search(value.get("parameter"), value.get("source"), debounce, list(key_paths) if key_paths else None,
                  value.get("variable"))


def _count(document: dict[str, Any], member: str, least: int, origin: str) -> int | None:
    value = document.get(member)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < least):
        raise ListSpecError(f"{origin}: {member} must be a whole number of at least {least}, got {value!r}")
    return value


def parse_list_spec(document: Any, variables: dict[str, str] | None = None, origin: str = "the list spec") -> ListSpec:
    """Checks a decoded list spec (the shorthand included) and substitutes its variables."""
    if not isinstance(document, dict):
        raise ListSpecError(f"{origin}: expected an object with \"sources\" (or one source's \"name\" and \"kind\"), "
                            f"got {type(document).__name__}")
    document = substitute(document, variables or {}, origin)
    if "sources" not in document and "name" in document and "kind" in document:
        source = {k: v for k, v in document.items() if k not in DISPLAY_MEMBERS}
        document = {k: v for k, v in document.items() if k in DISPLAY_MEMBERS} | {"sources": [source]}
    unknown = sorted(set(document) - set(MEMBERS))
    if unknown:
        raise ListSpecError(f"{origin}: unknown member{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                            f"(a list spec has {', '.join(MEMBERS[1:])}; or it is one source, with name and kind)")
    sources = document.get("sources")
    if not isinstance(sources, list) or not sources:
        raise ListSpecError(f"{origin}: expected a non-empty \"sources\" list of createSource params "
                            "(or one source's \"name\" and \"kind\")")
    for index, params in enumerate(sources):
        if not isinstance(params, dict) or not isinstance(params.get("name"), str) or "kind" not in params:
            raise ListSpecError(f"{origin}: sources[{index}] must be an object with \"name\" and \"kind\"")
    names = [params["name"] for params in sources]
    show = document.get("show", names[-1])
    if isinstance(show, str):
        show = [show]  # one name, never its characters
    if not isinstance(show, list) or not show or not all(isinstance(name, str) and name for name in show):
        raise ListSpecError(f"{origin}: show must be a source name or a non-empty list of them, got {document['show']!r}")
    unknown_shown = [name for name in show if name not in names]
    if unknown_shown:
        raise ListSpecError(f"{origin}: show names {', '.join(unknown_shown)}, not among the sources ({', '.join(names)})")
    title = document.get("title", show[0])
    if not isinstance(title, str) or not title:
        raise ListSpecError(f"{origin}: title must be a non-empty string, got {title!r}")
    columns = _columns(document["columns"], origin) if "columns" in document else None
    search = _search(document["search"], origin) if "search" in document else None
    return ListSpec(sources=[dict(params) for params in sources], show=list(show), title=title, columns=columns,
                    max_pages=_count(document, "maxPages", LIST_SPEC_MAX_PAGES_MIN, origin),
                    pages=_count(document, "pages", LIST_SPEC_PAGES_MIN, origin),
                    search=search, path=origin)
