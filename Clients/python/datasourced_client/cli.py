"""``datasourced-client``: create sources from a config file, load them, print their rows.

    datasourced-client Clients/python/examples/books.toml --fixtures Clients/fixtures.json
    datasourced-client books.json --set baseURL=http://127.0.0.1:8080 --format jsonl

The config is a list spec (:mod:`datasourced_client.listspec`, Protocol/listspec.schema.json;
the same file the editors open), JSON or TOML when the file ends in ``.toml``: ``sources``,
a list of ``createSource`` params, children before parents (or one source's params alone);
optionally ``show`` (a source name or a list of them, default: the last source),
``title``, ``columns``, ``pages`` and ``maxPages``. ``${NAME}`` in any string is replaced by
a ``--set NAME=VALUE`` value; ``--fixtures FILE`` starts a local fixture API
(``datasourced fixtures FILE``) and sets ``${baseURL}`` to it.

Remote and paginated sources are loaded (paginated ones page by page) with progress on
stderr; the rows go to stdout. A source with ``cache = {enabled = true}`` opens from the
daemon's persisted cache when it has its pages (``--cache-path FILE``): its cached rows at
once, marked stale on stderr, then the server's answer. ``--follow SECONDS`` then prints
each change of a live list (``refreshIntervalSeconds``, or ``--refresh SECONDS``) as it
arrives. ``--filter PREDICATE`` and ``--match QUERY`` print each shown source through a
``filtered`` source over it (protocol 1.4): the rows that pass the predicate (JSON, or the
short ``KEYPATH OP VALUE``), ranked by a fuzzy match of QUERY over ``--match-keys`` (default:
the spec's ``search.keyPaths``, else the columns shown).

A header value read from the environment or a file (``{"env": "GITHUB_TOKEN"}``,
``{"file": "~/.config/x/token"}``) is sent only to the origins the user allowed it for: a
load that needs an allowance fails with kind ``credentialNotAllowed``, and when stdin is a
terminal the tool asks (``Allow the daemon to send the environment variable GITHUB_TOKEN to
https://api.github.com? [y/N]``), records a yes with ``allowCredential`` and loads again.
``--allow-credential NAME=ORIGIN`` allows before loading (NAME an environment variable, or a
path when it starts with ``/`` or ``~``); ``--allow-credentials-from-config`` starts the
daemon with that switch (every credential sent to its source's own origin, unasked).

``--action NAME`` performs one of a source's declared actions (protocol 1.9) once the sources
are loaded, on the row ``--identity ID`` (read as JSON when it is, else as text), with
``--value NAME=VALUE`` read by the type the action declares, and prints the settlement (one
JSON object) instead of the rows: ``committed``, or ``rolledBack`` (exit status 1, the
server's words on stderr). A mutation still queued after ``--timeout`` is cancelled, and
so is one that Ctrl-C interrupts while it is queued or waiting (the settlement printed,
exit status 130): the daemon ends with the run, and with a persisted cache it would keep
the mutation for the next daemon to send.

Exit status: 0, 1 if a load failed, a source still had pages after ``--max-pages`` or an
action was rolled back, 2 for a bad config or a request the daemon refused, 130 on Ctrl-C
while loading or while an action waits.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO, cast

from ._version import package_version
from .actions import SETTLE_EVENT, ActionTimeout, ActionValueError, Settlement, parse_action_values, settlement_of
from .client import Client, DataSource, EventStream
from .command import CacheOption, daemon_command
from .errors import CredentialRequest, DaemonExited, DatasourcedError, LoadFailed, RPCError, describe_fetch_error
from .events import Freshness
from .fixtures import FixtureServer, FixtureServerError
from .follow import ChangeFollower
from .listspec import Column, ListSpec, ListSpecError, read_list_spec
from .progress import Progress, local_time
from .protocol import JSON, SourceConfig, SourceKind
from .render import write_jsonl, write_table

LOADED_KINDS = ("remote", "paginated")
#: Pages loaded from one source before the tool decides it pages without end.
DEFAULT_MAX_PAGES = 1000


#: A config the tool cannot use (kept for code that caught it before list specs had a module).
ConfigError = ListSpecError


class EndlessPaging(DatasourcedError):
    """A paginated source still had more pages after the page cap."""


#: Asks the person whether the daemon may send a credential to an origin; True for yes.
AskCredential = Callable[[CredentialRequest], bool]


def ask_on_terminal(request: CredentialRequest, prompt: TextIO | None = None, answers: TextIO | None = None) -> bool:
    """Asks on stderr, reads the answer from stdin: ``Allow the daemon to send the
    environment variable GITHUB_TOKEN to https://api.github.com? [y/N] ``. Only ``y`` or
    ``yes`` (any case) is a yes; an empty line or the end of input is a no."""
    prompt = prompt or sys.stderr
    answers = answers or sys.stdin
    prompt.write(f"{request.question()} [y/N] ")
    prompt.flush()
    answer = answers.readline()
    if not answer:
        prompt.write("\n")
    return answer.strip().lower() in ("y", "yes")


def parse_allowance(text: str) -> CredentialRequest:
    """One ``--allow-credential NAME=ORIGIN``: NAME is an environment variable, or a file
    when it starts with ``/`` or ``~`` (the path as the spec writes it)."""
    name, equals, origin = text.rpartition("=")
    if not equals or not name or not origin:
        raise ConfigError(f"--allow-credential expects NAME=ORIGIN (NAME an environment variable, or a path starting "
                          f"with / or ~; ORIGIN such as https://api.github.com), got {text!r}")
    return CredentialRequest(origin, file=name) if name.startswith(("/", "~")) else CredentialRequest(origin, env=name)


def credential_hint(failure: LoadFailed) -> str | None:
    """What to do about a load that lacked a credential's allowance; None for other failures."""
    requests = failure.credential_requests
    if not requests:
        return None
    what = "; ".join(f"{r.what} to {r.origin}" for r in requests)
    options = " ".join(f"--allow-credential {r.option()}" for r in requests)
    return (f"hint: the daemon sends a credential only where it is allowed ({what}): answer y when asked "
            f"(stdin a terminal), or run again with {options}")


