"""The command-line tool, run in-process against the real daemon and fixture API."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO
from datasourced_client.cli import main, parse_arguments, run

EXAMPLE = REPO / "Clients" / "python" / "examples" / "books.toml"


def run_cli(daemon: str, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run(parse_arguments([*argv, "--daemon", daemon]), out, err)
    return status, out.getvalue(), err.getvalue()


def write_config(tmp_path: Path, **source: object) -> Path:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"sources": [{"remoteConfiguration": {"baseURL": "${baseURL}"}, **source}]}))
    return config


def test_the_demo_config_prints_the_paginated_list_then_the_sectioned_view(daemon: str):
    status, out, err = run_cli(daemon, str(EXAMPLE), "--fixtures", str(FIXTURES))
    assert status == 0, err
    books, by_genre = out.strip().split("\n\n")
    lines = books.splitlines()
    assert lines[0] == "books (paginated): 10 objects in 1 section"
    assert lines[1].split() == ["id", "title", "genre", "year"]
    assert lines[3].split() == ["1", "Dune", "science", "fiction", "1950"]
    assert len(lines) == 3 + 10
    assert by_genre.splitlines()[0] == "byGenre (sectioned): 10 objects in 3 sections"
    titles = [line for line in by_genre.splitlines() if line.startswith("## ")]
    assert titles == ["## science fiction", "## poetry", "## mystery"]
    # Progress on stderr: each page requested, its events, then the rows it left.
    assert err.index("books: fetchData") < err.index("← books willLoadData") < err.index("← books finishedLoading")
    assert "books: loaded: 4 objects + ⋯ loading… (page 1 of 3, 10 objects in all)" in err
    assert "books: loaded: 10 objects (page 3 of 3, 10 objects in all)" in err
    assert err.count("← books finishedLoading") == 3


def test_the_demo_serves_the_fixture_file_the_tests_use():
    # One fixture file for the demo and the clients' tests (issue 10).
    demo = (REPO / "scripts" / "demo.sh").read_text()
    assert "--fixtures Clients/fixtures.json" in demo
    assert "Clients/python/examples/books.toml" in demo


def test_a_table_shows_placeholders_as_what_they_mean_but_does_not_count_them(daemon: str):
    status, out, _ = run_cli(daemon, str(EXAMPLE), "--fixtures", str(FIXTURES), "--pages", "1",
                             "--show", "books", "--quiet")
    assert status == 0
    lines = out.strip().splitlines()
    assert lines[0] == "books (paginated): 4 objects + ⋯ loading… in 1 section"
    assert lines[-1] == "⋯ loading…"


def test_jsonl_output_holds_data_rows_only(daemon: str):
    # Issue 10: --format jsonl printed {"$placeholder": "loading"} as a data row.
    status, out, _ = run_cli(daemon, str(EXAMPLE), "--fixtures", str(FIXTURES), "--pages", "1",
                             "--show", "books", "--format", "jsonl", "--quiet")
    assert status == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [row["indexPath"] for row in rows] == [[0, i] for i in range(4)]
    assert [row["object"]["id"] for row in rows] == [1, 2, 3, 4]
    assert "$placeholder" not in out


def test_a_failing_endpoint_exits_1_naming_the_url_and_the_servers_words(daemon: str, daemon_sends_server_text: bool,
                                                                         tmp_path: Path):
    # Issue 10: a failed load said "HTTP status 500" and nothing of where or why.
    config = write_config(tmp_path, name="broken", kind="remote", apiPath="/v1/broken",
                          placeholderStorageOptions=14)
    status, out, err = run_cli(daemon, str(config), "--fixtures", str(FIXTURES))
    assert status == 1
    base_url = re.search(r"fixture API: (\S+)", err)
    assert base_url is not None
    error_line = next(line for line in err.splitlines() if line.startswith("error: "))
    assert error_line.startswith("error: loading 'broken' failed (http): HTTP status 500")
    assert f"{base_url.group(1)}/v1/broken" in error_line
    assert "✗ error: HTTP status 500" in out and "/v1/broken" in out
    server_text = "'the database is on fire'"
    if daemon_sends_server_text:
        assert error_line.endswith(f"/v1/broken: {server_text}")
    else:
        assert server_text not in error_line


def test_a_source_that_keeps_paging_is_stopped_at_the_page_cap(daemon: str, tmp_path: Path):
    config = write_config(tmp_path, name="many", kind="paginated", apiPath="/v1/many", keyPath="books")
    status, out, err = run_cli(daemon, str(config), "--fixtures", str(FIXTURES), "--max-pages", "3")
    assert status == 1
    assert "error: 'many' still has more pages after 3 pages (--max-pages 3): stopped" in err
    assert "/v1/many?page=3" in err  # the last URL asked for
    assert err.count("← many finishedLoading") == 3
    assert out.startswith("many (paginated): 3 objects + ⋯ loading… in 1 section")


def test_an_api_that_ignores_the_page_parameter_is_stopped(daemon: str, tmp_path: Path):
    config = write_config(tmp_path, name="endless", kind="paginated", apiPath="/v1/endless", keyPath="books",
                          identityKey="id")
    status, _, err = run_cli(daemon, str(config), "--fixtures", str(FIXTURES), "--max-pages", "5")
    assert status == 1
    if "failed (loop)" in err:  # protocol 1.1: the daemon's loop guard failed the load
        assert "error: loading 'endless' failed (loop)" in err
        assert "still has more pages" not in err
    else:  # without it, the tool's page cap stops it
        assert "error: 'endless' still has more pages after 5 pages (--max-pages 5): stopped" in err


def test_the_failures_example_reports_both_failures(daemon: str):
    status, out, err = run_cli(daemon, str(EXAMPLE.parent / "failures.toml"), "--fixtures", str(FIXTURES),
                               "--max-pages", "3")
    assert status == 1
    assert "error: loading 'broken' failed (http): HTTP status 500 from http://" in err
    assert "error: 'endless'" in err or "error: loading 'endless' failed (loop)" in err
    assert out.startswith("broken (remote): 0 objects + ✗ error: HTTP status 500 from http://")


def test_pages_limits_loading_on_purpose_without_an_error(daemon: str, tmp_path: Path):
    config = write_config(tmp_path, name="many", kind="paginated", apiPath="/v1/many", keyPath="books")
    status, _, err = run_cli(daemon, str(config), "--fixtures", str(FIXTURES), "--pages", "2", "--max-pages", "2")
    assert status == 0, err
    assert "error" not in err


def test_a_config_the_daemon_refuses_exits_2_naming_the_field(daemon: str, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]):
    config = tmp_path / "bad.toml"
    config.write_text('[[sources]]\nname = "s"\nkind = "sectioned"\nsource = "missing"\nsectioningKey = "k"\n')
    assert main([str(config), "--daemon", daemon]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: createSource: Invalid params:") and '"source"' in err


def test_an_unset_variable_is_reported_before_anything_starts(daemon: str, capsys: pytest.CaptureFixture[str]):
    assert main([str(EXAMPLE), "--daemon", daemon]) == 2
    assert "uses ${baseURL}; pass --set baseURL=VALUE or --fixtures FILE" in capsys.readouterr().err


def test_set_supplies_variables(daemon: str, api: str):
    status, out, _ = run_cli(daemon, str(EXAMPLE), "--set", f"baseURL={api}", "--quiet", "--show", "byGenre")
    assert status == 0
    assert out.startswith("byGenre (sectioned): 10 objects in 3 sections")


def test_the_installed_command_runs_as_a_module(daemon: str):
    finished = subprocess.run(
        [sys.executable, "-m", "datasourced_client", str(EXAMPLE), "--fixtures", str(FIXTURES),
         "--daemon", daemon, "--quiet", "--show", "books", "--format", "jsonl"],
        capture_output=True, text=True, timeout=60, cwd=REPO / "Clients" / "python")
    assert finished.returncode == 0, finished.stderr
    assert len(finished.stdout.splitlines()) == 10


@pytest.mark.parametrize("argv", [["--pages", "0"], ["--max-pages", "0"], ["--format", "xml"]])
def test_bad_options_are_usage_errors(argv: list[str]):
    with pytest.raises(SystemExit) as exit_:
        parse_arguments([str(EXAMPLE), *argv])
    assert exit_.value.code == 2


@pytest.mark.parametrize("example", sorted((REPO / "Clients" / "python" / "examples").glob("paging-*.toml")), ids=lambda p: p.stem)
def test_each_paging_strategy_example_pages_the_whole_list_in_three_loads(daemon: str, example: Path):
    # The same ten books, served in each API's shape (issue 9): the CLI needs no change.
    status, out, err = run_cli(daemon, str(example), "--fixtures", str(FIXTURES), "--format", "jsonl", "--quiet")
    assert status == 0, err
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert [row["object"]["id"] for row in rows] == list(range(1, 11))
    _, _, progress = run_cli(daemon, str(example), "--fixtures", str(FIXTURES))
    assert progress.count("← books finishedLoading") == 3, progress
