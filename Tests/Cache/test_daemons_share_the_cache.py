"""The persisted cache as daemons use it (issue 14, "Data safety"): real `datasourced serve`
processes on one cache file, against a local HTTP API.

- Two daemons in parallel, 200 cycles each: no error, and every entry either wrote is there.
- kill -9 while a daemon writes, 200 times: the file always opens, and the list a new daemon
  shows from it is one whole version, never a mix of two.

Run by scripts/test.sh (pytest), with $DATASOURCED set to the daemon under test."""

from __future__ import annotations

import random
import signal
import subprocess
import threading
from pathlib import Path

from cachedaemon import API, Daemon


def cached_versions(cache_path: Path, base: str, names: list[str]) -> dict[str, set[int]]:
    """What a fresh daemon shows from the cache for each list before any response: the versions
    its rows carry (one, for a whole entry), or nothing when it has no entry."""
    daemon = Daemon(cache_path)
    shown: dict[str, set[int]] = {}
    for name in names:
        daemon.create(base, name)
        daemon.notifications.clear()
        number = daemon.send("fetchData", {"source": name})
        daemon.until(lambda m: m.get("id") == number)
        stale = [n for n in daemon.notifications if n["method"] == "dataSource/didChangeFreshness" and n["params"]["stale"]]
        if stale:
            rows = daemon.request("allObjects", {"source": name})
            shown[name] = {row["version"] for row in rows}
            assert len(rows) == 2000, f"{name}: {len(rows)} rows"
        daemon.event("finishedLoading", "failedWithError")
    daemon.close()
    return shown


def test_two_daemons_on_one_file_lose_no_entry(api: tuple[API, str], tmp_path: Path) -> None:
    state, base = api
    cache_path = tmp_path / "cache.sqlite"
    names = {0: [f"a{i}" for i in range(3)], 1: [f"b{i}" for i in range(3)]}
    daemons = {side: Daemon(cache_path) for side in names}
    for side, daemon in daemons.items():
        for name in names[side]:
            daemon.create(base, name)
    failures: list[str] = []

    def cycles(side: int) -> None:
        daemon = daemons[side]
        try:
            for cycle in range(200):
                name = names[side][cycle % 3]
                if cycle % 2 == 0:
                    state.bump(name)  # a new version: a 200 and a write
                result = daemon.request("fetchData", {"source": name, "wait": True})
                if result.get("outcome") != "finished":
                    failures.append(f"{name} cycle {cycle}: {result}")
        except Exception as error:  # a thread's failure must reach the test
            failures.append(repr(error))

    threads = [threading.Thread(target=cycles, args=(side,)) for side in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    for daemon in daemons.values():
        daemon.close()
    everything = names[0] + names[1]
    shown = cached_versions(cache_path, base, everything)
    assert shown == {name: {state.versions[name]} for name in everything}, "every entry holds its last version"


def test_kill_9_during_writes_leaves_a_whole_entry(api: tuple[API, str], tmp_path: Path) -> None:
    state, base = api
    cache_path = tmp_path / "cache.sqlite"
    rng = random.Random(14)
    versions_written: set[int] = set()
    for round in range(200):
        daemon = Daemon(cache_path)
        daemon.create(base, "k")
        versions_written.add(state.bump("k"))
        daemon.send("fetchData", {"source": "k", "wait": True})
        # Killed at a random moment: before, during or after the response and the write.
        try:
            daemon.process.wait(timeout=rng.uniform(0, 0.05))
        except subprocess.TimeoutExpired:
            pass
        daemon.process.send_signal(signal.SIGKILL)
        daemon.process.wait()
        if round % 20 == 19 or round == 199:
            shown = cached_versions(cache_path, base, ["k"])
            if "k" in shown:
                assert len(shown["k"]) == 1, f"round {round}: a mix of versions {shown['k']}"
                assert shown["k"] <= versions_written
    # The file still opens for a writer, and a complete load replaces the entry whole.
    final = Daemon(cache_path)
    final.create(base, "k")
    assert final.request("fetchData", {"source": "k", "wait": True})["outcome"] == "finished"
    final.close()
    assert cached_versions(cache_path, base, ["k"]) == {"k": {state.versions["k"]}}