def _allow(client: Client, request: CredentialRequest, progress: Progress | None) -> None:
    allowed = client.allow_credential(request.env, request.file, origin=request.origin)
    if progress:
        progress.say(f"allowed {request.what} to be sent to {allowed.get('origin', request.origin)} "
                     f"(recorded in {allowed.get('path')})")


def load_asking(client: Client, source: DataSource, pages: int | None, max_pages: int, progress: Progress | None,
                ask: AskCredential | None, asked: set[CredentialRequest]) -> None:
    """:func:`load`; a load that failed for want of a credential's allowance asks ``ask``
    about each credential it lacked (once per run: ``asked``), records the yeses with
    ``allowCredential`` and loads again. A no, or no one to ask, raises the failure."""
    while True:
        try:
            load(source, pages, max_pages, progress)
            return
        except LoadFailed as failure:
            requests = [request for request in failure.credential_requests if request not in asked]
            if ask is None or not requests:
                raise
            for request in requests:
                asked.add(request)
                if not ask(request):
                    raise
                _allow(client, request, progress)


def load(source: DataSource, pages: int | None, max_pages: int, progress: Progress | None) -> None:
    """fetchData, then (paginated) every next page: up to ``pages`` if given, else until
    the last page, raising :class:`EndlessPaging` if more remain after ``max_pages``."""
    if progress:
        progress.fetching(source, "fetchData")
    source.fetch_data(wait=True)
    if progress:
        progress.rows(source, "loaded")
    loaded = 1
    while source.kind == "paginated" and (pages is None or loaded < pages) and source.has_more_pages():
        if loaded >= max_pages:
            raise EndlessPaging(
                f"{source.name!r} still has more pages after {loaded} pages (--max-pages {max_pages}): "
                f"stopped at {source.description.get('lastURL')}: the API may page without end "
                "(its metadata keeps promising more); to load fewer pages on purpose, pass --pages N")
        if progress:
            progress.fetching(source, "fetchNextPage")
        if not source.fetch_next_page(wait=True).get("started"):
            break
        loaded += 1
        if progress:
            progress.rows(source, "loaded")


