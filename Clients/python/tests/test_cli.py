"""The command-line tool, run in-process against the real daemon and fixture API."""

from __future__ import annotations

import io
import json
import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, REPO, speaks
from datasourced_client import Client
from datasourced_client.cli import main, parse_arguments, run
from datasourced_client.render import write_table
from datasourced_client.snapshot import Section, Snapshot

EXAMPLE = REPO / "Clients" / "python" / "examples" / "books.toml"


def run_cli(daemon: str, *argv: str, cache: Path | None = None) -> tuple[int, str, str]:
    """Runs the tool in-process. Its daemon gets a private cache file: ``cache``, else a
    new one (a first run's), so that runs share a cache only when a test says so."""
    cache = cache or Path(tempfile.mkdtemp(prefix="cli-", dir=os.environ["XDG_CACHE_HOME"])) / "cache.sqlite"
    out, err = io.StringIO(), io.StringIO()
    status = run(parse_arguments([*argv, "--daemon", daemon, "--cache-path", str(cache)]), out, err)
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
    assert "fixtures Clients/fixtures.json" in demo
    assert "Clients/python/examples/books.toml" in demo
    assert "--cache-path" in demo  # a private cache: the demo never touches the user's


def test_a_table_shows_placeholders_as_what_they_mean_but_does_not_count_them(daemon: str):
    status, out, _ = run_cli(daemon, str(EXAMPLE), "--fixtures", str(FIXTURES), "--pages", "1",
                             "--show", "books", "--quiet")
    assert status == 0
    lines = out.strip().splitlines()
    assert lines[0] == "books (paginated): 4 objects + ⋯ loading… in 1 section"
    assert lines[-1] == "⋯ loading…"


def test_a_table_shows_counted_placeholders_as_unloaded_rows_a_run_on_one_line():
    # Issue 31: a list of counted placeholders holds every row of the list, most of them
    # {"$placeholder": "unloaded", "index": N}: counted in the first line, not listed, and
    # each run of them one line ("… rows 4–6"), as a million rows would be.
    def unloaded(index: int) -> dict[str, Any]:
        return {"$placeholder": "unloaded", "index": index}

    rows = [unloaded(0), {"id": 2}, {"id": 3}, unloaded(3), unloaded(4), unloaded(5)]
    snapshot = Snapshot("million", "paginated", [Section("", rows)], 3)
    out = io.StringIO()
    assert write_table(snapshot, out) == 2
    assert out.getvalue().splitlines() == [
        "million (paginated): 2 objects + 4 unloaded in 1 section", "id", "--", "… row 1", "2", "3", "… rows 4–6"]


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
    assert err.startswith(f'error: {config}: source "s": createSource refused: ') and '"source"' in err, err


