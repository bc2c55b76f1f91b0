"""The example programs run as their docstrings say, against the real daemon."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import REPO

EXAMPLES = REPO / "Clients" / "python" / "examples"


@pytest.mark.parametrize("program", ["books.py", "async_books.py"])
def test_an_example_loads_every_page_and_prints_the_books_by_genre(daemon: str, program: str):
    environment = {**os.environ, "DATASOURCED": daemon,
                   "PYTHONPATH": os.pathsep.join([str(EXAMPLES.parent), os.environ.get("PYTHONPATH", "")])}
    finished = subprocess.run([sys.executable, str(EXAMPLES / program)], capture_output=True, text=True,
                              timeout=60, env=environment, cwd=REPO)
    assert finished.returncode == 0, finished.stderr
    lines = finished.stdout.splitlines()
    genres = {line.split(":")[0]: line.split(": ", 1)[1].split(", ") for line in lines if ": " in line
              and line.split(":")[0] in ("science fiction", "mystery", "poetry")}
    assert sorted(genres) == ["mystery", "poetry", "science fiction"]
    assert sorted(title for titles in genres.values() for title in titles) == sorted(
        ["Dune", "Gaudy Night", "Ariel", "Solaris", "The Big Sleep", "Howl", "Kindred", "Rebecca",
         "Leaves of Grass", "Ubik"])
    if program == "books.py":
        assert [line for line in lines if line.startswith("page ")] == ["page 1: 4 books", "page 2: 8 books",
                                                                       "page 3: 10 books"]
        assert genres["science fiction"] == ["Ubik", "Kindred", "Solaris", "Dune"]  # newest first
    else:
        assert lines.count("  books finishedLoading") == 3