#: setFilter's comparison operators (Protocol.md, "Filtered sources and setFilter").
FILTER_OPERATORS = ("eq", "ne", "lt", "le", "gt", "ge", "in", "contains", "prefix", "exists")


def parse_filter(text: str) -> dict[str, JSON]:
    """One ``--filter``: a JSON predicate (``{"keyPath": "year", "op": "ge", "value": 1960}``,
    ``{"or": [...]}``...), or the short form ``KEYPATH OP VALUE``, whose VALUE is JSON when it
    reads as JSON (``1960``, ``true``, ``["poetry", "mystery"]``, ``"1960"``) and else the text
    itself (``genre eq science fiction``); ``KEYPATH exists`` needs no value. The daemon checks
    the rest (an operand of the wrong kind, a predicate nested too deep) and names the field."""
    text = text.strip()
    if text.startswith("{"):
        try:
            predicate = json.loads(text)
        except ValueError as error:
            raise ConfigError(f"--filter {text!r} is not valid JSON: {error}") from error
        if not isinstance(predicate, dict):
            raise ConfigError(f"--filter {text!r} must be a JSON object (a predicate)")
        return cast(dict[str, JSON], predicate)
    parts = text.split(None, 2)
    operators = ", ".join(FILTER_OPERATORS)
    if len(parts) < 2:
        raise ConfigError(f"--filter {text!r}: expected 'KEYPATH OP VALUE' (OP one of {operators}) or a JSON predicate")
    key_path, op = parts[0], parts[1]
    if op not in FILTER_OPERATORS:
        raise ConfigError(f"--filter {text!r}: unknown operator {op!r}: one of {operators}")
    if len(parts) == 2:
        if op != "exists":
            raise ConfigError(f"--filter {text!r}: {op} needs a value: '{key_path} {op} VALUE'")
        return {"keyPath": key_path, "op": op}
    value: JSON
    try:
        value = json.loads(parts[2])
    except ValueError:
        value = parts[2]
    return {"keyPath": key_path, "op": op, "value": value}


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="datasourced-client",
        description="Create datasourced sources from a config file, load them and print their rows.")
    parser.add_argument("config", type=Path, help="a list spec, JSON or TOML: {sources: [...], show?, title?, columns?, pages?, maxPages?} or one source (Clients/specs)")
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    parser.add_argument("--daemon", metavar="PATH",
                        help="the datasourced executable (default: $DATASOURCED, which may carry arguments, "
                             "or datasourced on the PATH)")
    parser.add_argument("--fixtures", type=Path, metavar="FILE",
                        help="serve FILE's HTTP fixtures on 127.0.0.1 and set ${baseURL} to them")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a value for ${NAME} in the config (repeatable)")
    parser.add_argument("--show", action="append", metavar="SOURCE",
                        help="a source to print (repeatable; default: the config's \"show\", else the last source)")
    parser.add_argument("--pages", type=int, metavar="N", help="load at most N pages of each paginated source")
    parser.add_argument("--max-pages", type=int, metavar="N",
                        help=f"stop with an error when a source still has pages after N (default {DEFAULT_MAX_PAGES})")
    parser.add_argument("--format", choices=("table", "jsonl"), default="table",
                        help="how rows are printed (jsonl: data rows only, no placeholders)")
    parser.add_argument("--columns", help="comma-separated object members to show in a table")
    parser.add_argument("--filter", action="append", default=[], metavar="PREDICATE", dest="filters",
                        help="print only the rows that pass PREDICATE: 'KEYPATH OP VALUE' (OP: "
                             f"{', '.join(FILTER_OPERATORS)}; VALUE read as JSON when it is, else as text) or a "
                             "JSON predicate with and/or/not; repeatable (all must pass)")
    parser.add_argument("--match", metavar="QUERY",
                        help="rank the rows by a fuzzy match of QUERY (as fzf), leaving out those that do not match")
    parser.add_argument("--match-keys", metavar="KEYPATHS",
                        help="comma-separated key paths --match looks in (default: the spec's search.keyPaths, "
                             "else the columns shown, else the rows' string members)")
    parser.add_argument("--events", action="store_true", help="print every notification in full on stderr")
    parser.add_argument("--quiet", action="store_true", help="print no progress on stderr")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for any answer (default 30)")
    parser.add_argument("--record", type=Path, metavar="FILE",
                        help="the daemon records the session to FILE, a transcript for `datasourced replay FILE`")
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument("--cache-path", type=Path, metavar="FILE",
                       help="the daemon's persisted page cache, for sources with cache = {enabled = true} "
                            "(default: the daemon's, $XDG_CACHE_HOME/datasourced/cache.sqlite)")
    cache.add_argument("--no-cache", action="store_true", help="the daemon keeps no persisted page cache")
    parser.add_argument("--refresh", type=float, metavar="SECONDS",
                        help="make every remote and paginated source live once loaded: refreshed every SECONDS (>= 1)")
    parser.add_argument("--follow", type=float, metavar="SECONDS",
                        help="after printing the rows, print each change of the shown sources as it arrives, "
                             "for SECONDS (Ctrl-C stops sooner)")
    parser.add_argument("--max-changes", type=int, metavar="N", help="with --follow: stop after N changes")
    parser.add_argument("--allow-credential", action="append", default=[], metavar="NAME=ORIGIN",
                        dest="allow_credentials",
                        help="let the daemon send a credential of the config (an environment variable NAME, or a file "
                             "when NAME starts with / or ~) to ORIGIN (https://host[:port]), recorded for later runs; "
                             "repeatable. Without it, the tool asks when stdin is a terminal")
    parser.add_argument("--allow-credentials-from-config", action="store_true",
                        help="start the daemon with --allow-credentials-from-config: every credential of the config "
                             "is sent to its source's own origin without asking")
    parser.add_argument("--action", metavar="NAME",
                        help="once loaded, perform the source's action NAME (declared under actions) and print its "
                             "settlement instead of the rows; exit status 1 when the server refused it")
    parser.add_argument("--on", metavar="SOURCE", dest="action_source",
                        help="with --action: the source whose action it is (default: the one that declares it)")
    parser.add_argument("--identity", metavar="ID",
                        help="with --action: the identity of the row to act on (JSON when it reads as JSON, else text)")
    parser.add_argument("--value", action="append", default=[], metavar="NAME=VALUE", dest="values",
                        help="with --action: a value the action declares, read as its declared type (repeatable)")
    arguments = parser.parse_args(argv)
    for option in ("action_source", "identity", "values"):
        if getattr(arguments, option) and arguments.action is None:
            parser.error(f"--{'on' if option == 'action_source' else option.rstrip('s')} goes with --action")
    for option in ("pages", "max_pages", "max_changes"):
        if getattr(arguments, option) is not None and getattr(arguments, option) < 1:
            parser.error(f"--{option.replace('_', '-')} must be at least 1")
    if arguments.refresh is not None and arguments.refresh < 1:
        parser.error("--refresh must be at least 1 (seconds)")
    if arguments.follow is not None and arguments.follow <= 0:
        parser.error("--follow must be a positive number of seconds")
    if arguments.max_changes is not None and arguments.follow is None:
        parser.error("--max-changes goes with --follow")
    if arguments.match_keys is not None and arguments.match is None:
        parser.error("--match-keys goes with --match")
    if arguments.match_keys is not None and not all(arguments.match_keys.split(",")):
        parser.error("--match-keys must be key paths separated by commas, got " + repr(arguments.match_keys))
    return arguments


