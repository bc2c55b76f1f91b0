"""The daemon writes, renames, changes the mode of or deletes only files it created (CACHE.md,
"Data safety"), as a user meets it: `datasourced serve --cache-path P` with a cached source,
`datasourced cache list` and `datasourced cache clear`, each a real process.

For each kind of thing at P that the daemon did not make: the daemon runs without a cache
(one warning naming P and what it is), `cache list` and `cache clear` refuse (exit 1, a
message naming P and what it is), and P, what it points to, and the directories around it
are exactly as before: type, mode, inode, size, times, bytes, and no new -journal, -wal,
-shm or .corrupt file.

Our own file: `cache list` reads it without writing (byte for byte, and no -wal or -shm
left that was not there), with or without a daemon using it; `cache clear` empties it."""

from __future__ import annotations

import os
import socket
import sqlite3
import stat
import subprocess
from pathlib import Path
from typing import Any, Callable

import pytest

from cachedaemon import API, DAEMON, Daemon


def run(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DAEMON, *arguments], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def snapshot(paths: list[Path], directories: list[Path]) -> dict[str, Any]:
    """Everything the test can see of `paths` without changing them, and the names in `directories`."""
    seen: dict[str, Any] = {}
    for path in paths:
        try:
            status = path.lstat()
        except FileNotFoundError:
            seen[str(path)] = "missing"
            continue
        entry: dict[str, Any] = {"mode": oct(status.st_mode), "inode": status.st_ino, "size": status.st_size,
                                 "modified": status.st_mtime_ns, "changed": status.st_ctime_ns}
        if stat.S_ISREG(status.st_mode):
            entry["bytes"] = path.read_bytes()
        elif stat.S_ISLNK(status.st_mode):
            entry["target"] = os.readlink(path)
        seen[str(path)] = entry
    for directory in directories:
        seen[f"{directory}/"] = sorted(os.listdir(directory))
    return seen


def make_our_cache(path: Path, base: str, leave_wal: bool = False) -> None:
    """A cache of two entries, "two" the most recently used. A daemon that exits folds its WAL
    back into the file; with `leave_wal`, a second daemon that was using the file is killed
    afterwards (kill -9), and its -wal and -shm stay, as after a crash."""
    holder = None
    if leave_wal:
        holder = Daemon(path)
        holder.create(base, "one")
        assert holder.request("fetchData", {"source": "one", "wait": True})["outcome"] == "finished"
    daemon = Daemon(path)
    for name in ("one", "two"):
        daemon.create(base, name)
        assert daemon.request("fetchData", {"source": name, "wait": True})["outcome"] == "finished"
    daemon.close()
    if holder is not None:
        holder.process.kill()
        holder.process.wait(timeout=30)


