"""The package itself: one version, type information, the daemon's command line, and
notifications known from the daemon rather than from a copied list."""

from __future__ import annotations

import time
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

import datasourced_client
from datasourced_client import (
    AsyncClient,
    Client,
    Event,
    IncompatibleDaemon,
    LoadFailed,
    daemon_command,
    describe_fetch_error,
)

PACKAGE = Path(datasourced_client.__file__).resolve().parent
PYPROJECT = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())


def test_the_version_is_written_once_in_pyproject():
    assert datasourced_client.__version__ == PYPROJECT["project"]["version"]
    sources = "".join(path.read_text() for path in PACKAGE.glob("*.py"))
    assert PYPROJECT["project"]["version"] not in sources


def test_the_daemon_hears_the_clients_version(daemon: str):
    with Client.spawn([daemon, "--log-level", "debug"], timeout=10) as client:
        client.ping()
        # The daemon's log line and the answer to ping travel on two pipes: the line may be
        # read after the answer, so wait for it (a loaded machine took more than close's second).
        deadline = time.monotonic() + 10
        while datasourced_client.__version__ not in "\n".join(client.stderr_tail) and time.monotonic() < deadline:
            time.sleep(0.01)
        logs = "\n".join(client.stderr_tail)
    assert datasourced_client.__version__ in logs, logs


def test_the_installed_distribution_carries_its_type_information():
    try:
        distribution = metadata.distribution("datasourced-client")
    except metadata.PackageNotFoundError:
        pytest.skip("datasourced-client is not installed here: tests/run.sh installs it (pip install Clients/python)")
    assert distribution.version == PYPROJECT["project"]["version"]
    files = {str(path) for path in distribution.files or []}
    assert "datasourced_client/py.typed" in files
    assert "datasourced_client/async_client.py" in files
    assert not list(PACKAGE.parent.glob("*.egg-info")) and not (PACKAGE.parent / "build").exists()


def test_the_daemon_command_takes_a_path_whole_and_splits_only_the_environment(monkeypatch: pytest.MonkeyPatch):
    assert daemon_command("/opt/my tools/datasourced") == ["/opt/my tools/datasourced"]
    assert daemon_command(Path("/opt/datasourced")) == ["/opt/datasourced"]
    assert daemon_command(["/opt/datasourced", Path("x")]) == ["/opt/datasourced", "x"]
    monkeypatch.setenv("DATASOURCED", "'/opt/my tools/datasourced' --log-level debug")
    assert daemon_command() == ["/opt/my tools/datasourced", "--log-level", "debug"]
    monkeypatch.delenv("DATASOURCED")
    assert daemon_command() == ["datasourced"]
    with pytest.raises(ValueError):
        daemon_command([])


def test_record_asks_the_daemon_to_record_the_session(tmp_path: Path):
    transcript = tmp_path / "session.json"
    assert daemon_command("/opt/datasourced", record=transcript) == ["/opt/datasourced", "--record", str(transcript)]
    assert Client("/opt/datasourced", record=transcript).command[-2:] == ["--record", str(transcript)]
    assert AsyncClient(["/opt/datasourced"], record=str(transcript)).command[-2:] == ["--record", str(transcript)]


async def test_notifications_are_those_the_daemon_announced(aclient: AsyncClient):
    received: list[Event] = []
    aclient.on_event(received.append)
    announced = sorted(aclient.notifications)
    assert announced, "the daemon announces its notifications in initialize"
    for method in announced:
        aclient._on_notification(method, {"source": "s"})
    aclient._on_notification("dataSource/neverAnnounced", {"source": "s"})
    assert [event.method for event in received] == announced


def test_a_daemon_of_another_major_version_is_refused():
    client = AsyncClient("/opt/datasourced")
    with pytest.raises(IncompatibleDaemon, match="speaks protocol 2.0; this client speaks 1.x"):
        client._initialized({"protocolVersion": "2.0", "capabilities": {}})
    client._initialized({"protocolVersion": "1.7", "capabilities": {"notifications": ["dataSource/x"]}})
    assert client.notifications == frozenset({"dataSource/x"})


def test_a_fetch_error_is_put_into_words_with_its_url_and_the_servers_own_text():
    url = "http://127.0.0.1:9/v1/books?page=2"
    error = {"kind": "http", "message": "HTTP status 500", "status": 500, "url": url}
    assert describe_fetch_error(error) == f"HTTP status 500 from {url}"
    assert describe_fetch_error({**error, "serverMessage": "the database is on fire"}) == \
        f"HTTP status 500 from {url}: 'the database is on fire'"
    # Without the server's message, the start of the body, on one line.
    assert describe_fetch_error({**error, "body": "<html>\n  <b>Bad   gateway</b>\n</html>"}) == \
        f"HTTP status 500 from {url}: '<html> <b>Bad gateway</b> </html>'"
    assert describe_fetch_error({**error, "finalURL": "http://127.0.0.1:9/moved", "retryAfterSeconds": 30}) == \
        "HTTP status 500 from http://127.0.0.1:9/moved (retry after 30 s)"
    loop = {"kind": "loop", "message": f"page 2 repeats page 1 ({url})", "url": url}
    assert describe_fetch_error(loop) == f"page 2 repeats page 1 ({url})"  # the URL is said once
    assert str(LoadFailed("books", {**error, "serverMessage": "busy"})) == \
        f"loading 'books' failed (http): HTTP status 500 from {url}: 'busy'"