def _refusal(origin: str, name: str, refused: RPCError) -> ConfigError:
    """A createSource the daemon refused, for people: where the source comes from (the spec
    file), its name, then the daemon's words, which name the field and what it expected
    (``books.json: source "books": createSource refused: "remoteConfiguration.baseURL" must
    be an http or https URL ...``). An invalid-params refusal is said without its JSON-RPC
    label and code; any other code, which only a bug shows, keeps its code."""
    said = refused.message
    if refused.code == -32602:
        said = said.removeprefix("Invalid params:").strip()
    else:
        said = f"{said} (code {refused.code})"
    return ConfigError(f"{origin}: source {json.dumps(name)}: {refused.method} refused: {said}")


def _create_sources(client: Client, spec: ListSpec) -> dict[str, DataSource]:
    sources: dict[str, DataSource] = {}
    for params in spec.sources:
        params = dict(params)
        name, kind = str(params.pop("name")), cast(SourceKind, params.pop("kind"))
        try:
            sources[name] = client.create_source(name, kind, **cast(SourceConfig, params))
        except RPCError as refused:
            raise _refusal(spec.path, name, refused) from None
    return sources


def _cache_option(arguments: argparse.Namespace) -> CacheOption:
    if arguments.no_cache:
        return False
    return cast(Path | None, arguments.cache_path)


