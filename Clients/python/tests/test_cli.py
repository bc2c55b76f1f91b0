"""The command-line tool, run in-process against the real daemon and fixture API."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO
from datasourced_client.cli import main, parse_arguments, run

EXAMPLE = REPO / "Clients" / "python" / "examples" / "books.toml"


def run_cli(daemon: str, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run(parse_arguments([*argv, "--daemon", daemon]), out, err)
    return status, out.getvalue(), err.getvalue()


def test_the_demo_config_prints_the_paginated_list_then_the_sectioned_view(daemon: str):
    status, out, err = run_cli(daemon, str(EXAMPLE), "--fixtures", str(FIXTURES))
    assert status == 0, err
    books, by_genre = out.strip().split("\n\n")
    lines = books.splitlines()
    assert lines[0] == "books (paginated): 10 rows in 1 section"
    assert lines[1].split() == ["id", "title", "genre", "year"]
    assert lines[3].split() == ["1", "Dune", "science", "fiction", "1950"]
    assert len(lines) == 3 + 10
    titles = [line for line in by_genre.splitlines() if line.startswith("## ")]
    assert titles == ["## science fiction", "## poetry", "## mystery"]
    # Progress on stderr: each page requested, its events, then the rows it left.
    assert err.index("books: fetchData") < err.index("← books willLoadData") < err.index("← books finishedLoading")
    assert "books: loaded: 4 objects + ⋯ loading… (page 1 of 3, 10 objects in all)" in err
    assert "books: loaded: 10 objects (page 3 of 3, 10 objects in all)" in err
    assert err.count("← books finishedLoading") == 3


def test_jsonl_output_with_a_page_limit_keeps_the_trailing_loading_row(daemon: str):
    status, out, _ = run_cli(daemon, str(EXAMPLE), "--fixtures", str(FIXTURES), "--pages", "1",
                             "--show", "books", "--format", "jsonl", "--quiet")
    assert status == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [row["indexPath"] for row in rows] == [[0, i] for i in range(5)]
    assert [row["object"].get("id") for row in rows[:4]] == [1, 2, 3, 4]
    assert rows[4]["object"] == {"$placeholder": "loading"}


def test_a_failing_endpoint_exits_1_and_shows_the_error_row(daemon: str, tmp_path: Path):
    config = tmp_path / "broken.json"
    config.write_text(json.dumps({"sources": [{
        "name": "broken", "kind": "remote", "remoteConfiguration": {"baseURL": "${baseURL}"},
        "apiPath": "/v1/broken", "placeholderStorageOptions": 14}]}))
    status, out, err = run_cli(daemon, str(config), "--fixtures", str(FIXTURES))
    assert status == 1
    assert "error: loading 'broken' failed (http)" in err
    assert "✗ error: " in out and "500" in out


def test_a_config_the_daemon_refuses_exits_2_naming_the_field(daemon: str, tmp_path: Path, capsys):
    config = tmp_path / "bad.toml"
    config.write_text('[[sources]]\nname = "s"\nkind = "sectioned"\nsource = "missing"\nsectioningKey = "k"\n')
    assert main([str(config), "--daemon", daemon]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: createSource: Invalid params:") and '"source"' in err


def test_an_unset_variable_is_reported_before_anything_starts(daemon: str, capsys):
    assert main([str(EXAMPLE), "--daemon", daemon]) == 2
    assert "uses ${baseURL}; pass --set baseURL=VALUE or --fixtures FILE" in capsys.readouterr().err


def test_set_supplies_variables(daemon: str, api: str):
    status, out, _ = run_cli(daemon, str(EXAMPLE), "--set", f"baseURL={api}", "--quiet", "--show", "byGenre")
    assert status == 0
    assert out.startswith("byGenre (sectioned): 10 rows in 3 sections")


@pytest.mark.parametrize("argv", [["--pages", "0"], ["--format", "xml"]])
def test_bad_options_are_usage_errors(argv: list[str]):
    with pytest.raises(SystemExit) as exit_:
        parse_arguments([str(EXAMPLE), *argv])
    assert exit_.value.code == 2
