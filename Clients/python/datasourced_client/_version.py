"""The package's version, read from its one source: ``pyproject.toml``.

Run from a source checkout (``PYTHONPATH=Clients/python``), the version is read from the
``pyproject.toml`` beside the package, which wins over any older copy installed; installed
from a wheel, it is the distribution's metadata, which the build wrote from that file.
"""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

DISTRIBUTION = "datasourced-client"


def package_version() -> str:
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        if project.get("name") == DISTRIBUTION and isinstance(project.get("version"), str):
            return str(project["version"])
    except (OSError, tomllib.TOMLDecodeError):
        pass
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"