def _failures_under(name: str, sources: dict[str, DataSource],
                    failures: dict[str, DatasourcedError]) -> list[DatasourcedError]:
    """The failed loads of ``name`` and of the sources it is made from."""
    found: list[DatasourcedError] = []
    seen: set[str] = set()
    pending = [name]
    while pending:
        current = pending.pop()
        if current in seen or current not in sources:
            continue
        seen.add(current)
        if current in failures:
            found.append(failures[current])
        description = sources[current].describe()
        pending += description.get("children", []) + description.get("sources", [])
        if "source" in description:
            pending.append(description["source"])
    return found


def _check_daemon(executable: str) -> None:
    """Says what is wrong with the daemon's path before anything tries to run it."""
    hint = ("pass --daemon PATH (the datasourced executable, e.g. .build/debug/datasourced after swift build) "
            "or set $DATASOURCED")
    path = executable if os.sep in executable else shutil.which(executable)
    if path is None:
        raise ConfigError(f"no {executable!r} on the PATH to run the daemon: {hint}")
    if os.path.isdir(path):
        raise ConfigError(f"the daemon {executable!r} is a directory, not the datasourced executable: {hint}")
    if not os.path.exists(path):
        raise ConfigError(f"the daemon {executable!r} does not exist: {hint}")
    if not os.access(path, os.X_OK):
        raise ConfigError(f"the daemon {executable!r} is not executable: {hint}")


def _stale_note(name: str, sources: dict[str, DataSource]) -> str:
    """`` — stale: cached 2026-11-23 16:41, not confirmed by the server`` when the rows of
    ``name``, or of a source it is made from, are cached rows no response has confirmed
    (a failed revalidation leaves them so); else nothing."""
    seen: set[str] = set()
    pending = [name]
    while pending:
        current = pending.pop()
        if current in seen or current not in sources:
            continue
        seen.add(current)
        description = sources[current].describe()
        freshness = Freshness.of(description)
        if freshness.stale:
            when = f" {local_time(freshness.cached_at)}" if freshness.cached_at else ""
            return f" — stale: cached{when}, not confirmed by the server"
        pending += description.get("children", []) + description.get("sources", [])
        if "source" in description:
            pending.append(description["source"])
    return ""


def _match_keys(arguments: argparse.Namespace, spec: ListSpec, columns: Sequence[str | Column] | None,
                source: DataSource) -> list[str]:
    """The key paths ``--match`` looks in: --match-keys, the spec's search.keyPaths, the
    columns shown, or (none of those) the string members of the source's first object."""
    if arguments.match_keys:
        return cast(list[str], arguments.match_keys.split(","))
    if spec.search and spec.search.key_paths:
        return list(spec.search.key_paths)
    if columns:
        return [column if isinstance(column, str) else column.key for column in columns]
    for _, row in source.snapshot().rows():
        if isinstance(row, dict) and "$placeholder" not in row:
            keys = sorted(key for key, value in row.items() if isinstance(value, str))
            if keys:
                return keys
    raise ConfigError(f"--match: no key paths to match {source.name!r} over: pass --match-keys KEYPATH,...")


