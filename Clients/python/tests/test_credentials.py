"""Credentials sent only where the user allowed them: a header value read from the daemon's
environment or a file goes to an origin only after ``allowCredential`` (Protocol.md,
"Credentials from the environment or a file"). Against the real daemon and the fixture
API's ``/_echo/headers``, which answers the request's headers: the rows say whether the
credential was sent.

Every daemon here records its allowances under a $XDG_CONFIG_HOME of the test's own
(``config_home``), inside the session's private one (conftest.py): never the user's."""

from __future__ import annotations

import io
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO
from datasourced_client import Client, CredentialRequest, LoadFailed, RPCError, credential_requests
from datasourced_client.cli import ask_on_terminal, credential_hint, main, parse_allowance, parse_arguments, run

DOCUMENT: dict[str, Any] = json.loads((REPO / "Protocol" / "openrpc.json").read_text())
DOCUMENTED = any(method["name"] == "allowCredential" for method in DOCUMENT["methods"])


@pytest.fixture(scope="session")
def allowances(daemon: str) -> None:
    """Skips the test when neither the daemon nor Protocol/openrpc.json has allowCredential
    (a tree from before it); once either has it, the test runs."""
    with Client.spawn(daemon, timeout=10) as client:
        served = "allowCredential" in client.capabilities.get("methods", [])
    if not (served or DOCUMENTED):
        pytest.skip("neither the daemon nor Protocol/openrpc.json has allowCredential")


needs_allowances = pytest.mark.usefixtures("allowances")

TOKEN = "DATASOURCED_TEST_TOKEN"
SECRET = "s3cret-token"


