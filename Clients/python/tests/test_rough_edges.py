"""The rough edges a new user hit (issue 32, item 5), each as it should be now."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import pkgutil
import time
import tomllib
from pathlib import Path

import pytest

import datasourced_client
from conftest import FIXTURES, REPO
from datasourced_client import AsyncClient, Client, DatasourcedError, DatasourcedTimeout
from datasourced_client.cli import main
from test_cli import run_cli

SPECS = REPO / "Clients" / "specs"


def test_a_directory_as_the_daemon_is_a_clear_error_with_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    # Issue 32: a full PermissionError traceback.
    assert main([str(SPECS / "books.json"), "--daemon", str(tmp_path), "--set", "baseURL=http://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert f"error: the daemon {str(tmp_path)!r} is a directory, not the datasourced executable: pass --daemon PATH" in err
    assert "Traceback" not in err


def test_no_daemon_on_the_path_with_fixtures_says_how_to_name_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch):
    # Issue 32: "[Errno 2] No such file or directory: 'datasourced'".
    monkeypatch.delenv("DATASOURCED", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main([str(SPECS / "books.json"), "--fixtures", str(FIXTURES)]) == 2
    err = capsys.readouterr().err
    assert "error: no 'datasourced' on the PATH to run the daemon: pass --daemon PATH" in err
    assert "set $DATASOURCED" in err
    assert "Errno" not in err


def test_the_library_names_a_directory_it_cannot_run():
    with pytest.raises(PermissionError, match="cannot start the daemon .*: is a directory; .*DATASOURCED"):
        Client.spawn(str(REPO))


def test_version_prints_the_packages_version(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as exit:
        main(["--version"])
    assert exit.value.code == 0
    assert capsys.readouterr().out.strip() == f"datasourced-client {datasourced_client.__version__}"
    assert datasourced_client.__version__ != "unknown"


def test_the_project_metadata_has_authors_classifiers_and_keywords():
    # pyproject.toml, not the installed copy's metadata: other checkouts on the machine may
    # install theirs meanwhile. (A license and URLs wait for the maintainers: the
    # repository has no LICENSE file and no public home yet.)
    project = tomllib.loads((REPO / "Clients" / "python" / "pyproject.toml").read_text())["project"]
    assert project["authors"] and all(author.get("name") for author in project["authors"])
    assert "Programming Language :: Python :: 3" in project["classifiers"]
    assert "Typing :: Typed" in project["classifiers"]
    assert "json-rpc" in project["keywords"]


def undocumented() -> list[str]:
    """Every public module, class, function, method and property of the package without a
    docstring of its own (an inherited one does not count)."""
    missing = []
    for info in pkgutil.iter_modules(datasourced_client.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"datasourced_client.{info.name}")
        if not (module.__doc__ or "").strip():
            missing.append(module.__name__)
        for name in getattr(module, "__all__", []):
            member = getattr(module, name)
            if not (inspect.isclass(member) or inspect.isfunction(member)) or member.__module__ != module.__name__:
                continue
            own = vars(member).get("__doc__") if inspect.isclass(member) else member.__doc__
            if not (own or "").strip():
                missing.append(f"{module.__name__}.{name}")
            if inspect.isclass(member):
                for attribute, value in vars(member).items():
                    if attribute.startswith("_"):
                        continue
                    function = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
                    if (callable(function) or isinstance(value, property)) and not (function.__doc__ or "").strip():
                        missing.append(f"{module.__name__}.{name}.{attribute}")
    return missing


def test_every_public_member_has_a_docstring():
    assert undocumented() == []


def test_a_timeout_is_a_datasourced_error_and_still_a_timeout_error(client: Client):
    with pytest.raises(DatasourcedError) as raised:
        client.request("ping", {"delayMilliseconds": 5000}, timeout=0.2)
    assert isinstance(raised.value, DatasourcedTimeout) and isinstance(raised.value, TimeoutError)
    assert "ping: no answer from datasourced within 0.2 s" in str(raised.value)


async def test_cancelling_an_awaited_fetch_data_cancels_the_load(aclient: AsyncClient, api: str):
    # Issue 32: the daemon went on loading (here, /v1/slow answers after 3 s).
    slow = await aclient.create_source("slowCancelled", kind="remote", remoteConfiguration={"baseURL": api},
                                       apiPath="/v1/slow")
    async with aclient.events(timeout=10, source="slowCancelled") as events:
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(slow.fetch_data(wait=True), 0.3)
        final = None
        async for event in events:
            if event.is_final:
                final = event
                break
    assert final is not None and final.kind == "failedWithError", final
    assert (final.error or {}).get("kind") == "cancelled"
    assert time.monotonic() - started < 2.5, "cancelled, not finished by the server"
    assert not await slow.is_fetching()


async def test_cancelling_the_task_of_a_fetch_data_cancels_the_load(aclient: AsyncClient, api: str):
    slow = await aclient.create_source("slowTask", kind="remote", remoteConfiguration={"baseURL": api},
                                       apiPath="/v1/slow")
    async with aclient.events(timeout=10, source="slowTask") as events:
        task = asyncio.create_task(slow.fetch_data(wait=True))
        async for event in events:
            if event.kind == "willLoadData":
                break
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        kinds = []
        async for event in events:
            kinds.append(event.kind)
            if event.is_final:
                break
    assert kinds[-1] == "failedWithError"


async def test_async_with_spawn_starts_and_closes_the_client(daemon: str):
    async with AsyncClient.spawn(daemon, timeout=10) as client:
        assert await client.list_sources() == []
    assert client.returncode == 0
    awaited = await AsyncClient.spawn(daemon, timeout=10)  # the older way still works
    assert await awaited.close() == 0


def test_a_failed_source_without_an_error_row_prints_the_error(daemon: str):
    # Issue 32: "broken (remote): 0 objects in 1 section" and blank lines.
    status, out, err = run_cli(daemon, str(SPECS / "failing.json"), "--fixtures", str(FIXTURES), "--quiet")
    assert status == 1
    first = out.splitlines()[0]
    assert first.startswith("broken (remote): no rows: loading 'broken' failed (http): HTTP status 500 from ")
    assert "/v1/broken" in first
    assert "0 objects" not in out
    assert out.strip() == first