def _filtered_views(client: Client, arguments: argparse.Namespace, predicates: list[dict[str, JSON]], spec: ListSpec,
                    show: list[str], sources: dict[str, DataSource],
                    columns: Sequence[str | Column] | None) -> list[str]:
    """For --filter and --match: a filtered source over each shown one, named NAME/filtered;
    their names, to show instead."""
    shown = []
    for name in show:
        config: dict[str, JSON] = {"source": name}
        if predicates:
            config["filter"] = predicates[0] if len(predicates) == 1 else {"and": cast(JSON, predicates)}
        if arguments.match is not None:
            keys = _match_keys(arguments, spec, columns, sources[name])
            config["match"] = {"query": arguments.match, "keyPaths": cast(JSON, keys)}
        view = f"{name}/filtered"
        try:
            sources[view] = client.create_source(view, "filtered", **cast(SourceConfig, config))
        except RPCError as refused:
            raise _refusal("--filter/--match", view, refused) from None
        shown.append(view)
    return shown


def _make_live(sources: dict[str, DataSource], seconds: float, progress: Progress | None) -> None:
    for source in sources.values():
        if source.kind in LOADED_KINDS:
            refresh = source.set_refresh_interval(seconds).get("refresh", {})
            if progress:
                progress.say(f"{source.name}: live: refreshed every {refresh.get('intervalSeconds', seconds):g} s")


def run(arguments: argparse.Namespace, out: TextIO, err: TextIO, ask: AskCredential | None = None) -> int:
    """Runs the tool. ``ask`` is asked about a credential a load lacks the allowance of
    (None: nobody is asked, and the load fails)."""
    variables: dict[str, str] = {}
    for assignment in arguments.set:
        name, equals, value = assignment.partition("=")
        if not equals or not name:
            raise ConfigError(f"--set expects NAME=VALUE, got {assignment!r}")
        variables[name] = value
    predicates = [parse_filter(text) for text in arguments.filters]  # a typo stops nothing loaded
    allowances = [parse_allowance(text) for text in arguments.allow_credentials]
    command = daemon_command(arguments.daemon, cache=_cache_option(arguments),
                             allow_credentials_from_config=arguments.allow_credentials_from_config)
    _check_daemon(command[0])
    fixtures = FixtureServer(command[0], arguments.fixtures) if arguments.fixtures else None
    try:
        if fixtures:
            variables.setdefault("baseURL", fixtures.base_url)
            if not arguments.quiet:
                print(f"fixture API: {fixtures.base_url} (from {arguments.fixtures})", file=err)
        spec = read_list_spec(arguments.config, variables)
        progress = None if arguments.quiet else Progress(err, arguments.events)
        following = arguments.follow is not None
        # Following prints the rows that changed: the change sets must carry them.
        with Client.spawn(command, timeout=arguments.timeout, record=arguments.record,
                          change_values=following) as client:
            if progress:
                client.on_event(progress.on_event)
            for allowance in allowances:
                _allow(client, allowance, progress)
            sources = _create_sources(client, spec)
            if progress:
                progress.sources = sources
            show = arguments.show or spec.show
            unknown = [name for name in show if name not in sources]
            if unknown:
                raise ConfigError(f"cannot show {', '.join(unknown)}: not among the config's sources ({', '.join(sources)})")
            columns: Sequence[str | Column] | None = arguments.columns.split(",") if arguments.columns else spec.columns
            pages = arguments.pages or spec.pages
            max_pages = arguments.max_pages or spec.max_pages or DEFAULT_MAX_PAGES

            failures: dict[str, DatasourcedError] = {}
            asked: set[CredentialRequest] = set(allowances)
            for source in sources.values():
                if source.kind in LOADED_KINDS:
                    try:
                        load_asking(client, source, pages, max_pages, progress, ask, asked)
                    except (LoadFailed, EndlessPaging) as failure:
                        failures[source.name] = failure
                        print(f"error: {failure}", file=err)
                        hint = credential_hint(failure) if isinstance(failure, LoadFailed) else None
                        if hint:
                            print(hint, file=err)
            if arguments.action is not None:
                settled = _act(arguments, sources, out, err, progress)
                return 1 if failures or not settled else 0
            if arguments.refresh is not None:
                _make_live(sources, arguments.refresh, progress)
            if arguments.filters or arguments.match is not None:
                show = _filtered_views(client, arguments, predicates, spec, list(show), sources, columns)
            follower = ChangeFollower(client, show) if following else None
            for name in show:
                snapshot = sources[name].snapshot()
                if follower:
                    follower.printed(name, snapshot.revision)
                if arguments.format == "jsonl":
                    write_jsonl(snapshot, out)
                elif not any(True for _ in snapshot.rows()) and _failures_under(name, sources, failures):
                    # No rows, not even an error row (the source keeps no error
                    # placeholder): the failure is what there is to show.
                    said = "; ".join(str(f) for f in _failures_under(name, sources, failures))
                    print(f"{name} ({snapshot.kind}): no rows: {said}", file=out)
                    print(file=out)
                else:
                    write_table(snapshot, out, columns, note=_stale_note(name, sources))
                    print(file=out)
                out.flush()
            if follower:
                _follow(follower, arguments, sources, columns, out, err, progress)
            return 1 if failures else 0
    finally:
        if fixtures:
            fixtures.close()


