"""``datasourced fixtures FILE``: a local HTTP API serving a fixture file, until closed."""

from __future__ import annotations

import json
import os
import subprocess

__all__ = ["FixtureServer", "FixtureServerError"]


class FixtureServerError(Exception):
    """The fixture server did not start."""


class FixtureServer:
    """Runs ``DAEMON fixtures FILE`` on a free loopback port; ``base_url`` is where it
    serves. A context manager; ``close()`` stops it."""

    def __init__(self, daemon: str | os.PathLike[str], fixtures: str | os.PathLike[str]):
        self.fixtures = os.fspath(fixtures)
        self.process = subprocess.Popen([os.fspath(daemon), "fixtures", self.fixtures], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            self.process.wait()
            raise FixtureServerError(
                f"the fixture server for {self.fixtures} did not start (status {self.process.returncode})")
        self.base_url: str = json.loads(line)["baseURL"]

    def close(self) -> None:
        """Stops the server (closing its stdin) and waits for it."""
        assert self.process.stdin is not None
        self.process.stdin.close()  # it serves until its stdin closes
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()

    def __enter__(self) -> FixtureServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
