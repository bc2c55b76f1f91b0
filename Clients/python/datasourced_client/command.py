"""The daemon's command line, from what a caller gives or ``$DATASOURCED``."""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TypeAlias

__all__ = ["CacheOption", "DaemonCommand", "daemon_command"]

#: The daemon to run: a path (``str`` or ``Path``, taken whole, spaces and all) or a
#: command line as a list (the executable, then its arguments).
DaemonCommand: TypeAlias = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]
#: The daemon's persisted page cache (protocol 1.2): ``None``, its default file
#: (``$XDG_CACHE_HOME/datasourced/cache.sqlite``); a path, that file (``--cache-path``);
#: ``False``, none (``--no-cache``).
CacheOption: TypeAlias = str | os.PathLike[str] | bool | None


def daemon_command(command: DaemonCommand | None = None, *, record: str | os.PathLike[str] | None = None,
                   cache: CacheOption = None, allow_credentials_from_config: bool = False) -> list[str]:
    """The argument vector that starts the daemon.

    ``command`` is a path or a list; ``None`` takes ``$DATASOURCED``, split as a shell
    would (``DATASOURCED="/opt/datasourced --log-level debug"``), else ``datasourced`` on
    the PATH. ``record`` adds ``--record PATH``: the daemon writes the session to PATH as a
    transcript (``datasourced replay PATH`` then replays it as a test). ``cache`` adds
    ``--cache-path PATH`` (a path) or ``--no-cache`` (``False``); see :data:`CacheOption`.
    ``allow_credentials_from_config`` adds ``--allow-credentials-from-config``: the daemon
    sends every credential of a spec (``{"env": ...}``, ``{"file": ...}`` header values) to
    the source's own origin without the user's allowance (``allowCredential``).
    """
    if command is None:
        argv = shlex.split(os.environ.get("DATASOURCED", "")) or ["datasourced"]
    elif isinstance(command, (str, os.PathLike)):
        argv = [os.fspath(command)]
    else:
        argv = [os.fspath(part) for part in command]
        if not argv:
            raise ValueError("the daemon's command line is empty")
    if record is not None:
        argv += ["--record", os.fspath(Path(record))]
    if cache is False:
        argv.append("--no-cache")
    elif cache is not None and cache is not True:
        argv += ["--cache-path", os.fspath(cache)]
    if allow_credentials_from_config:
        argv.append("--allow-credentials-from-config")
    return argv