def _action_source(arguments: argparse.Namespace, sources: dict[str, DataSource]) -> tuple[DataSource, dict[str, JSON]]:
    """The source ``--action`` names an action of, and that action's declaration."""
    declaring = {name: source.describe().get("actions") or {} for name, source in sources.items()
                 if source.kind in LOADED_KINDS}
    if arguments.action_source is not None:
        if arguments.action_source not in sources:
            raise ConfigError(f"--on {arguments.action_source}: not among the config's sources ({', '.join(sources)})")
        candidates = [arguments.action_source]
    else:
        candidates = [name for name, actions in declaring.items() if arguments.action in actions]
    if len(candidates) > 1:
        raise ConfigError(f"--action {arguments.action}: declared by {', '.join(candidates)}: "
                          f"name one with --on SOURCE")
    actions = declaring.get(candidates[0], {}) if candidates else {}
    if not candidates or arguments.action not in actions:
        where = f"{candidates[0]!r} declares no such action" if candidates else "no source of the config declares it"
        known = ", ".join(f"{name}.{action}" for name, acts in declaring.items() for action in acts) or "none"
        raise ConfigError(f"--action {arguments.action}: {where} (declared: {known})")
    declaration: dict[str, JSON] = actions[arguments.action]
    return sources[candidates[0]], declaration


def _identity(text: str | None) -> JSON | None:
    if text is None:
        return None
    try:
        return cast(JSON, json.loads(text))
    except ValueError:
        return text


def _act(arguments: argparse.Namespace, sources: dict[str, DataSource], out: TextIO, err: TextIO,
         progress: Progress | None) -> bool:
    """Performs ``--action`` and prints its settlement; False when it was not committed."""
    source, declaration = _action_source(arguments, sources)
    action = str(arguments.action)
    try:
        values = parse_action_values(action, declaration, arguments.values)
    except ActionValueError as refused_value:
        raise ConfigError(f"--action {action}: {refused_value}") from None
    identity = _identity(arguments.identity)
    on = f" on {arguments.identity}" if arguments.identity is not None else ""
    if progress:
        progress.say(f"{source.name}: {action}{on}: performAction")
    # Opened before the call: the settlement may come on the answer's heels.
    with source.events() as stream:
        try:
            answer = source.act(action, identity, values or None, wait=False)
        except RPCError as refused:
            # An identity such as 007 or 12 may be text in the rows: ask once more with the text.
            if not (isinstance(refused.data, dict) and refused.data.get("field") == "identity"
                    and identity != arguments.identity):
                raise
            answer = source.act(action, arguments.identity, values or None, wait=False)
        mutation = answer["mutation"]

        def queued() -> None:
            if progress:
                progress.say(f"{source.name}: {action}{on}: queued, to be sent again (Ctrl-C cancels it)")

        try:
            settlement = _settlement(source, stream, action, mutation, arguments.timeout, queued)
        except ActionTimeout as late:
            # The daemon ends with this run: a mutation left queued would never be sent.
            cancelled = _cancel(source, mutation)
            print(f"error: {late}; cancelled", file=err)
            for settled in cancelled:
                _print_settlement(settled, out)
            return False
        except KeyboardInterrupt:
            # The person gave up waiting: the action is undone, not left to a daemon that
            # ends now (nor, with a persisted cache, to the next one, which would send it).
            try:
                cancelled = _cancel(source, mutation)
            except RPCError as refused:
                print(f"error: {action}{on} ({mutation}) could not be cancelled: {refused}", file=err)
                raise KeyboardInterrupt from None
            print(f"error: {action}{on} ({mutation}) cancelled (Ctrl-C): its change undone", file=err)
            for settled in cancelled:
                _print_settlement(settled, out)
            raise
    _print_settlement(settlement, out)
    if settlement.get("status") == "committed":
        if progress:
            progress.say(f"{source.name}: {action}{on}: committed ({settlement.get('mutation')})")
        return True
    why = settlement.get("error", {})
    print(f"error: {action}{on} was rolled back ({why.get('kind')}): {describe_fetch_error(why)}", file=err)
    return False