def bind_socket(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.close()


def another_programs_database(path: Path, wal: bool = False) -> None:
    connection = sqlite3.connect(path)
    if wal:
        connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    connection.execute("INSERT INTO notes (text) VALUES ('keep me')")
    connection.commit()
    connection.close()


def text_file(path: Path, text: str = "buy milk\n") -> None:
    path.write_text(text)


def truncated_cache(path: Path, base: str) -> None:
    make_our_cache(path, base)
    path.write_bytes(path.read_bytes()[:60])


def directory(path: Path, elsewhere: Path, base: str) -> None:
    path.mkdir()
    path.chmod(0o755)
    text_file(path / "theirs.txt")


def link_to_a_foreign_file(path: Path, elsewhere: Path, base: str) -> None:
    text_file(elsewhere / "notes.txt")
    path.symlink_to(elsewhere / "notes.txt")


def link_to_our_cache(path: Path, elsewhere: Path, base: str) -> None:
    make_our_cache(elsewhere / "cache.sqlite", base)
    path.symlink_to(elsewhere / "cache.sqlite")


def device(path: Path, elsewhere: Path, base: str) -> None:
    """A copy of /dev/null (same numbers), made here: the real one is never used."""
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    path.chmod(0o666)


# Each thing: how to make it at P (given P, a directory elsewhere and the API's base URL), what
# the messages call it, and the paths to watch besides P ("ELSEWHERE/..." or inside P).
Maker = Callable[[Path, Path, str], None]
THINGS: dict[str, tuple[Maker, str, list[str]]] = {
    "a directory": (directory, "a directory", ["theirs.txt"]),
    "a FIFO": (lambda p, e, b: os.mkfifo(p, 0o644), "a FIFO", []),
    "a socket": (lambda p, e, b: bind_socket(p), "a socket", []),
    "a text file": (lambda p, e, b: text_file(p), "not a SQLite database", []),
    "an empty file": (lambda p, e, b: text_file(p, ""), "an empty file", []),
    "another program's database": (lambda p, e, b: another_programs_database(p), "another program's SQLite database", []),
    "another program's WAL database": (lambda p, e, b: another_programs_database(p, wal=True), "another program's SQLite database", []),
    "our cache cut below its header": (lambda p, e, b: truncated_cache(p, b), "not a SQLite database", []),
    "a link to another directory's file": (link_to_a_foreign_file, "a symbolic link", ["ELSEWHERE/notes.txt"]),
    "a link to our cache elsewhere": (link_to_our_cache, "a symbolic link", ["ELSEWHERE/cache.sqlite"]),
}


PARAMETERS = [pytest.param(*THINGS[name], id=name) for name in THINGS] + [
    pytest.param(device, "a character device", [], id="a character device",
                 marks=pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root (CAP_MKNOD); CI runs the tests as root")),
]


@pytest.mark.parametrize("command", ["serve", "cache list", "cache clear"])
@pytest.mark.parametrize(("make", "what", "watched"), PARAMETERS)
def test_a_path_not_ours_is_left_untouched(command: str, make: Maker, what: str, watched: list[str],
                                           api: tuple[API, str], tmp_path: Path) -> None:
    _, base = api
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    path = here / "cache.sqlite"
    make(path, elsewhere, base)
    paths = [path] + [Path(w.replace("ELSEWHERE", str(elsewhere))) if w.startswith("ELSEWHERE") else path / w for w in watched]
    directories = [here, elsewhere] + ([path] if path.is_dir() and not path.is_symlink() else [])
    before = snapshot(paths, directories)

    if command == "serve":
        # A daemon with one cached source: it loads from the server and runs without a cache.
        daemon = Daemon(path)
        daemon.create(base, "one")
        assert daemon.request("fetchData", {"source": "one", "wait": True})["outcome"] == "finished"
        assert daemon.request("describeSource", {"source": "one"})["cache"]["available"] is False
        stderr = daemon.close(quiet=False)
        warnings = [line for line in stderr.splitlines() if "page cache:" in line]
        assert len(warnings) == 1, stderr
        assert str(path) in warnings[0] and what in warnings[0] and "running without a cache" in warnings[0], warnings[0]
    else:
        result = run(*command.split(), "--cache-path", str(path))
        assert result.returncode == 1, result
        assert result.stdout == "", result
        assert str(path) in result.stderr and what in result.stderr, result.stderr
    assert snapshot(paths, directories) == before


@pytest.mark.parametrize("folded", [True, False], ids=["alone", "with the -wal a killed daemon left"])
def test_listing_our_file_writes_nothing(folded: bool, api: tuple[API, str], tmp_path: Path) -> None:
    _, base = api
    path = tmp_path / "cache.sqlite"
    make_our_cache(path, base, leave_wal=not folded)
    if folded:
        assert sorted(os.listdir(tmp_path)) == ["cache.sqlite"]
    else:
        assert sorted(os.listdir(tmp_path)) == ["cache.sqlite", "cache.sqlite-shm", "cache.sqlite-wal"]
    watched = [path, tmp_path / "cache.sqlite-wal"]
    before = snapshot(watched, [tmp_path])
    result = run("cache", "list", "--cache-path", str(path))
    assert result.returncode == 0, result
    assert [line.split("\t")[0] for line in result.stdout.splitlines()] == [f"{base}/list/two", f"{base}/list/one"]
    assert result.stderr == ""
    after = snapshot(watched, [tmp_path])
    if not folded:
        # Run as root, SQLite gives a WAL it opens the database file's owner (fchown to the
        # owner it already has): its time of change moves, nothing else does.
        for seen in (before, after):
            seen[str(tmp_path / "cache.sqlite-wal")].pop("changed")
    assert after == before, "not a byte written, no -wal or -shm made"


def test_listing_a_file_a_daemon_is_using(api: tuple[API, str], tmp_path: Path) -> None:
    state, base = api
    path = tmp_path / "cache.sqlite"
    make_our_cache(path, base)
    daemon = Daemon(path)
    daemon.create(base, "three")
    assert daemon.request("fetchData", {"source": "three", "wait": True})["outcome"] == "finished"
    # The new entry is in the daemon's WAL: a listing reads it there.
    assert sorted(os.listdir(tmp_path)) == ["cache.sqlite", "cache.sqlite-shm", "cache.sqlite-wal"]
    before = snapshot([path], [tmp_path])
    result = run("cache", "list", "--cache-path", str(path))
    assert result.returncode == 0, result
    assert [line.split("\t")[0] for line in result.stdout.splitlines()][0] == f"{base}/list/three"
    assert len(result.stdout.splitlines()) == 3
    assert snapshot([path], [tmp_path]) == before
    daemon.close()


def test_clearing_our_file(api: tuple[API, str], tmp_path: Path) -> None:
    _, base = api
    path = tmp_path / "cache.sqlite"
    make_our_cache(path, base)
    result = run("cache", "clear", "--cache-path", str(path))
    assert (result.returncode, result.stdout) == (0, f"removed 2 entries from {path}\n"), result
    assert "warning" not in result.stderr, result.stderr
    result = run("cache", "list", "--cache-path", str(path))
    assert (result.returncode, result.stdout) == (0, ""), result


@pytest.mark.parametrize("command", ["list", "clear"])
def test_no_file_is_made_by_listing_or_clearing_nothing(command: str, tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    result = run("cache", command, "--cache-path", str(path))
    assert (result.returncode, result.stdout) == (0, ""), result
    assert f"no cache file at {path}" in result.stderr
    assert os.listdir(tmp_path) == []


def test_a_daemon_that_exits_leaves_only_the_file(api: tuple[API, str], tmp_path: Path) -> None:
    """It closes the store as it exits: the last connection folds the WAL back into the file
    and removes the -wal and -shm (before, every daemon left both behind)."""
    _, base = api
    path = tmp_path / "cache.sqlite"
    make_our_cache(path, base)
    assert sorted(os.listdir(tmp_path)) == ["cache.sqlite"]
    result = run("cache", "list", "--cache-path", str(path))
    assert [line.split("\t")[0] for line in result.stdout.splitlines()] == [f"{base}/list/two", f"{base}/list/one"]