@pytest.fixture
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A $XDG_CONFIG_HOME of this test's own for the daemons it starts, and the token in
    their environment."""
    home = tmp_path / "config"
    home.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.setenv(TOKEN, SECRET)
    return home


def echo_source(api: str, name: str = "echo", **credential: str) -> dict[str, Any]:
    """A remote source whose one row is the headers its request was sent with."""
    value = dict(credential or {"env": TOKEN}, prefix="Bearer ")
    return {"name": name, "kind": "remote", "apiPath": "/_echo/headers",
            "remoteConfiguration": {"baseURL": api, "headers": {"Authorization": value}}}


def create(client: Client, params: dict[str, Any]) -> Any:
    params = dict(params)
    return client.create_source(params.pop("name"), params.pop("kind"), **params)


# -- what the client makes of the error, without a daemon -----------------------------------


def test_a_credential_request_is_read_from_the_error_and_put_into_words():
    error = {"kind": "credentialNotAllowed", "message": "not allowed", "credential": {"env": "GITHUB_TOKEN"},
             "origin": "https://api.github.com", "url": "https://api.github.com/repos/o/r/issues"}
    request = CredentialRequest.of(error)
    assert request == CredentialRequest("https://api.github.com", env="GITHUB_TOKEN")
    assert request.question() == "Allow the daemon to send the environment variable GITHUB_TOKEN to https://api.github.com?"
    assert request.params() == {"env": "GITHUB_TOKEN", "origin": "https://api.github.com"}
    assert request.option() == "GITHUB_TOKEN=https://api.github.com"
    file_request = CredentialRequest.of(dict(error, credential={"file": "~/.config/x/token"}))
    assert file_request is not None and file_request.what == "the file ~/.config/x/token"
    assert CredentialRequest.of(dict(error, kind="http")) is None
    assert LoadFailed("issues", error).credential_requests == [request]  # type: ignore[arg-type]


def test_a_multi_sources_failure_names_each_credential_its_children_lacked_once():
    lacked = {"kind": "credentialNotAllowed", "message": "m", "credential": {"env": "A"}, "origin": "https://a.example"}
    error = {"kind": "children", "message": "m", "failures": [
        {"source": "one", "error": lacked}, {"source": "two", "error": lacked},
        {"source": "three", "error": {"kind": "http", "message": "HTTP status 500"}}]}
    assert credential_requests(error) == [CredentialRequest("https://a.example", env="A")]


@pytest.mark.parametrize("text, expected", [
    ("GITHUB_TOKEN=https://api.github.com", CredentialRequest("https://api.github.com", env="GITHUB_TOKEN")),
    ("~/.config/x/token=https://api.example.com:8443", CredentialRequest("https://api.example.com:8443",
                                                                         file="~/.config/x/token")),
    ("/run/secrets/a=b=http://127.0.0.1:8080", CredentialRequest("http://127.0.0.1:8080", file="/run/secrets/a=b")),
])
def test_allow_credential_reads_a_variable_or_a_path_and_an_origin(text: str, expected: CredentialRequest):
    assert parse_allowance(text) == expected
    assert parse_arguments(["spec.json", "--allow-credential", text]).allow_credentials == [text]


@pytest.mark.parametrize("text", ["GITHUB_TOKEN", "=https://api.github.com", "GITHUB_TOKEN="])
def test_a_malformed_allow_credential_is_refused_before_the_daemon_starts(text: str, capsys: pytest.CaptureFixture[str]):
    assert main(["spec.json", "--allow-credential", text, "--daemon", "/nonexistent"]) == 2
    assert "--allow-credential expects NAME=ORIGIN" in capsys.readouterr().err


def test_the_prompt_asks_on_stderr_and_only_y_is_a_yes():
    request = CredentialRequest("https://api.github.com", env="GITHUB_TOKEN")
    for answer, expected in [("y\n", True), ("YES\n", True), ("\n", False), ("n\n", False), ("", False),
                             ("yep\n", False)]:
        prompt = io.StringIO()
        assert ask_on_terminal(request, prompt, io.StringIO(answer)) is expected
        assert prompt.getvalue().startswith(
            "Allow the daemon to send the environment variable GITHUB_TOKEN to https://api.github.com? [y/N] ")


def test_the_hint_names_the_option_that_allows_it():
    error = {"kind": "credentialNotAllowed", "message": "m", "credential": {"file": "~/t"}, "origin": "http://h:81"}
    hint = credential_hint(LoadFailed("s", error))  # type: ignore[arg-type]
    assert hint is not None and "--allow-credential ~/t=http://h:81" in hint and "the file ~/t to http://h:81" in hint
    assert credential_hint(LoadFailed("s", {"kind": "http", "message": "m"})) is None


# -- the client against the daemon ----------------------------------------------------------


@needs_allowances
def test_a_credential_goes_out_only_once_allowed_and_the_allowance_outlives_the_daemon(daemon: str, api: str,
                                                                                       config_home: Path):
    with Client.spawn(daemon, timeout=10) as client:
        echo = create(client, echo_source(api))
        with pytest.raises(LoadFailed) as refused:
            echo.fetch_data(wait=True)
        error = refused.value.error
        assert error.get("kind") == "credentialNotAllowed", error
        assert dict(error).get("credential") == {"env": TOKEN}
        assert dict(error).get("origin") == api  # http://127.0.0.1:PORT: no default port
        assert str(error.get("url", "")).startswith(f"{api}/_echo/headers")
        assert SECRET not in json.dumps(error)
        assert refused.value.credential_requests == [CredentialRequest(api, env=TOKEN)]
        assert echo.objects() == []  # no request was sent

        allowed = client.allow_credential(env=TOKEN, origin=api)
        assert allowed["env"] == TOKEN and allowed["origin"] == api
        assert Path(allowed["path"]) == config_home / "datasourced" / "allowed-credentials.json"
        assert Path(allowed["path"]).is_file()
        assert SECRET not in Path(allowed["path"]).read_text()  # the name is recorded, not the value

        echo.fetch_data(wait=True)
        assert [row["authorization"] for row in echo.objects()] == [f"Bearer {SECRET}"]

    with Client.spawn(daemon, timeout=10) as client:  # a new daemon reads the allowance
        echo = create(client, echo_source(api))
        echo.fetch_data(wait=True)
        assert [row["authorization"] for row in echo.objects()] == [f"Bearer {SECRET}"]


@needs_allowances
def test_an_allowance_is_for_one_variable_and_one_origin(daemon: str, api: str, config_home: Path):
    with Client.spawn(daemon, timeout=10) as client:
        client.allow_credential(env="SOME_OTHER_TOKEN", origin=api)
        client.allow_credential(env=TOKEN, origin="https://api.github.com")
        with pytest.raises(LoadFailed) as refused:
            create(client, echo_source(api)).fetch_data(wait=True)
        assert refused.value.credential_requests == [CredentialRequest(api, env=TOKEN)]


@needs_allowances
def test_a_file_credential_is_named_by_its_path_as_the_spec_wrote_it(daemon: str, api: str, config_home: Path,
                                                                     tmp_path: Path):
    token = tmp_path / "token"
    token.write_text(SECRET + "\n")
    with Client.spawn(daemon, timeout=10) as client:
        echo = create(client, echo_source(api, file=str(token)))
        with pytest.raises(LoadFailed) as refused:
            echo.fetch_data(wait=True)
        assert refused.value.credential_requests == [CredentialRequest(api, file=str(token))]
        assert client.allow_credential(file=str(token), origin=api)["file"] == str(token)
        echo.fetch_data(wait=True)
        assert [row["authorization"] for row in echo.objects()] == [f"Bearer {SECRET}"]


@needs_allowances
def test_a_file_under_home_is_allowed_by_the_path_the_shell_expands_it_to(daemon: str, api: str, config_home: Path,
                                                                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # `--allow-credential ~/token=ORIGIN` unquoted reaches the tool as /home/me/token=ORIGIN.
    home = tmp_path / "home"
    home.mkdir()
    (home / "token").write_text(SECRET)
    monkeypatch.setenv("HOME", str(home))
    spec = tmp_path / "home-token.json"
    spec.write_text(json.dumps({"sources": [echo_source(api, file="~/token")], "columns": ["authorization"]}))
    status, out, err = run_cli(daemon, str(spec), "--allow-credential", f"{home / 'token'}={api}",
                               ask=lambda r: pytest.fail(f"asked {r}"))
    assert status == 0, err
    assert f"Bearer {SECRET}" in out


@needs_allowances
def test_a_paginated_source_and_a_view_over_it_load_once_allowed(daemon: str, api: str, config_home: Path):
    with Client.spawn(daemon, timeout=10) as client:
        books = client.create_source(
            "books", kind="paginated", identityKey="id", keyPath="books", pageSize=4, apiPath="/v1/books",
            remoteConfiguration={"baseURL": api, "headers": {"X-Token": {"env": TOKEN}}})
        by_genre = client.create_source("byGenre", kind="sectioned", source="books", sectioningKey="genre")
        with pytest.raises(LoadFailed) as refused:
            by_genre.fetch_data(wait=True)
        assert refused.value.credential_requests == [CredentialRequest(api, env=TOKEN)]
        client.allow_credential(env=TOKEN, origin=api)
        by_genre.fetch_data(wait=True)
        assert books.count_objects() == 4


@needs_allowances
@pytest.mark.parametrize("params", [{"origin": "https://api.github.com"}, {"env": TOKEN},
                                    {"env": TOKEN, "file": "/t", "origin": "https://api.github.com"},
                                    {"env": TOKEN, "origin": "not an origin"}])
def test_bad_allow_credential_params_are_refused(client: Client, params: dict[str, str], config_home: Path):
    with pytest.raises(RPCError) as refused:
        client.request("allowCredential", params)
    assert refused.value.code == -32602


def test_allow_credential_takes_exactly_one_of_env_and_file(client: Client):
    with pytest.raises(ValueError):
        client.allow_credential(origin="https://api.github.com")
    with pytest.raises(ValueError):
        client.allow_credential(env="A", file="/b", origin="https://api.github.com")


@needs_allowances
def test_the_switch_sends_every_credential_to_its_sources_own_origin(daemon: str, api: str, config_home: Path):
    with Client.spawn([daemon, "--allow-credentials-from-config"], timeout=10) as client:
        echo = create(client, echo_source(api))
        echo.fetch_data(wait=True)
        assert [row["authorization"] for row in echo.objects()] == [f"Bearer {SECRET}"]
    assert not (config_home / "datasourced" / "allowed-credentials.json").exists()


# -- the command line -----------------------------------------------------------------------


def spec_file(tmp_path: Path, api: str) -> Path:
    spec = tmp_path / "echo.json"
    spec.write_text(json.dumps({"sources": [echo_source(api)], "columns": ["authorization"]}))
    return spec


def run_cli(daemon: str, *argv: str, ask: Any = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = run(parse_arguments([*argv, "--daemon", daemon, "--no-cache"]), out, err, ask=ask)
    return status, out.getvalue(), err.getvalue()


@needs_allowances
def test_the_tool_asks_and_a_yes_allows_and_loads(daemon: str, api: str, config_home: Path, tmp_path: Path):
    asked: list[CredentialRequest] = []
    status, out, err = run_cli(daemon, str(spec_file(tmp_path, api)), ask=lambda r: asked.append(r) or True)
    assert status == 0, err
    assert asked == [CredentialRequest(api, env=TOKEN)]
    assert f"Bearer {SECRET}" in out
    assert f"allowed the environment variable {TOKEN} to be sent to {api} (recorded in " in err
    assert "error:" not in err
    # The next run finds it allowed: nobody is asked.
    status, out, _ = run_cli(daemon, str(spec_file(tmp_path, api)), ask=lambda r: pytest.fail(f"asked {r}"))
    assert status == 0 and f"Bearer {SECRET}" in out


@needs_allowances
def test_a_no_reports_the_failure_with_a_hint_and_nothing_is_recorded(daemon: str, api: str, config_home: Path,
                                                                      tmp_path: Path):
    asked: list[CredentialRequest] = []
    status, out, err = run_cli(daemon, str(spec_file(tmp_path, api)), ask=lambda r: asked.append(r) and False)
    assert status == 1
    assert len(asked) == 1
    assert "error: loading 'echo' failed (credentialNotAllowed)" in err
    assert f"--allow-credential {TOKEN}={api}" in err
    assert SECRET not in out + err
    assert not (config_home / "datasourced" / "allowed-credentials.json").exists()


@needs_allowances
def test_allow_credential_allows_before_loading_without_asking(daemon: str, api: str, config_home: Path,
                                                               tmp_path: Path):
    status, out, err = run_cli(daemon, str(spec_file(tmp_path, api)), "--allow-credential", f"{TOKEN}={api}",
                               ask=lambda r: pytest.fail(f"asked {r}"))
    assert status == 0, err
    assert f"Bearer {SECRET}" in out
    assert (config_home / "datasourced" / "allowed-credentials.json").is_file()


@needs_allowances
def test_allow_credentials_from_config_is_passed_to_the_daemon(daemon: str, api: str, config_home: Path,
                                                               tmp_path: Path):
    status, out, err = run_cli(daemon, str(spec_file(tmp_path, api)), "--allow-credentials-from-config",
                               ask=lambda r: pytest.fail(f"asked {r}"))
    assert status == 0, err
    assert f"Bearer {SECRET}" in out
    assert not (config_home / "datasourced" / "allowed-credentials.json").exists()


def cli_command(daemon: str, spec: Path) -> list[str]:
    return [sys.executable, "-m", "datasourced_client", str(spec), "--daemon", daemon, "--no-cache"]


@needs_allowances
def test_on_a_terminal_the_prompt_is_answered_and_the_rows_load(daemon: str, api: str, config_home: Path,
                                                                tmp_path: Path):
    # stdin is a pseudo-terminal, as when a person runs the tool: the question comes on
    # stderr, "y" is typed, and the rows come on stdout.
    controller, terminal = os.openpty()
    try:
        tool = subprocess.Popen(cli_command(daemon, spec_file(tmp_path, api)), stdin=terminal,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO / "Clients" / "python")
        os.close(terminal)
        question = f"Allow the daemon to send the environment variable {TOKEN} to {api}? [y/N] "
        said = b""
        deadline = time.monotonic() + 30
        assert tool.stderr is not None
        while question.encode() not in said and time.monotonic() < deadline and tool.poll() is None:
            ready, _, _ = select.select([tool.stderr], [], [], 0.5)
            if ready:
                said += os.read(tool.stderr.fileno(), 4096)
        assert question.encode() in said, said.decode(errors="replace")
        os.write(controller, b"y\n")
        out, rest = tool.communicate(timeout=30)
    finally:
        os.close(controller)
    assert tool.returncode == 0, (said + rest).decode(errors="replace")
    assert f"Bearer {SECRET}".encode() in out


@needs_allowances
def test_without_a_terminal_nobody_is_asked_and_the_hint_is_given(daemon: str, api: str, config_home: Path,
                                                                  tmp_path: Path):
    finished = subprocess.run(cli_command(daemon, spec_file(tmp_path, api)), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=60, cwd=REPO / "Clients" / "python")
    assert finished.returncode == 1
    assert "Allow the daemon" not in finished.stderr
    assert "hint: the daemon sends a credential only where it is allowed" in finished.stderr
    assert f"--allow-credential {TOKEN}={api}" in finished.stderr
