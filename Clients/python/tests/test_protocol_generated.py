"""datasourced_client/protocol.py is what tools/generate_protocol.py writes from
Protocol/openrpc.json: stale types fail here, with the lines that differ and the command
that regenerates them."""

from __future__ import annotations

import copy
import difflib
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from conftest import REPO
from datasourced_client import protocol

CLIENT = REPO / "Clients" / "python"
DOCUMENT: dict[str, Any] = json.loads((REPO / "Protocol" / "openrpc.json").read_text())

#: Every name the client's modules, examples and users imported from the hand-written
#: protocol.py the generator replaced: each must stay.
NAMES_BEFORE_GENERATION = {
    "JSON", "IndexPath", "SourceKind", "PlaceholderKind", "RemoteConfiguration", "SortDescriptor",
    "PaginatorKeys", "RequestKeys", "Limits", "RetryAfter", "Pagination", "CacheSettings", "SourceConfig",
    "FetchError", "ChildFailure", "Move", "Changes", "ChangeValues", "NotificationParams", "CacheState",
    "RefreshState", "SourceDescription", "SourceSummary", "FetchResult", "NextPageResult", "Capabilities",
    "InitializeResult", "TLSFiles",
}


def load_generator() -> ModuleType:
    path = CLIENT / "tools" / "generate_protocol.py"
    spec = importlib.util.spec_from_file_location("generate_protocol", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


generator = load_generator()


def test_protocol_py_is_what_the_generator_writes_from_openrpc_json():
    committed = (CLIENT / "datasourced_client" / "protocol.py").read_text()
    expected = generator.generate(DOCUMENT)
    diff = list(difflib.unified_diff(committed.splitlines(), expected.splitlines(), "protocol.py (committed)",
                                     "protocol.py (from openrpc.json)", lineterm=""))
    assert not diff, ("protocol.py is stale: run python3 Clients/python/tools/generate_protocol.py\n"
                      + "\n".join(diff[:60]))


def test_the_module_keeps_every_name_the_client_used_and_exports_what_it_defines():
    assert NAMES_BEFORE_GENERATION <= set(protocol.__all__)
    assert all(hasattr(protocol, name) for name in protocol.__all__)


def reversed_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: reversed_keys(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [reversed_keys(item) for item in value]
    return value


def test_the_output_depends_on_the_content_not_the_order_of_keys():
    reordered = reversed_keys(DOCUMENT)
    assert json.dumps(reordered) != json.dumps(DOCUMENT)
    assert generator.generate(reordered) == generator.generate(DOCUMENT)


def test_a_changed_schema_changes_the_output():
    changed = copy.deepcopy(DOCUMENT)
    changed["components"]["schemas"]["SourceDescription"]["properties"]["shelfLife"] = {
        "type": "number", "description": "seconds a row stays fresh"}
    output = generator.generate(changed)
    assert output != generator.generate(DOCUMENT)
    assert "    #: seconds a row stays fresh\n    shelfLife: float\n" in output


def test_a_place_the_generator_names_that_is_gone_is_an_error_naming_it():
    changed = copy.deepcopy(DOCUMENT)
    changed["methods"] = [m for m in changed["methods"] if m["name"] != "fetchData"]
    with pytest.raises(generator.SchemaError, match="methods/fetchData/result"):
        generator.generate(changed)


def test_a_keyword_the_generator_cannot_render_is_an_error_naming_its_place():
    changed = copy.deepcopy(DOCUMENT)
    changed["components"]["schemas"]["Limits"]["properties"]["maxDepth"] = {"allOf": [{"type": "integer"}]}
    with pytest.raises(generator.SchemaError, match=r"schemas/Limits\.maxDepth: cannot render allOf"):
        generator.generate(changed)


def test_check_exits_1_on_a_stale_module_and_leaves_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    stale = tmp_path / "protocol.py"
    stale.write_text("# an older protocol.py\n")
    assert generator.main(["--check", "--output", str(stale)]) == 1
    assert "stale" in capsys.readouterr().err
    assert stale.read_text() == "# an older protocol.py\n"
    assert generator.main(["--output", str(stale)]) == 0
    assert generator.main(["--check", "--output", str(stale)]) == 0
