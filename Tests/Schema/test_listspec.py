"""Protocol/listspec.schema.json, the list spec every client opens (Clients/specs, the Python
CLI's examples): generated from openrpc.json's createSource params and not stale, valid
as a schema, accepting the shipped specs and refusing the mistakes users make.

Run by scripts/test.sh (pytest)."""

from __future__ import annotations

import importlib.util
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

REPO = Path(__file__).resolve().parents[2]
SCHEMA_FILE = REPO / "Protocol" / "listspec.schema.json"
SCHEMA = json.loads(SCHEMA_FILE.read_text())
VALIDATOR = Draft202012Validator(SCHEMA)
SPECS = sorted((REPO / "Clients" / "specs").glob("*.json")) + sorted((REPO / "Clients" / "specs").glob("*.toml"))
PYTHON_EXAMPLES = sorted((REPO / "Clients" / "python" / "examples").glob("*.toml"))


def generator() -> Any:
    spec = importlib.util.spec_from_file_location("make_listspec_schema", REPO / "Protocol" / "make-listspec-schema.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    return tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)


def problems(instance: object) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:200]}" for e in VALIDATOR.iter_errors(instance)]


BOOK_SOURCE = {"name": "books", "kind": "paginated", "remoteConfiguration": {"baseURL": "${baseURL}"},
               "apiPath": "/v1/books", "keyPath": "books", "pageSize": 4, "identityKey": "id"}


def test_the_committed_schema_is_what_the_generator_makes_from_openrpc_json() -> None:
    module = generator()
    wanted = module.text(json.loads((REPO / "Protocol" / "openrpc.json").read_text()))
    assert SCHEMA_FILE.read_text() == wanted, "Protocol/listspec.schema.json is stale: run python3 Protocol/make-listspec-schema.py"


def test_the_sources_schema_is_openrpc_json_createsource_params() -> None:
    openrpc = json.loads((REPO / "Protocol" / "openrpc.json").read_text())
    source_spec = openrpc["components"]["schemas"]["SourceSpec"]
    kinds = [branch["properties"]["kind"]["const"] for branch in source_spec["oneOf"]]
    assert [b["properties"]["kind"]["const"] for b in SCHEMA["$defs"]["SourceSpec"]["oneOf"]] == kinds
    assert SCHEMA["$defs"]["ListSpec"]["properties"]["sources"]["items"] == {"$ref": "#/$defs/SourceSpec"}


def test_the_schema_is_a_valid_json_schema() -> None:
    Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("path", SPECS + PYTHON_EXAMPLES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_shipped_spec_is_valid(path: Path) -> None:
    assert not problems(read(path))


def test_the_shared_specs_are_there() -> None:
    names = {path.name for path in SPECS}
    assert {"books.json", "failing.json"} <= names


@pytest.mark.parametrize("spec", [
    {"sources": [BOOK_SOURCE]},
    {"sources": [BOOK_SOURCE], "show": "books", "title": "Books", "columns": ["id", {"key": "title", "width": 18, "title": "Title"}]},
    {"sources": [BOOK_SOURCE], "show": ["books"], "maxPages": 3},
    dict(BOOK_SOURCE, title="Books", columns=["id"]),  # the one-source shorthand
    {"name": "all", "kind": "simple", "objects": [{"id": 1}]},
])
def test_good_specs_are_accepted(spec: dict[str, Any]) -> None:
    assert not problems(spec)


@pytest.mark.parametrize("spec, where", [
    ({"sources": [BOOK_SOURCE], "show": 3}, "show"),
    ({"sources": [BOOK_SOURCE], "show": ""}, "show"),
    ({"sources": [BOOK_SOURCE], "columns": [{"key": "id", "width": 0}]}, "columns/0"),
    ({"sources": [BOOK_SOURCE], "columns": []}, "columns"),
    ({"sources": []}, "sources"),
    ({"title": "no sources"}, "(top)"),
    ({"sources": [BOOK_SOURCE], "colums": ["id"]}, "(top)"),
    ({"sources": [dict(BOOK_SOURCE, pageSize="4")]}, "sources/0"),
    ({"sources": [dict(BOOK_SOURCE, remoteConfiguration={"baseURL": "ftp://x"})]}, "sources/0"),
    (dict(BOOK_SOURCE, show="books"), "(top)"),  # show belongs to a list spec, not to a source
])
def test_bad_specs_are_refused_where_they_are_wrong(spec: dict[str, Any], where: str) -> None:
    found = problems(spec)
    assert found, f"accepted: {spec}"
    assert any(problem.startswith(where + ":") for problem in found), found


def test_a_variable_stands_for_a_patterned_string_only_whole_or_inside() -> None:
    assert not problems({"sources": [dict(BOOK_SOURCE, remoteConfiguration={"baseURL": "http://${host}:8080"})]})
    assert problems({"sources": [dict(BOOK_SOURCE, remoteConfiguration={"baseURL": "$host"})]})
