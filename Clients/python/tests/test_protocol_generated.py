"""datasourced_client/protocol.py and methods.py are what tools/generate_protocol.py writes
from Protocol/openrpc.json (and the list spec's bounds from Protocol/listspec.schema.json):
stale modules fail here, with the lines that differ and the command that regenerates them."""

from __future__ import annotations

import copy
import difflib
import importlib.util
import inspect
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from conftest import REPO
from datasourced_client import AsyncClient, AsyncDataSource, Client, DataSource, methods, protocol

CLIENT = REPO / "Clients" / "python"
DOCUMENT: dict[str, Any] = json.loads((REPO / "Protocol" / "openrpc.json").read_text())
LIST_SPEC: dict[str, Any] = json.loads((REPO / "Protocol" / "listspec.schema.json").read_text())
GENERATED = ("protocol.py", "methods.py")

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


def generate(document: dict[str, Any] = DOCUMENT, list_spec: dict[str, Any] = LIST_SPEC) -> dict[str, str]:
    return generator.generate(document, list_spec)


@pytest.mark.parametrize("name", GENERATED)
def test_the_module_is_what_the_generator_writes_from_openrpc_json(name: str):
    texts = generate()
    assert set(texts) == set(GENERATED)
    committed = (CLIENT / "datasourced_client" / name).read_text()
    diff = list(difflib.unified_diff(committed.splitlines(), texts[name].splitlines(), f"{name} (committed)",
                                     f"{name} (from openrpc.json)", lineterm=""))
    assert not diff, (f"{name} is stale: run python3 Clients/python/tools/generate_protocol.py\n"
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
    assert generate(reordered, reversed_keys(LIST_SPEC)) == generate()


def test_a_changed_schema_changes_the_output():
    changed = copy.deepcopy(DOCUMENT)
    changed["components"]["schemas"]["SourceDescription"]["properties"]["shelfLife"] = {
        "type": "number", "description": "seconds a row stays fresh"}
    output = generate(changed)["protocol.py"]
    assert output != generate()["protocol.py"]
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


@pytest.mark.parametrize("name", GENERATED)
def test_check_exits_1_on_a_stale_module_and_leaves_it(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert generator.main(["--output-dir", str(tmp_path)]) == 0
    stale = tmp_path / name
    stale.write_text(f"# an older {name}\n")
    assert generator.main(["--check", "--output-dir", str(tmp_path)]) == 1
    assert f"{name} is stale" in capsys.readouterr().err
    assert stale.read_text() == f"# an older {name}\n"
    assert generator.main(["--output-dir", str(tmp_path)]) == 0
    assert generator.main(["--check", "--output-dir", str(tmp_path)]) == 0


# -- the methods (methods.py) ---------------------------------------------------------------


def wire_methods(cls: type) -> dict[str, str]:
    """The generated methods a class inherits, by name: the protocol method each sends."""
    found = {}
    for base in cls.__mro__:
        if base.__module__ == methods.__name__:
            for name, value in vars(base).items():
                if not name.startswith("_") and callable(value):
                    sent = inspect.getsource(value).split('self._rpc("', 1)[-1].split('self._load("', 1)[-1]
                    found[name] = sent.split('"', 1)[0]
    return found


def test_every_method_of_the_protocol_has_a_wrapper_or_a_reason_not_to():
    wrapped = set(wire_methods(AsyncClient).values()) | set(wire_methods(AsyncDataSource).values())
    assert wrapped | set(generator.UNWRAPPED) == {m["name"] for m in DOCUMENT["methods"]}
    assert wrapped.isdisjoint(generator.UNWRAPPED)


def test_the_client_classes_write_no_method_of_their_own_that_a_generated_one_provides():
    for cls, mixin in ((AsyncClient, methods._GeneratedAsyncClientMethods),
                       (AsyncDataSource, methods._GeneratedAsyncSourceMethods),
                       (Client, methods._GeneratedClientMethods), (DataSource, methods._GeneratedSourceMethods)):
        generated = {name for name in vars(mixin) if not name.startswith("_")}
        assert generated and not generated & set(vars(cls)), cls
    assert set(wire_methods(Client)) == set(wire_methods(AsyncClient))
    assert set(wire_methods(DataSource)) == set(wire_methods(AsyncDataSource))


def test_a_new_method_gets_a_wrapper_from_the_document_alone():
    changed = copy.deepcopy(DOCUMENT)
    changed["methods"].append({
        "name": "pinRow", "summary": "keeps a row on top", "paramStructure": "by-name",
        "params": [{"name": "source", "schema": {"$ref": "#/components/schemas/SourceName"}, "required": True},
                   {"name": "keyPath", "schema": {"type": "string"}, "required": False,
                    "description": "the member that names the row"},
                   {"name": "indexPath", "schema": {"$ref": "#/components/schemas/IndexPath"}, "required": True}],
        "result": {"name": "pinRowResult", "schema": {"type": "object", "properties": {"pinned": {"type": "integer"}},
                                                      "required": ["pinned"]}}})
    output = generate(changed)["methods.py"]
    assert "    async def pin_row(self, index_path: Sequence[int], key_path: str | None = None) -> dict[str, Any]:\n" \
           '        """Keeps a row on top (``pinRow``).\n\n        ``key_path``: the member that names the row.\n' in output
    assert '        params: dict[str, Any] = {"source": self.name, "indexPath": list(index_path)}\n' \
           "        if key_path is not None:\n" in output
    assert "        return self._call(self._async.pin_row(index_path, key_path))\n" in output


def test_a_method_the_wrappers_name_that_is_gone_is_an_error_naming_it():
    changed = copy.deepcopy(DOCUMENT)
    changed["methods"] = [m for m in changed["methods"] if m["name"] != "cancelFetch"]
    with pytest.raises(generator.SchemaError, match="not in openrpc.json: cancelFetch"):
        generate(changed)


def test_a_new_required_param_a_wrapper_does_not_take_is_an_error_naming_it():
    changed = copy.deepcopy(DOCUMENT)
    ping = next(m for m in changed["methods"] if m["name"] == "ping")
    ping["params"].append({"name": "reason", "schema": {"type": "string"}, "required": True})
    with pytest.raises(generator.SchemaError, match="methods/ping: the wrapper does not take the required reason"):
        generate(changed)


def test_a_new_optional_param_changes_no_signature():
    changed = copy.deepcopy(DOCUMENT)
    ping = next(m for m in changed["methods"] if m["name"] == "ping")
    ping["params"].append({"name": "reason", "schema": {"type": "string"}, "required": False})
    assert generate(changed)["methods.py"] == generate()["methods.py"]


# -- the list spec's bounds -----------------------------------------------------------------


def test_the_list_specs_bounds_are_the_schemas():
    search = LIST_SPEC["$defs"]["ListSpec"]["properties"]["search"]["properties"]["debounceMilliseconds"]
    assert protocol.LIST_SPEC_SEARCH_DEBOUNCE_MILLISECONDS_MAX == search["maximum"]
    assert protocol.LIST_SPEC_SEARCH_DEBOUNCE_MILLISECONDS_MIN == search["minimum"]
    changed = copy.deepcopy(LIST_SPEC)
    changed["$defs"]["ListSpec"]["properties"]["search"]["properties"]["debounceMilliseconds"]["maximum"] = 5000
    assert "\nLIST_SPEC_SEARCH_DEBOUNCE_MILLISECONDS_MAX: Final = 5000\n" in generate(list_spec=changed)["protocol.py"]
