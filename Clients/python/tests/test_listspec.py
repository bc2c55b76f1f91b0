"""The list spec (issue 32, item 3): the CLI reads the same document as the editors, and
every spec the package ships or its tests use is valid under Protocol/listspec.schema.json."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from conftest import FIXTURES, REPO
from datasourced_client.listspec import Column, ListSpecError, parse_list_spec, read_list_spec
from test_cli import run_cli

SPECS = REPO / "Clients" / "specs"
SCHEMA = Draft202012Validator(json.loads((REPO / "Protocol" / "listspec.schema.json").read_text()))
SHIPPED = sorted(SPECS.glob("*.json")) + sorted((REPO / "Clients" / "python" / "examples").glob("*.toml"))
BOOKS = {"name": "books", "kind": "paginated", "remoteConfiguration": {"baseURL": "${baseURL}"},
         "apiPath": "/v1/books", "keyPath": "books", "pageSize": 4, "identityKey": "id"}
BY_GENRE = {"name": "byGenre", "kind": "sectioned", "source": "books", "sectioningKey": "genre"}


def decoded(path: Path) -> Any:
    text = path.read_text()
    return tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: path.name)
def test_every_shipped_spec_is_valid_under_the_schema_and_reads(path: Path):
    assert not [error.message for error in SCHEMA.iter_errors(decoded(path))]
    read_list_spec(path, {"baseURL": "http://127.0.0.1:1"})


def write(tmp_path: Path, document: dict[str, Any]) -> Path:
    assert not [error.message for error in SCHEMA.iter_errors(document)], "the test's spec must be valid"
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(document))
    return path


def test_show_as_a_string_is_one_source_not_its_characters(daemon: str, tmp_path: Path):
    # Issue 32: the CLI split "byGenre" into "b, y, G, e, n, r, e", and refused it.
    spec = write(tmp_path, {"sources": [BOOKS, BY_GENRE], "show": "byGenre"})
    status, out, err = run_cli(daemon, str(spec), "--fixtures", str(FIXTURES), "--quiet")
    assert status == 0, err
    assert out.startswith("byGenre (sectioned): 10 objects in 3 sections")
    assert "books (paginated)" not in out


def test_the_one_source_shorthand_is_read_as_a_list_of_it(daemon: str, tmp_path: Path):
    spec = write(tmp_path, dict(BOOKS, title="Books", columns=["id", "title"]))
    status, out, err = run_cli(daemon, str(spec), "--fixtures", str(FIXTURES), "--quiet")
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "books (paginated): 10 objects in 1 section"
    assert lines[1].split() == ["id", "title"]


def test_the_shared_books_spec_prints_its_columns_titles_and_widths(daemon: str):
    status, out, err = run_cli(daemon, str(SPECS / "books.json"), "--fixtures", str(FIXTURES), "--quiet")
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "byGenre (sectioned): 10 objects in 3 sections"
    assert lines[1].split() == ["id", "Title", "Year"]
    assert "Leaves of Grass" in out


def test_a_column_is_cut_to_its_width():
    spec = parse_list_spec({"sources": [BOOKS], "columns": [{"key": "title", "width": 3}, "a.1"]}, {"baseURL": "x"})
    assert spec.columns == [Column("title", "title", 3), Column("a.1", "a.1")]
    assert spec.columns[1].value({"a": [0, "second"]}) == "second"


def test_the_title_defaults_to_the_shown_source_and_show_to_the_last():
    spec = parse_list_spec({"sources": [BOOKS, BY_GENRE]}, {"baseURL": "x"})
    assert (spec.show, spec.title) == (["byGenre"], "byGenre")
    assert spec.sources[0]["remoteConfiguration"] == {"baseURL": "x"}


@pytest.mark.parametrize("document, words", [
    ({"sources": [BOOKS], "show": 3}, "show must be a source name"),
    ({"sources": [BOOKS], "columns": [{"key": "id", "width": 0}]}, "columns[0].width must be a whole number of at least 1"),
    ({"sources": []}, "non-empty \"sources\""),
    ({"title": "nothing"}, "non-empty \"sources\""),
    ({"sources": [BOOKS], "colums": ["id"]}, "unknown member colums"),
    ({"sources": [BOOKS], "maxPages": 0}, "maxPages must be a whole number of at least 1"),
    ({"sources": [BOOKS], "search": {"parameter": "q", "variable": "search"}}, "search has both parameter and variable"),
    ({"sources": [BOOKS], "search": {"variable": ""}}, "search.variable must be a non-empty string"),
])
def test_a_bad_spec_is_refused_naming_the_file_and_member(document: dict[str, Any], words: str):
    assert list(SCHEMA.iter_errors(document)), "the schema refuses it too"
    with pytest.raises(ListSpecError) as raised:
        parse_list_spec(document, {"baseURL": "x"}, "spec.json")
    assert str(raised.value).startswith("spec.json: ")
    assert words in str(raised.value)


def test_a_graphql_search_names_its_variable():
    spec = read_list_spec(REPO / "Clients" / "specs" / "graphql-books.json", {"baseURL": "x"})
    assert spec.search is not None
    assert (spec.search.variable, spec.search.parameter, spec.search.key_paths) == ("search", None, ["title"])
    assert spec.sources[0]["graphql"]["connection"] == "books"


def test_show_must_name_one_of_the_sources():
    # Beyond what a schema can say: the names must match.
    with pytest.raises(ListSpecError, match=r"^spec.json: show names nope, not among the sources \(books\)$"):
        parse_list_spec({"sources": [BOOKS], "show": ["books", "nope"]}, {"baseURL": "x"}, "spec.json")


def test_an_unknown_variable_names_itself_and_the_file():
    with pytest.raises(ListSpecError, match=r"^spec.json: sources\[0\].apiPath uses \$\{where\}"):
        parse_list_spec({"sources": [dict(BOOKS, apiPath="/${where}")]}, {"baseURL": "x"}, "spec.json")
    # $$ is not special: it stays as it is.
    assert parse_list_spec({"sources": [dict(BOOKS, apiPath="/$$")]}, {"baseURL": "x"}).sources[0]["apiPath"] == "/$$"


def test_a_bad_spec_exits_2(daemon: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    from datasourced_client.cli import main
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"sources": [BOOKS], "show": 3}))
    assert main([str(spec), "--daemon", daemon, "--set", "baseURL=http://x"]) == 2
    assert "show must be a source name" in capsys.readouterr().err