def _settlement(source: DataSource, stream: EventStream, action: str, mutation: str, timeout: float,
                on_queued: Callable[[], None]) -> Settlement:
    """Waits on ``stream`` for ``mutation`` to be committed or rolled back, through
    ``queued`` (``on_queued`` called the first time). Raises ActionTimeout after
    ``timeout`` seconds, KeyboardInterrupt on Ctrl-C: the mutation is then still pending."""
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        stream.close()  # ends the iteration below, once what the stream holds is read

    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    timer.start()
    last: Settlement | None = None
    try:
        for event in stream:
            if event.kind != SETTLE_EVENT or event.params.get("mutation") != mutation:
                continue
            settlement = settlement_of(event)
            if settlement["status"] != "queued":
                return settlement
            if last is None:
                on_queued()
            last = settlement
    finally:
        timer.cancel()
    if expired.is_set():
        raise ActionTimeout(source.name, action, mutation, last, timeout)
    raise DaemonExited(source.client.returncode, source.client.stderr_tail)


def _cancel(source: DataSource, mutation: str) -> list[Settlement]:
    """Cancels ``mutation`` (cancelMutation) and returns the settlement it brought (a
    list of one): events sent before an answer are delivered before the call returns."""
    with source.events() as stream:
        source.cancel_mutation(mutation)
    return [settlement_of(event) for event in stream
            if event.kind == SETTLE_EVENT and event.params.get("mutation") == mutation][-1:]


def _print_settlement(settlement: Settlement, out: TextIO) -> None:
    print(json.dumps(settlement, ensure_ascii=False), file=out)
    out.flush()


def _follow(follower: ChangeFollower, arguments: argparse.Namespace, sources: dict[str, DataSource],
            columns: Sequence[str | Column] | None, out: TextIO, err: TextIO, progress: Progress | None) -> None:
    live = [name for name, source in sources.items() if "refresh" in source.describe()]
    if not live:
        print("warning: --follow: no source is live (refreshIntervalSeconds in the config, or --refresh SECONDS): "
              "nothing changes by itself", file=err)
    elif progress:
        progress.say(f"following {', '.join(sorted(follower.names))} for {arguments.follow:g} s "
                     f"(live: {', '.join(live)}; Ctrl-C stops)")
    try:
        changes = follower.follow(arguments.follow, out, columns=columns, jsonl=arguments.format == "jsonl",
                                  max_changes=arguments.max_changes)
    except KeyboardInterrupt:
        if progress:
            progress.say("stopped following (Ctrl-C)")
        return
    if progress:
        progress.say(f"stopped following: {changes} change{'s' if changes != 1 else ''} printed")


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    try:
        return run(arguments, sys.stdout, sys.stderr, ask=ask_on_terminal if sys.stdin.isatty() else None)
    except (ConfigError, RPCError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (DatasourcedError, FixtureServerError, FileNotFoundError, TimeoutError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
