"""``datasourced-client``: create sources from a config file, load them, print their rows.

    datasourced-client books.toml --fixtures Examples/quickstart.json
    datasourced-client books.json --set baseURL=http://127.0.0.1:8080 --format jsonl

The config (JSON, or TOML when the file ends in ``.toml``) holds ``sources``, a list of
``createSource`` params, children before parents; optionally ``show`` (the sources to
print, default: the last one), ``columns`` and ``pages``. ``${NAME}`` in any string is
replaced by a ``--set NAME=VALUE`` value; ``--fixtures FILE`` starts a local fixture API
(``datasourced fixtures FILE``) and sets ``${baseURL}`` to it.

Remote and paginated sources are loaded (paginated ones page by page) with progress on
stderr; the rows go to stdout. Exit status: 0, 1 if a load failed, 2 for a bad config
or a request the daemon refused.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import tomllib
from pathlib import Path
from typing import Any, TextIO

from .client import Client, DataSource, is_placeholder
from .errors import DatasourcedError, LoadFailed, RPCError
from .events import Event
from .render import describe_row, write_jsonl, write_table

LOADED_KINDS = ("remote", "paginated")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ConfigError(Exception):
    pass


def load_config(path: Path, variables: dict[str, str]) -> dict[str, Any]:
    """Reads a JSON or TOML config and substitutes ``${NAME}`` variables."""
    try:
        text = path.read_text(encoding="utf-8")
        config = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (OSError, ValueError) as error:
        raise ConfigError(f"{path}: {error}") from error
    if not isinstance(config, dict) or not isinstance(config.get("sources"), list) or not config["sources"]:
        raise ConfigError(f"{path}: expected an object with a non-empty \"sources\" array")

    def substitute(value: Any, where: str) -> Any:
        if isinstance(value, str):
            def replace(match: re.Match[str]) -> str:
                name = match.group(1)
                if name not in variables:
                    raise ConfigError(f"{path}: {where} uses ${{{name}}}; pass --set {name}=VALUE"
                                      + (" or --fixtures FILE" if name == "baseURL" else ""))
                return variables[name]
            return _VARIABLE.sub(replace, value)
        if isinstance(value, list):
            return [substitute(v, f"{where}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, dict):
            return {k: substitute(v, f"{where}.{k}" if where else k) for k, v in value.items()}
        return value

    return substitute(config, "")


class FixtureServer:
    """``datasourced fixtures FILE``: a local HTTP API, until closed."""

    def __init__(self, daemon: str, fixtures: Path):
        self.process = subprocess.Popen([daemon, "fixtures", str(fixtures)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            self.process.wait()
            raise ConfigError(f"the fixture server for {fixtures} did not start (status {self.process.returncode})")
        self.base_url: str = json.loads(line)["baseURL"]

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()  # it serves until its stdin closes
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()


class Progress:
    """Prints load progress and notifications to stderr, one line each."""

    def __init__(self, out: TextIO, raw_events: bool):
        self.out = out
        self.raw_events = raw_events
        self.lock = threading.Lock()

    def say(self, text: str) -> None:
        with self.lock:
            print(text, file=self.out, flush=True)

    def on_event(self, event: Event) -> None:
        if self.raw_events:
            self.say(f"  ← dataSource/{event.kind} {json.dumps(event.params, ensure_ascii=False)}")
            return
        detail = ""
        if event.kind == "didChange" and event.changes is not None:
            c = event.changes
            parts = [f"{len(c.get(key, []))} {key}" for key in ("inserted", "deleted", "moved", "updated") if c.get(key)]
            sections = [f"{len(c.get(key, []))} {key}" for key in ("insertedSections", "deletedSections") if c.get(key)]
            detail = ": " + ", ".join(parts + sections) if parts or sections else ""
        elif event.kind == "failedWithError" and event.error is not None:
            detail = f": {event.error.get('kind')}: {event.error.get('message')}"
        self.say(f"  ← {event.source} {event.kind}{detail}")

    def rows(self, source: DataSource, what: str) -> None:
        rows = source.objects_in_section(0) if source.number_of_sections else []
        objects = sum(1 for row in rows if not is_placeholder(row))
        placeholders = [describe_row(row) for row in rows if is_placeholder(row)]
        state = source.describe()
        pages = ""
        if state.get("kind") == "paginated" and state.get("currentPage") is not None:
            pages = f" (page {state['currentPage']} of {state.get('numberOfPages') or '?'}, " \
                    f"{state.get('numberOfTotalResults') or '?'} objects in all)"
        tail = f" + {', '.join(placeholders)}" if placeholders else ""
        self.say(f"{source.name}: {what}: {objects} objects{tail}{pages}")


def load(source: DataSource, max_pages: int | None, progress: Progress | None) -> None:
    """fetchData, then (paginated) every next page up to ``max_pages``."""
    if progress:
        progress.say(f"{source.name}: fetchData")
    source.fetch_data(wait=True)
    if progress:
        progress.rows(source, "loaded")
    pages = 1
    while source.kind == "paginated" and (max_pages is None or pages < max_pages) and source.has_more_pages:
        if progress:
            progress.say(f"{source.name}: fetchNextPage")
        if not source.fetch_next_page(wait=True).get("started"):
            break
        pages += 1
        if progress:
            progress.rows(source, "loaded")


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="datasourced-client",
        description="Create datasourced sources from a config file, load them and print their rows.")
    parser.add_argument("config", type=Path, help="JSON or TOML file: {sources: [...], show?, columns?, pages?}")
    parser.add_argument("--daemon", default=os.environ.get("DATASOURCED", "datasourced"),
                        help="the datasourced executable (default: $DATASOURCED or datasourced on the PATH)")
    parser.add_argument("--fixtures", type=Path, metavar="FILE",
                        help="serve FILE's HTTP fixtures on 127.0.0.1 and set ${baseURL} to them")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a value for ${NAME} in the config (repeatable)")
    parser.add_argument("--show", action="append", metavar="SOURCE",
                        help="a source to print (repeatable; default: the config's \"show\", else the last source)")
    parser.add_argument("--pages", type=int, metavar="N", help="load at most N pages of each paginated source")
    parser.add_argument("--format", choices=("table", "jsonl"), default="table", help="how rows are printed")
    parser.add_argument("--columns", help="comma-separated object members to show in a table")
    parser.add_argument("--events", action="store_true", help="print every notification in full on stderr")
    parser.add_argument("--quiet", action="store_true", help="print no progress on stderr")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for any answer (default 30)")
    arguments = parser.parse_args(argv)
    if arguments.pages is not None and arguments.pages < 1:
        parser.error("--pages must be at least 1")
    return arguments


def run(arguments: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    variables: dict[str, str] = {}
    for assignment in arguments.set:
        name, equals, value = assignment.partition("=")
        if not equals or not name:
            raise ConfigError(f"--set expects NAME=VALUE, got {assignment!r}")
        variables[name] = value
    fixtures = FixtureServer(arguments.daemon, arguments.fixtures) if arguments.fixtures else None
    try:
        if fixtures:
            variables.setdefault("baseURL", fixtures.base_url)
            if not arguments.quiet:
                print(f"fixture API: {fixtures.base_url} (from {arguments.fixtures})", file=err)
        config = load_config(arguments.config, variables)
        progress = None if arguments.quiet else Progress(err, arguments.events)
        with Client.spawn([arguments.daemon], timeout=arguments.timeout) as client:
            if progress:
                client.on_event(progress.on_event)
            sources: dict[str, DataSource] = {}
            for index, params in enumerate(config["sources"]):
                if not isinstance(params, dict) or "name" not in params or "kind" not in params:
                    raise ConfigError(f"sources[{index}]: expected an object with \"name\" and \"kind\"")
                params = dict(params)
                name, kind = params.pop("name"), params.pop("kind")
                sources[name] = client.create_source(name, kind, **params)
            show = arguments.show or config.get("show") or [list(sources)[-1]]
            unknown = [name for name in show if name not in sources]
            if unknown:
                raise ConfigError(f"cannot show {', '.join(unknown)}: not among the config's sources ({', '.join(sources)})")
            columns = arguments.columns.split(",") if arguments.columns else config.get("columns")
            max_pages = arguments.pages or config.get("pages")

            failed = False
            for source in sources.values():
                if source.kind in LOADED_KINDS:
                    try:
                        load(source, max_pages, progress)
                    except LoadFailed as failure:
                        failed = True
                        print(f"error: {failure}", file=err)
            for name in show:
                if arguments.format == "jsonl":
                    write_jsonl(sources[name], out)
                else:
                    write_table(sources[name], out, columns)
                    print(file=out)
                out.flush()
            return 1 if failed else 0
    finally:
        if fixtures:
            fixtures.close()


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    try:
        return run(arguments, sys.stdout, sys.stderr)
    except (ConfigError, RPCError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (DatasourcedError, FileNotFoundError, TimeoutError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
