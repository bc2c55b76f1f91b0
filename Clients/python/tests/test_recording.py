"""A session driven by this client, recorded by the daemon (``record=``), replays offline:
the fixture API is stopped before ``datasourced replay`` runs the recording."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from conftest import BOOKS, FIXTURES, books_source
from datasourced_client import Client, DaemonExited, LoadFailed
from datasourced_client.fixtures import FixtureServer


@pytest.fixture(scope="module", autouse=True)
def daemon_records(daemon: str) -> None:
    usage = subprocess.run([daemon, "serve", "--help"], capture_output=True, text=True, timeout=30).stdout
    if "--record" not in usage:
        pytest.skip(f"{daemon} has no --record (a daemon built before issue 15)")


def replay(daemon: str, *files: Path | str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([daemon, "replay", *map(str, files)], capture_output=True, text=True, timeout=600)


def record_pages_error_and_cancel(daemon: str, api: str, path: Path) -> None:
    with Client.spawn([daemon], timeout=10, record=path) as client:
        books = books_source(client, api)
        assert books.fetch_all_pages() == 3
        assert [book["id"] for book in books.objects()] == list(range(1, 11))
        broken = client.create_source("broken", kind="remote", remoteConfiguration={"baseURL": api},
                                      apiPath="/v1/broken", placeholderStorageOptions=["loading", "noResults", "errors"])
        with pytest.raises(LoadFailed):
            broken.fetch_data(wait=True)
        slow = client.create_source("slow", kind="remote", remoteConfiguration={"baseURL": api},
                                    apiPath="/v1/slow", keyPath="books")
        assert slow.fetch_data(wait=False) == {"isFetching": True}
        assert slow.cancel_fetch() is True
        assert broken.objects() == []


def steps(path: Path) -> list[dict[str, Any]]:
    return list(json.loads(path.read_text())["steps"])


def test_a_recorded_session_replays_offline_50_times_in_a_row_under_load(daemon: str, tmp_path: Path):
    recording = tmp_path / "session.json"
    with FixtureServer(daemon, FIXTURES) as server:
        record_pages_error_and_cancel(daemon, server.base_url, recording)
        api = server.base_url
    # The API is gone; the recording carries it.
    transcript = json.loads(recording.read_text())
    assert api not in recording.read_text()
    paths = sorted(route["path"] + "?" + "&".join(f"{k}={v}" for k, v in route.get("query", {}).items())
                   for route in transcript["fixtures"])
    assert paths == ["/v1/books?page=1&page_size=4", "/v1/books?page=2&page_size=4", "/v1/books?page=3&page_size=4",
                     "/v1/broken?", "/v1/slow?"]
    released = [step["release"] for step in transcript["steps"] if "release" in step]
    assert len(released) == 4  # three pages and the error; the cancelled request is never answered
    assert transcript["steps"][-1] == {"expectExit": 0}

    # Five replayers at once, ten replays each: the machine is busy while they run.
    with ThreadPoolExecutor(max_workers=5) as pool:
        runs = list(pool.map(lambda _: replay(daemon, *[recording] * 10), range(5)))
    for run in runs:
        assert run.returncode == 0, run.stdout + run.stderr
        assert run.stdout.strip().endswith("10 passed, 0 failed"), run.stdout


def test_a_recording_holds_no_secret(daemon: str, tmp_path: Path):
    recording = tmp_path / "secret.json"
    secrets = {
        "authorization": "Bearer tok-AUTH-8c1f2e77d0",
        "cookie": "sid=COOKIE-77a1b2c3d4",
        "token": "QUERY-TOKEN-5e6f7a8b",
        "password": "hunter2-PW-9d8c",
        "tenant": "acme-TENANT-4242",
        "shard": "SHARD-eu-west-99",
    }
    with FixtureServer(daemon, FIXTURES) as server:
        host = server.base_url.removeprefix("http://")
        remote = {"baseURL": f"http://alice:{secrets['password']}@{host}",
                  "headers": {"Authorization": secrets["authorization"], "Cookie": secrets["cookie"],
                              "X-Tenant": secrets["tenant"]}}
        with Client.spawn([daemon, "--redact", "X-Tenant", "--redact", "shard"], timeout=10, record=recording) as client:
            books = client.create_source("books", kind="paginated", remoteConfiguration=remote, apiPath="/v1/books",
                                         queryParameters={"token": secrets["token"], "shard": secrets["shard"]}, **BOOKS)
            assert books.fetch_all_pages() == 3
            description = books.describe()
            assert description["remoteConfiguration"]["headers"]["X-Tenant"] == secrets["tenant"]  # not secret to the daemon
            broken = client.create_source("broken", kind="remote", remoteConfiguration=remote,
                                          apiPath=f"/v1/broken?token={secrets['token']}")
            with pytest.raises(LoadFailed) as failure:
                broken.fetch_data(wait=True)
            assert "/v1/broken" in str(failure.value)
    text = recording.read_text()
    for name, value in secrets.items():
        assert value not in text, f"the {name} is in the recording"
    assert "COOKIE-77a1b2c3d4" not in text and "tok-AUTH-8c1f2e77d0" not in text
    assert "alice:" not in text
    assert "<redacted>" in text and "%3Credacted%3E" in text
    # Redacted as it was, the session still replays: the placeholders match themselves.
    run = replay(daemon, recording)
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_daemon_killed_mid_session_leaves_a_recording_that_replays(daemon: str, tmp_path: Path):
    recording = tmp_path / "killed.json"
    with FixtureServer(daemon, FIXTURES) as server:
        client = Client.spawn([daemon], timeout=10, record=recording)
        try:
            books = books_source(client, server.base_url)
            books.fetch_data(wait=True)
            slow = client.create_source("slow", kind="remote", remoteConfiguration={"baseURL": server.base_url},
                                        apiPath="/v1/slow", keyPath="books")
            assert slow.fetch_data(wait=False) == {"isFetching": True}  # in flight when the daemon dies
            assert books.count_objects() == 4
            client.ping()  # handled after the requests above, so they are on file by now
            assert client.pid is not None
            os.kill(client.pid, signal.SIGKILL)
            assert client.wait_exit(timeout=10) in (-signal.SIGKILL, 128 + signal.SIGKILL)
        finally:
            try:
                client.close()
            except DaemonExited:
                pass
    recorded = steps(recording)
    sent = [step["send"].get("method") for step in recorded if "send" in step]
    assert sent[:4] == ["initialize", "createSource", "fetchData", "createSource"]
    assert "fetchData" in sent[4:] and not any("expectExit" in step for step in recorded)
    run = replay(daemon, recording)
    assert run.returncode == 0, run.stdout + run.stderr


def test_trim_cuts_after_a_step_and_drops_the_fixtures_left_unused(daemon: str, tmp_path: Path):
    recording = tmp_path / "session.json"
    with FixtureServer(daemon, FIXTURES) as server:
        record_pages_error_and_cancel(daemon, server.base_url, recording)
    recorded = steps(recording)
    # Through the first fetch of the paginated source: its first page only.
    first_fetch = next(index for index, step in enumerated_sends(recorded) if step["method"] == "fetchData")
    trimmed = tmp_path / "trimmed.json"
    run = subprocess.run([daemon, "transcript", "trim", str(recording), "--through-step", str(first_fetch),
                          "--output", str(trimmed)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    transcript = json.loads(trimmed.read_text())
    assert [(route["path"], route.get("query")) for route in transcript["fixtures"]] == [
        ("/v1/books", {"page": "1", "page_size": "4"})]
    assert len(transcript["steps"]) < len(recorded)
    assert not any("release" in step for step in transcript["steps"])  # the page arrived after the cut
    run = replay(daemon, trimmed)
    assert run.returncode == 0, run.stdout + run.stderr


def enumerated_sends(recorded: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    return [(index, step["send"]) for index, step in enumerate(recorded) if "send" in step]


def test_the_environment_turns_recording_on_without_changing_the_command_line(
        daemon: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("DATASOURCED_RECORD", str(tmp_path / "editor-{pid}.json"))
    monkeypatch.setenv("DATASOURCED_REDACT", "X-Tenant, shard")
    with Client.spawn([daemon], timeout=10) as client:
        pid = client.pid
        source = client.create_source("tenant", kind="remote", apiPath="/v1/books",
                                      remoteConfiguration={"baseURL": "http://127.0.0.1:9", "headers": {"X-Tenant": "acme-TENANT-4242"}},
                                      queryParameters={"shard": "SHARD-eu-west-99"})
        assert source.describe()["remoteConfiguration"]["headers"]["X-Tenant"] == "acme-TENANT-4242"
    recording = tmp_path / f"editor-{pid}.json"
    text = recording.read_text()
    assert "acme-TENANT-4242" not in text and "SHARD-eu-west-99" not in text
    run = replay(daemon, recording)
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_recording_that_cannot_be_written_stops_the_daemon_at_once_saying_why(daemon: str, tmp_path: Path):
    run = subprocess.run([daemon, "--record", str(tmp_path / "missing" / "session.json")], input="",
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 64, run.stderr
    assert "missing/session.json" in run.stderr
