"""Protocol/REFERENCE.md, the readable tables of Protocol/openrpc.json: generated, and not
stale. Run by scripts/test.sh (pytest)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_committed_reference_is_what_the_generator_makes_from_openrpc_json() -> None:
    spec = importlib.util.spec_from_file_location("make_reference", REPO / "Protocol" / "make-reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    document = json.loads((REPO / "Protocol" / "openrpc.json").read_text())
    wanted = module.text(document)
    assert (REPO / "Protocol" / "REFERENCE.md").read_text() == wanted, "Protocol/REFERENCE.md is stale: run python3 Protocol/make-reference.py"
    for method in document["methods"]:
        assert f"### `{method['name']}`" in wanted
        for param in method["params"]:
            if "x-params-schema" not in method:
                assert f"| `{param['name']}` |" in wanted
