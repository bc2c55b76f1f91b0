#!/usr/bin/env python3
"""Writes Protocol/listspec.schema.json, the JSON Schema of a list spec (the file every client
opens: Clients/specs/*.json, the Python CLI's configs), from Protocol/openrpc.json.

A list spec's sources are createSource params, so their schema is not written twice: the
createSource params schema (SourceSpec) and every schema it refers to are copied from
openrpc.json into $defs, with two changes a spec file needs:
- a string the protocol constrains with a pattern (a baseURL's http://) also accepts a
  string holding a ${NAME} variable, as clients substitute variables before they send it;
- the one-source shorthand is each kind of SourceSpec with the display members (title,
  columns, search) allowed besides.

The list's own members (title, show, columns, search, maxPages, pages) are the clients',
not the protocol's: they are written here. `search` names what a client's search as you
type uses: the query parameter (or a GraphQL source's variable) that updateSource changes, its debounce, the source it
changes, and the key paths a filtered view's match covers.

    python3 Protocol/make-listspec-schema.py           # writes the file
    python3 Protocol/make-listspec-schema.py --check   # exits 1 if the file is stale

Tests/Schema/test_listspec.py runs --check's comparison, so a change to openrpc.json that
is not carried here fails the tests."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OPENRPC = HERE / "openrpc.json"
OUTPUT = HERE / "listspec.schema.json"
COMPONENTS = "#/components/schemas/"
VARIABLE_PATTERN = r"\$\{[A-Za-z_][A-Za-z0-9_]*\}"
DISPLAY_MEMBERS = ("title", "columns", "search")


def referenced(schema: Any) -> set[str]:
    """The component names a schema refers to, directly."""
    found: set[str] = set()
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith(COMPONENTS):
            found.add(ref[len(COMPONENTS):])
        for value in schema.values():
            found |= referenced(value)
    elif isinstance(schema, list):
        for value in schema:
            found |= referenced(value)
    return found


def rewritten(schema: Any) -> Any:
    """openrpc.json's schema as a spec file's: $refs into $defs, and patterned strings that
    may hold a variable."""
    if isinstance(schema, list):
        return [rewritten(value) for value in schema]
    if not isinstance(schema, dict):
        return schema
    result = {key: rewritten(value) for key, value in schema.items()}
    ref = result.get("$ref")
    if isinstance(ref, str) and ref.startswith(COMPONENTS):
        result["$ref"] = "#/$defs/" + ref[len(COMPONENTS):]
    if result.get("type") == "string" and "pattern" in result:
        return {"anyOf": [result, {"type": "string", "pattern": VARIABLE_PATTERN,
                                   "description": "a ${NAME} variable, checked once the client substitutes it"}]}
    return result


def make(document: dict[str, Any]) -> dict[str, Any]:
    components = document["components"]["schemas"]
    method = next(m for m in document["methods"] if m["name"] == "createSource")
    params = method.get("x-params-schema") or method["params"][0]["schema"]
    root = params["$ref"][len(COMPONENTS):]

    needed: set[str] = set()
    pending = [root]
    while pending:
        name = pending.pop()
        if name not in needed:
            needed.add(name)
            pending += referenced(components[name])
    defs = {name: rewritten(components[name]) for name in sorted(needed)}

    shorthand_kinds = []
    for kind in defs[root]["oneOf"]:
        kind = copy.deepcopy(kind)
        for member in DISPLAY_MEMBERS:
            kind["properties"][member] = {"$ref": f"#/$defs/ListSpec/properties/{member}"}
        shorthand_kinds.append(kind)

    columns = {
        "type": "array",
        "minItems": 1,
        "description": "the members shown, in order: a key path, or {key, width, title}",
        "items": {
            "anyOf": [
                {"type": "string", "minLength": 1, "description": "a key path: the column's key and title"},
                {
                    "type": "object",
                    "properties": {
                        "key": {"type": "string", "minLength": 1, "description": "a dot-separated key path"},
                        "width": {"type": "integer", "minimum": 1, "description": "columns of text; longer values are cut"},
                        "title": {"type": "string", "description": "the header; default: the key"},
                    },
                    "required": ["key"],
                    "additionalProperties": False,
                },
            ]
        },
    }
    search = {
        "type": "object",
        "description": "search as you type: the query parameter (or, for a GraphQL source, the variable) a "
                       "client's search sets with updateSource, and the key paths its filter matches over "
                       "(default: the columns' keys)",
        "properties": {
            "parameter": {"type": "string", "minLength": 1,
                          "description": "the query parameter holding the search text (updateSource's queryParameters)"},
            "variable": {"type": "string", "minLength": 1,
                         "description": "for a GraphQL source: the variable holding the search text (updateSource's "
                                        "graphql.variables, the source's other variables kept)"},
            "source": {"$ref": "#/$defs/SourceName", "minLength": 1,
                       "description": "the remote or paginated source searched; default: the only one under the list"},
            "debounceMilliseconds": {"type": "integer", "minimum": 0, "maximum": 10000,
                                     "description": "updateSource's debounceMilliseconds: a burst of keystrokes "
                                                    "closer together than this makes one request"},
            "keyPaths": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1},
                         "description": "the key paths a filter's fuzzy match covers (setFilter's match.keyPaths)"},
        },
        "not": {"required": ["parameter", "variable"]},
        "additionalProperties": False,
    }
    list_spec = {
        "type": "object",
        "properties": {
            "$schema": {"type": "string"},
            "title": {"type": "string", "minLength": 1, "description": "the list's title; default: the shown source's name"},
            "sources": {
                "type": "array",
                "minItems": 1,
                "items": {"$ref": f"#/$defs/{root}"},
                "description": "createSource params, children before the sources made from them",
            },
            "show": {
                "anyOf": [
                    {"$ref": "#/$defs/SourceName", "minLength": 1},
                    {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/SourceName", "minLength": 1}},
                ],
                "description": "the source shown (a string is one name), or several (editors show the first, "
                               "the CLI prints each); default: the last source",
            },
            "columns": columns,
            "search": search,
            "maxPages": {"type": "integer", "minimum": 1,
                         "description": "the CLI stops with an error after N pages; editors ignore it"},
            "pages": {"type": "integer", "minimum": 1,
                      "description": "the CLI loads at most N pages of each paginated source; editors ignore it"},
        },
        "required": ["sources"],
        "additionalProperties": False,
    }
    defs.setdefault("SourceName", copy.deepcopy(components["SourceName"]))
    defs["ListSpec"] = list_spec
    defs["OneSource"] = {
        "description": "the shorthand: one source's createSource params, with the display members besides",
        "oneOf": shorthand_kinds,
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:datasourced:listspec",
        "title": "datasourced list spec",
        "description": "A list spec, the same JSON or TOML document for every client (Clients/specs). "
                       f"Generated by Protocol/make-listspec-schema.py from openrpc.json {document['info']['version']}'s "
                       "createSource params: do not edit by hand.",
        # A document with "sources" is a list spec (even a multi source's params: they have
        # "sources" too); any other is the one-source shorthand. if/then/else, not anyOf,
        # so an error names what is wrong with the one the document is read as.
        "type": "object",
        "if": {"required": ["sources"]},
        "then": {"$ref": "#/$defs/ListSpec"},
        "else": {"$ref": "#/$defs/OneSource"},
        "$defs": defs,
    }


def text(document: dict[str, Any]) -> str:
    return json.dumps(make(document), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    wanted = text(json.loads(OPENRPC.read_text(encoding="utf-8")))
    if "--check" in argv:
        if not OUTPUT.exists() or OUTPUT.read_text(encoding="utf-8") != wanted:
            print(f"{OUTPUT} is stale: run python3 {Path(__file__).relative_to(HERE.parent)}", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