def test_a_refused_source_names_the_spec_file_and_the_source_with_the_daemons_words(
        daemon: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    spec = tmp_path / "books.json"
    spec.write_text(json.dumps({"sources": [
        {"name": "books", "kind": "remote", "apiPath": "/v1/books", "remoteConfiguration": {"baseURL": "ftp://example.org"}},
    ]}))
    assert main([str(spec), "--daemon", daemon, "--no-cache"]) == 2
    err = capsys.readouterr().err
    # The file and the source first, then the daemon's words: the field and what it expected.
    said = '"remoteConfiguration.baseURL" must be an http or https URL'
    assert err.startswith(f'error: {spec}: source "books": createSource refused: {said}'), err
    # Not the JSON-RPC label and code: the daemon refusing a source is not a protocol problem.
    assert "Invalid params" not in err and "-32602" not in err, err


def test_an_unset_variable_is_reported_before_anything_starts(daemon: str, capsys: pytest.CaptureFixture[str]):
    assert main([str(EXAMPLE), "--daemon", daemon]) == 2
    assert "uses ${baseURL}; pass --set baseURL=VALUE or --fixtures FILE" in capsys.readouterr().err


def test_a_graphql_spec_lists_the_connections_rows_and_pages_on(daemon: str, graphql_api: str):
    spec = REPO / "Clients" / "specs" / "graphql-books.json"
    status, out, err = run_cli(daemon, str(spec), "--set", f"baseURL={graphql_api}", "--pages", "2")
    assert status == 0, err
    # The rows are the connection's edges[].node, four a page (pageSize), counted by totalCount.
    assert "graphqlBooks: loaded: 4 objects + ⋯ loading… (page 1 of ?, 1000 objects in all)" in err
    assert "graphqlBooks: fetchNextPage" in err
    assert "graphqlBooks: loaded: 8 objects + ⋯ loading… (page 2 of ?, 1000 objects in all)" in err
    lines = out.splitlines()
    assert lines[0] == "graphqlBooks (paginated): 8 objects + ⋯ loading… in 1 section"
    assert lines[1].split() == ["id", "Title", "Genre"]
    assert [line.split()[:3] for line in lines[3:11]] == [[str(n), "Book", str(n)] for n in range(8)]
    assert lines[3].split()[3] == "fantasy" and lines[7].split()[3] == "science"


def test_a_spec_asked_for_with_a_post_body_pages_after_the_last_rows_sort_values(daemon: str, search_api: str):
    spec = REPO / "Clients" / "specs" / "search-books.json"
    # The search's documents in the spec's sort, years ascending then ids: year = 1950 + id % 50.
    docs = sorted(({"id": n, "year": 1950 + n % 50} for n in range(1000)), key=lambda doc: (doc["year"], doc["id"]))
    status, out, err = run_cli(daemon, str(spec), "--set", f"baseURL={search_api}", "--pages", "1")
    assert status == 0, err
    assert "searchBooks: loaded: 4 objects + ⋯ loading… (page 1 of ?, ? objects in all)" in err
    lines = out.splitlines()
    assert lines[0] == "searchBooks (paginated): 4 objects + ⋯ loading… in 1 section"
    assert lines[1].split() == ["id", "Title", "Year"]
    # The rows are the hits' _source, mapped to the spec's columns.
    assert [line.split() for line in lines[3:7]] == [
        [str(doc["id"]), "Book", str(doc["id"]), str(doc["year"])] for doc in docs[:4]]
    assert lines[7].strip() == "⋯ loading…"

    status, out, err = run_cli(daemon, str(spec), "--set", f"baseURL={search_api}", "--pages", "2", "--format", "jsonl")
    assert status == 0, err
    assert err.index("searchBooks: loaded: 4 objects") < err.index("searchBooks: fetchNextPage")
    assert "searchBooks: loaded: 8 objects + ⋯ loading… (page 2 of ?, ? objects in all)" in err
    rows = [json.loads(line)["object"] for line in out.splitlines()]
    assert [(row["id"], row["title"], row["year"]) for row in rows] == [
        (doc["id"], f"Book {doc['id']}", doc["year"]) for doc in docs[:8]]
    # The next page is what the server answers to search_after: the last row's sort values
    # (kept by the mapping), the documents after them in its order.
    assert rows[3]["sort"] == [docs[3]["year"], docs[3]["id"]]
    after = [doc for doc in docs if (doc["year"], doc["id"]) > tuple(rows[3]["sort"])]
    assert [row["id"] for row in rows[4:]] == [doc["id"] for doc in after[:4]]


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


@pytest.mark.parametrize("argv", [["--pages", "0"], ["--max-pages", "0"], ["--format", "xml"], ["--refresh", "0.5"],
                                  ["--follow", "0"], ["--max-changes", "1"], ["--follow", "5", "--max-changes", "0"],
                                  ["--cache-path", "x.sqlite", "--no-cache"]])
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


# -- protocol 1.2: the persisted cache and live lists -----------------------------------

STALE_LINE = re.compile(r"^books: showing 10 cached objects, (\d+) ms after fetchData "
                        r"\(cached (\d{4}-\d\d-\d\d \d\d:\d\d) — revalidating\)$", re.MULTILINE)


def speaks_1_2(daemon: str) -> bool:
    with Client.spawn([daemon], timeout=10, cache=False) as client:
        return speaks(client, (1, 2))


def cached_books_config(tmp_path: Path, api_path: str, **remote: object) -> Path:
    config = tmp_path / f"{api_path.strip('/').replace('/', '-')}.json"
    config.write_text(json.dumps({"columns": ["id", "title"], "sources": [{
        "name": "books", "kind": "paginated", "remoteConfiguration": {"baseURL": "${baseURL}", **remote},
        "apiPath": api_path, "keyPath": "books", "pageSize": 4, "identityKey": "id", "cache": {"enabled": True}}]}))
    return config


def test_a_second_run_shows_the_cached_rows_at_once_marked_stale_then_fresh(daemon: str, fresh_api: str,
                                                                          cache_file: Path):
    if not speaks_1_2(daemon):
        pytest.skip("the daemon speaks protocol < 1.2: no persisted cache")
    # The demo's config and API, twice, with one cache file and one server (an entry is
    # named by the base URL among the rest).
    first = run_cli(daemon, str(EXAMPLE), "--set", f"baseURL={fresh_api}", cache=cache_file)
    assert first[0] == 0, first[2]
    assert "cached" not in first[2] and "stale" not in first[1]
    status, out, err = run_cli(daemon, str(EXAMPLE), "--set", f"baseURL={fresh_api}", cache=cache_file)
    assert status == 0, err
    assert out == first[1]  # the same rows: the server confirmed them
    stale = STALE_LINE.search(err)
    assert stale is not None, err
    fresh = err.index("books: fresh: the server confirmed the cached rows, nothing changed")
    # In order: the request, the cached rows, the stale mark, then the server's 304: the
    # mark goes, no change, one load cycle.
    assert err.index("books: fetchData") < err.index("← books didChange: 10 inserted") \
        < err.index("← books didChangeFreshness: stale (cached ") < stale.start() < fresh
    assert err.index("← books didChangeFreshness: fresh") < fresh < err.index("← books finishedLoading")
    assert not re.search(r"← books didChange(:|$)", err[stale.start():], re.MULTILINE)
    assert err.count("← books finishedLoading") == 1 and "fetchNextPage" not in err
    assert "books: loaded: 10 objects (page 3 of 3, 10 objects in all)" in err


def read_lines(stream: io.TextIOBase | None) -> queue.Queue[str | None]:
    """A process's output, line by line, as it comes (``None`` at its end)."""
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert stream is not None
        for line in stream:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def popen_in_foreground(args: list[str], **options: Any) -> subprocess.Popen[str]:
    """Starts ``args`` as a terminal starts a foreground job: Ctrl-C (SIGINT) interrupts it.

    A process started in the background by a non-interactive shell (``bash .ci/run &``)
    ignores SIGINT, and so do its children: a disposition of "ignore" survives exec, and
    Python then installs no KeyboardInterrupt handler. A child of a process that *handles*
    SIGINT starts with the default disposition instead, so the tests' own process handles
    it for as long as it takes to start the child."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(args, **options)
    finally:
        signal.signal(signal.SIGINT, previous)


def test_cached_rows_are_shown_marked_stale_before_the_server_answers(daemon: str, fresh_api: str,
                                                                                  cache_file: Path, tmp_path: Path):
    if not speaks_1_2(daemon):
        pytest.skip("the daemon speaks protocol < 1.2: no persisted cache")
    config = cached_books_config(tmp_path, "/v1/held")
    assert run_cli(daemon, str(config), "--set", f"baseURL={fresh_api}", cache=cache_file)[0] == 0
    # The second run's revalidation of page one is held by the fixture server: no answer
    # comes. The tool says what it shows, and from when, before any.
    second = popen_in_foreground(
        [sys.executable, "-m", "datasourced_client", str(config), "--set", f"baseURL={fresh_api}",
         "--daemon", daemon, "--cache-path", str(cache_file)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO / "Clients" / "python")
    try:
        lines = read_lines(second.stderr)
        said: list[str] = []
        while not said or not STALE_LINE.match(said[-1]):
            line = lines.get(timeout=30)
            assert line is not None, "\n".join(said)
            said.append(line)
        assert "  ← books didChangeFreshness: stale (cached " in said[-2]
        assert not [line for line in said if "books: fresh" in line or "finishedLoading" in line]
        second.send_signal(signal.SIGINT)  # the user gives up waiting
        assert second.wait(timeout=30) == 130
    finally:
        if second.poll() is None:
            second.kill()
    rest: list[str] = []
    while (line := lines.get(timeout=10)) is not None:
        rest.append(line)
    # The daemon's shutdown ended the load it was waiting on; the rows it left were stale.
    assert rest[-1] == "interrupted" and not [line for line in rest if "Traceback" in line], rest
    assert "← books failedWithError: cancelled: cancelled by shutdown" in rest[0]
    assert second.stdout is not None
    second.stdout.close()



def test_rows_no_answer_confirmed_are_printed_marked_stale(daemon: str, fresh_api: str, cache_file: Path,
                                                         tmp_path: Path):
    if not speaks_1_2(daemon):
        pytest.skip("the daemon speaks protocol < 1.2: no persisted cache")
    # The daemon gives up on a request after a second; the second run's is never answered.
    config = cached_books_config(tmp_path, "/v1/held", timeoutSeconds=1)
    assert run_cli(daemon, str(config), "--set", f"baseURL={fresh_api}", cache=cache_file)[0] == 0
    status, out, err = run_cli(daemon, str(config), "--set", f"baseURL={fresh_api}", cache=cache_file)
    assert status == 1
    stale = STALE_LINE.search(err)
    assert stale is not None, err
    assert "error: loading 'books' failed (timeout)" in err and "books: fresh" not in err
    first_line = out.splitlines()[0]
    assert first_line == f"books (paginated): 10 objects in 1 section — stale: cached {stale.group(2)}, " \
                         "not confirmed by the server"
    assert len(out.strip().splitlines()) == 3 + 10


def test_changed_data_replaces_the_cached_rows_and_paging_goes_on(daemon: str, fresh_api: str, cache_file: Path,
                                                                 tmp_path: Path):
    if not speaks_1_2(daemon):
        pytest.skip("the daemon speaks protocol < 1.2: no persisted cache")
    config = cached_books_config(tmp_path, "/v1/revised")
    assert run_cli(daemon, str(config), "--set", f"baseURL={fresh_api}", cache=cache_file)[0] == 0
    # Page one changed on the server (Dune revised): the fresh rows replace the cached ones
    # (the later pages dropped), and the tool pages on.
    status, out, err = run_cli(daemon, str(config), "--set", f"baseURL={fresh_api}", cache=cache_file)
    assert status == 0, err
    # The fixture answers at once: when its fresh rows reach the CLI before it has read the
    # cached ones, the CLI says it showed them, without a count it can no longer read.
    stale = re.search(r"^books: (showing 10 cached objects|showed cached rows), (\d+) ms after fetchData "
                      r"\(cached (\d{4}-\d\d-\d\d \d\d:\d\d) — revalidating\)$", err, re.MULTILINE)
    replaced = re.search(r"^books: fresh: the server's rows replaced the cached ones \((.*)\)$", err, re.MULTILINE)
    assert stale is not None and replaced is not None, err
    assert stale.start() < replaced.start() < err.index("books: fetchNextPage")
    assert replaced.group(1) == "1 inserted, 6 deleted, 1 updated"
    assert err.count("books: fetchNextPage") == 2
    assert out.startswith("books (paginated): 10 objects in 1 section\n") and "1   Dune (revised)" in out


def live_config(tmp_path: Path) -> Path:
    """/v1/live, not live by itself (no refreshIntervalSeconds)."""
    config = tmp_path / "live.json"
    config.write_text(json.dumps({"sources": [{
        "name": "live", "kind": "remote", "remoteConfiguration": {"baseURL": "${baseURL}"}, "apiPath": "/v1/live",
        "keyPath": "books", "identityKey": "id"}]}))
    return config


def test_follow_prints_the_change_a_live_list_brings(daemon: str, fresh_api: str):
    if not speaks_1_2(daemon):
        pytest.skip("the daemon speaks protocol < 1.2: no live lists")
    # /v1/live: the load, then 304 to the first refresh, then a book edited and one added.
    status, out, err = run_cli(daemon, str(EXAMPLE.parent / "live.toml"), "--set", f"baseURL={fresh_api}",
                               "--follow", "30", "--max-changes", "1")
    assert status == 0, err
    table, changes = out.split("\n\n")
    assert table.splitlines()[0] == "live (remote): 3 objects in 1 section"
    change_lines = changes.strip().splitlines()
    # The first change printed is the data's: the 304 before it printed nothing.
    assert re.fullmatch(r"live: 1 inserted, 1 updated \(revision \d+, \d\d:\d\d:\d\d\)", change_lines[0]), out
    assert change_lines[1:] == ["  + [0, 3] 4  Solaris  science fiction  1959",
                                "  ~ [0, 1] 2  Gaudy Night (2nd ed.)  mystery  1953"]
    assert "following live for 30 s (live: live; Ctrl-C stops)" in err
    assert "stopped following: 1 change printed" in err
    assert "willLoadData" not in err[err.index("following live"):]


def test_refresh_makes_the_sources_live_and_jsonl_prints_each_change_as_one_line(daemon: str, fresh_api: str,
                                                                                tmp_path: Path):
    if not speaks_1_2(daemon):
        pytest.skip("the daemon speaks protocol < 1.2: no live lists")
    status, out, err = run_cli(daemon, str(live_config(tmp_path)), "--set", f"baseURL={fresh_api}",
                               "--refresh", "1", "--follow", "30", "--max-changes", "1", "--format", "jsonl")
    assert status == 0, err
    assert "live: live: refreshed every 1 s" in err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["object"]["id"] for line in lines[:3]] == [1, 2, 3]
    change = lines[3]
    assert change["source"] == "live" and isinstance(change["revision"], int)
    assert change["changes"]["inserted"] == [[0, 3]] and change["changes"]["updated"] == [[0, 1]]
    assert change["values"] == {"inserted": [{"id": 4, "title": "Solaris", "genre": "science fiction", "year": 1959}],
                                "updated": [{"id": 2, "title": "Gaudy Night (2nd ed.)", "genre": "mystery",
                                             "year": 1953}]}
    assert len(lines) == 4


# --filter and --match (issue 30): each shown source printed through a filtered source.

def table_ids(section_text: str) -> list[str]:
    """The first cell of each data row of one printed table."""
    return [line.split()[0] for line in section_text.splitlines()[3:] if line and not line.startswith("## ")]


def test_filter_in_the_short_form_prints_the_rows_that_pass(daemon: str):
    status, out, err = run_cli(daemon, str(EXAMPLE), "--fixtures", str(FIXTURES), "--show", "books", "--quiet",
                               "--filter", "genre eq science fiction")
    assert status == 0, err
    assert out.splitlines()[0] == "books/filtered (filtered): 4 objects in 1 section"
    assert table_ids(out.strip()) == ["1", "4", "7", "10"]


def test_filters_combine_and_json_predicates_nest(daemon: str):
    either = json.dumps({"or": [{"keyPath": "year", "op": "lt", "value": 1955},
                                {"keyPath": "genre", "op": "in", "value": ["poetry"]}]})
    status, out, err = run_cli(daemon, str(EXAMPLE), "--fixtures", str(FIXTURES), "--quiet",
                               "--filter", either, "--filter", "title prefix G")
    assert status == 0, err
    books, by_genre = out.strip().split("\n\n")
    assert table_ids(books) == ["2"]  # Gaudy Night: 1953, and starts with G
    assert by_genre.splitlines()[0] == "byGenre/filtered (filtered): 1 object in 3 sections"
    assert table_ids(by_genre) == ["2"]


def test_match_ranks_the_rows_by_a_fuzzy_query_over_the_key_paths_given(daemon: str):
    status, out, err = run_cli(daemon, str(EXAMPLE), "--fixtures", str(FIXTURES), "--show", "books", "--quiet",
                               "--match", "ar", "--match-keys", "title")
    assert status == 0, err
    # Ariel (a word start, then the next letter) before Solaris (inside a word) before
    # Leaves of Grass (an a, and an r later): scored as fzf scores them.
    assert table_ids(out.strip()) == ["3", "4", "9"]


def test_match_looks_in_the_columns_shown_by_default_and_goes_with_filter(daemon: str):
    # The config's columns are id, title, genre, year: "myst" matches the mystery genre.
    status, out, err = run_cli(daemon, str(EXAMPLE), "--fixtures", str(FIXTURES), "--show", "books", "--quiet",
                               "--match", "myst", "--filter", "year ge 1960")
    assert status == 0, err
    assert table_ids(out.strip()) == ["5", "8"]


def test_match_uses_the_list_specs_search_key_paths(daemon: str):
    status, out, err = run_cli(daemon, str(REPO / "Clients" / "specs" / "search.json"), "--fixtures", str(FIXTURES),
                               "--quiet", "--match", "so")
    assert status == 0, err
    # search.keyPaths is ["title"]: Solaris, not the id or the year.
    assert table_ids(out.strip()) == ["4"]


@pytest.mark.parametrize(("text", "expected"), [
    ("genre eq science fiction", {"keyPath": "genre", "op": "eq", "value": "science fiction"}),
    ("year ge 1960", {"keyPath": "year", "op": "ge", "value": 1960}),
    ('year eq "1960"', {"keyPath": "year", "op": "eq", "value": "1960"}),
    ('genre in ["poetry", "mystery"]', {"keyPath": "genre", "op": "in", "value": ["poetry", "mystery"]}),
    ("author.name exists", {"keyPath": "author.name", "op": "exists"}),
    (' {"not": {"keyPath": "year", "op": "lt", "value": 1960}} ',
     {"not": {"keyPath": "year", "op": "lt", "value": 1960}}),
])
def test_the_short_filter_form_reads_its_value_as_json_when_it_is(text: str, expected: dict[str, Any]):
    from datasourced_client.cli import parse_filter
    assert parse_filter(text) == expected


@pytest.mark.parametrize(("text", "said"), [
    ("genre like poetry", "unknown operator 'like': one of eq, ne, lt, le, gt, ge, in, contains, prefix, exists"),
    ("genre", "expected 'KEYPATH OP VALUE'"),
    ("year ge", "ge needs a value: 'year ge VALUE'"),
    ('{"keyPath": "year", ', "is not valid JSON"),
])
def test_a_malformed_filter_is_refused_before_anything_is_sent(text: str, said: str):
    from datasourced_client.cli import ConfigError, parse_filter
    with pytest.raises(ConfigError, match=re.escape(said)):
        parse_filter(text)


def test_a_filter_the_daemon_refuses_exits_2_naming_the_field(daemon: str, capsys: pytest.CaptureFixture[str]):
    status = main([str(EXAMPLE), "--fixtures", str(FIXTURES), "--quiet", "--daemon", daemon, "--no-cache",
                   "--show", "books", "--filter", '{"keyPath": "year", "op": "gt", "value": [1960]}'])
    assert status == 2
    err = capsys.readouterr().err
    assert "filter.value" in err, err


def test_match_keys_without_match_is_a_usage_error(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as exit_:
        parse_arguments(["config.json", "--match-keys", "title"])
    assert exit_.value.code == 2
    assert "--match-keys goes with --match" in capsys.readouterr().err


# -- --action: an action of the list spec on one row (protocol 1.9) ---------------------------

BOOKS_SPEC = REPO / "Clients" / "specs" / "books.json"
BOOKS_SPEC_SOURCE: dict[str, Any] = next(source for source in json.loads(BOOKS_SPEC.read_text())["sources"]
                                          if source["name"] == "books")


def act_cli(daemon: str, *argv: str) -> tuple[int, str, str]:
    with Client.spawn(daemon) as client:
        if not speaks(client, (1, 9)):
            pytest.skip("the daemon does not speak protocol 1.9 (actions)")
    return run_cli(daemon, str(BOOKS_SPEC), "--fixtures", str(FIXTURES), *argv)


def test_action_prints_the_committed_settlement_instead_of_the_rows(daemon: str):
    status, out, err = act_cli(daemon, "--action", "edit", "--identity", "1", "--value", "title=Dune Messiah")
    assert status == 0, err
    assert json.loads(out) == {"mutation": "m1", "action": "edit", "source": "books", "status": "committed"}
    assert "books: edit on 1: performAction" in err
    assert "← books didSettleMutation: edit m1 committed" in err
    assert "books: edit on 1: committed (m1)" in err


def test_action_values_are_read_by_their_declared_types(daemon: str):
    status, out, err = act_cli(daemon, "--action", "add", "--value", "title=Beloved", "--value", "genre=fiction",
                               "--value", "year=1987")
    assert status == 0, err
    assert json.loads(out)["status"] == "committed"  # the fixture answers only "year": 1987, a number


def test_a_rolled_back_action_exits_1_with_the_servers_words(daemon: str):
    status, out, err = act_cli(daemon, "--action", "edit", "--identity", "2", "--value", "title=")
    assert status == 1
    settlement = json.loads(out)
    assert settlement["status"] == "rolledBack"
    assert settlement["error"]["serverMessage"] == "title: This field may not be blank."
    assert "error: edit on 2 was rolled back (http): HTTP status 400 from " in err
    assert err.rstrip().endswith("'title: This field may not be blank.'")


def test_a_conflicting_action_exits_1_naming_the_conflict(daemon: str):
    status, out, err = act_cli(daemon, "--quiet", "--action", "edit", "--identity", "4", "--value", "title=x")
    assert status == 1
    assert json.loads(out)["error"]["kind"] == "conflict"
    assert err.startswith("error: edit on 4 was rolled back (conflict): HTTP status 409 from ")
    assert "'Someone else changed this book.'" in err


def test_an_action_still_queued_after_the_timeout_is_cancelled(daemon: str):
    status, out, err = act_cli(daemon, "--quiet", "--timeout", "2", "--action", "edit", "--identity", "3",
                               "--value", "title=x")
    assert status == 1
    settlement = json.loads(out)
    assert (settlement["status"], settlement["error"]["kind"]) == ("rolledBack", "cancelled")
    assert "did not settle within 2 s: queued after HTTP status 503" in err
    assert "'Down for maintenance.' (retry after 3600.0 s); cancelled" in err


def test_ctrl_c_while_an_action_is_queued_cancels_it_and_leaves_no_mutation_in_the_cache(
        daemon: str, fresh_api: str, cache_file: Path, tmp_path: Path):
    with Client.spawn(daemon) as client:
        if not speaks(client, (1, 9)):
            pytest.skip("the daemon does not speak protocol 1.9 (actions)")
    # A cached source: a mutation left pending would be kept in the cache file, for the
    # next daemon on it to send.
    books = {**BOOKS_SPEC_SOURCE, "remoteConfiguration": {"baseURL": "${baseURL}"}, "cache": {"enabled": True}}
    spec = tmp_path / "cached-books.json"
    spec.write_text(json.dumps({"sources": [books], "columns": ["id", "title"]}))
    # A session of its own, as a terminal's foreground job: Ctrl-C goes to its whole
    # process group, the daemon included unless the tool keeps it out.
    tool = popen_in_foreground(
        [sys.executable, "-m", "datasourced_client", str(spec), "--set", f"baseURL={fresh_api}", "--daemon", daemon,
         "--cache-path", str(cache_file), "--action", "edit", "--identity", "3", "--value", "title=Ariel (revised)"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO / "Clients" / "python",
        start_new_session=True)
    try:
        lines = read_lines(tool.stderr)
        said: list[str] = []
        while not said or said[-1] != "books: edit on 3: queued, to be sent again (Ctrl-C cancels it)":
            line = lines.get(timeout=30)
            assert line is not None, "\n".join(said)
            said.append(line)
        os.killpg(tool.pid, signal.SIGINT)
        assert tool.wait(timeout=30) == 130
    finally:
        if tool.poll() is None:
            tool.kill()
    rest: list[str] = []
    while (line := lines.get(timeout=10)) is not None:
        rest.append(line)
    assert tool.stdout is not None
    settlement = json.loads(tool.stdout.read())
    tool.stdout.close()
    assert (settlement["status"], settlement["error"]["kind"]) == ("rolledBack", "cancelled")
    assert f"  ← books didSettleMutation: edit {settlement['mutation']} rolledBack (cancelled: " \
           "cancelled by cancelMutation)" in rest, rest
    assert f"error: edit on 3 ({settlement['mutation']}) cancelled (Ctrl-C): its change undone" in rest
    assert rest[-1] == "interrupted" and not [line for line in rest if "Traceback" in line], rest
    # The next daemon on the cache file has no mutation to send.
    with Client.spawn(daemon, cache=cache_file) as client:
        source = client.create_source("books", kind="paginated", **{
            **{k: v for k, v in books.items() if k not in ("name", "kind")},
            "remoteConfiguration": {"baseURL": fresh_api}})
        source.fetch_data(wait=True)
        assert source.pending_mutations() == []
        assert {row["id"]: row["title"] for row in source.objects() if isinstance(row, dict)}[3] == "Ariel"


@pytest.mark.parametrize(("argv", "said"), [
    (["--action", "add", "--value", "title=Beloved", "--value", "year=soon"],
     "--action add: year must be an integer, got 'soon'"),
    (["--action", "add", "--value", "year=1987"], "--action add: add needs title: pass --value title=..."),
    (["--action", "edit", "--identity", "1", "--value", "author=x"],
     "--action edit: edit declares no value 'author'; it takes: title (string)"),
    (["--action", "rename", "--identity", "1"],
     "--action rename: no source of the config declares it (declared: books.edit, books.delete, books.add)"),
    (["--action", "edit", "--on", "byGenre", "--identity", "1", "--value", "title=x"],
     "--action edit: 'byGenre' declares no such action"),
])
def test_an_action_the_tool_cannot_send_exits_2_before_anything_changes(daemon: str, argv: list[str], said: str,
                                                                         capsys: pytest.CaptureFixture[str]):
    with Client.spawn(daemon) as client:
        if not speaks(client, (1, 9)):
            pytest.skip("the daemon does not speak protocol 1.9 (actions)")
    status = main([str(BOOKS_SPEC), "--fixtures", str(FIXTURES), "--daemon", daemon, "--no-cache", "--quiet", *argv])
    assert status == 2
    assert said in capsys.readouterr().err


def test_an_identity_no_row_has_is_refused_by_the_daemon_with_exit_2(daemon: str,
                                                                      capsys: pytest.CaptureFixture[str]):
    with Client.spawn(daemon) as client:
        if not speaks(client, (1, 9)):
            pytest.skip("the daemon does not speak protocol 1.9 (actions)")
    status = main([str(BOOKS_SPEC), "--fixtures", str(FIXTURES), "--daemon", daemon, "--no-cache", "--quiet",
                   "--action", "delete", "--identity", "404"])
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith("error: performAction: ") and "identity" in err


@pytest.mark.parametrize("argv", [["--identity", "1"], ["--value", "title=x"], ["--on", "books"]])
def test_action_options_without_action_are_usage_errors(argv: list[str]):
    with pytest.raises(SystemExit) as exit_:
        parse_arguments([str(EXAMPLE), *argv])
    assert exit_.value.code == 2
