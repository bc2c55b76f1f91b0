"""Protocol/openrpc.json against the daemon: the method and notification lists, and every
message of every shipped transcript, in both directions, validated with jsonschema.

Run by scripts/test.sh (pytest), with $DATASOURCED set to the daemon under test."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections import defaultdict
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

REPO = Path(__file__).resolve().parents[2]
DOCUMENT = json.loads((REPO / "Protocol" / "openrpc.json").read_text())
BASE = "urn:datasourced:openrpc"
REGISTRY = Registry().with_resource(BASE, Resource(contents=DOCUMENT, specification=DRAFT202012))
METHODS = {method["name"]: index for index, method in enumerate(DOCUMENT["methods"])}
NOTIFICATIONS = {note["name"]: index for index, note in enumerate(DOCUMENT["x-notifications"])}
ERROR_CODES = {error["code"]: name for name, error in DOCUMENT["components"]["errors"].items()}
TRANSCRIPTS = sorted((REPO / "Tests" / "Transcripts").glob("*.json")) + sorted((REPO / "Examples").glob("*.json"))


def validator(pointer: str) -> Draft202012Validator:
    """A validator for the schema at a JSON pointer into the document (its $refs resolve there)."""
    return Draft202012Validator({"$ref": f"{BASE}#{pointer}"}, registry=REGISTRY)


def params_validator(method: str) -> Draft202012Validator:
    index = METHODS[method]
    spec = DOCUMENT["methods"][index]
    if "x-params-schema" in spec:
        return validator(f"/methods/{index}/x-params-schema")
    schema = {
        "type": "object",
        "properties": {p["name"]: {"$ref": f"{BASE}#/methods/{index}/params/{i}/schema"} for i, p in enumerate(spec["params"])},
        "required": [p["name"] for p in spec["params"] if p.get("required")],
        "additionalProperties": False,
    }
    return Draft202012Validator(schema, registry=REGISTRY)


def problems(validator: Draft202012Validator, instance: object) -> list[str]:
    return [f"{'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message[:300]}" for error in validator.iter_errors(instance)]


@pytest.fixture(scope="session")
def daemon() -> str:
    path = os.environ.get("DATASOURCED") or str(REPO / ".build" / "debug" / "datasourced")
    if not os.access(path, os.X_OK):
        pytest.fail(f"no datasourced executable at {path}: build it or set $DATASOURCED")
    return path


def test_every_schema_in_the_document_is_a_valid_json_schema() -> None:
    for name, schema in DOCUMENT["components"]["schemas"].items():
        Draft202012Validator.check_schema(schema)
    for method in DOCUMENT["methods"]:
        Draft202012Validator.check_schema(method["result"]["schema"])
        for param in method["params"]:
            Draft202012Validator.check_schema(param["schema"])


def test_the_daemon_serves_exactly_the_documented_methods_notifications_and_version(daemon: str) -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"initialize"}'
    done = subprocess.run([daemon], input=b"Content-Length: %d\r\n\r\n%s" % (len(body), body), capture_output=True, timeout=20)
    answer = json.loads(done.stdout.split(b"\r\n\r\n", 1)[1])["result"]
    assert answer["capabilities"]["methods"] == sorted(METHODS)
    assert answer["capabilities"]["notifications"] == list(NOTIFICATIONS)
    assert answer["protocolVersion"] == DOCUMENT["info"]["version"]
    assert not problems(validator(f"/methods/{METHODS['initialize']}/result/schema"), answer)


def captured(daemon: str) -> list[dict]:
    with tempfile.TemporaryDirectory() as directory:
        out = Path(directory) / "messages.jsonl"
        done = subprocess.run([daemon, "replay", "--capture", str(out), *map(str, TRANSCRIPTS)], capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout[-3000:]
        return [json.loads(line) for line in out.read_text().splitlines()]


def test_every_message_of_every_transcript_validates_against_the_schema(daemon: str) -> None:
    messages = captured(daemon)
    assert {m["transcript"] for m in messages} == {str(path) for path in TRANSCRIPTS}
    failures: list[str] = []
    counts: defaultdict[str, int] = defaultdict(int)
    # Requests by transcript and id, oldest first, to pair answers with what they answer.
    requests: defaultdict[tuple[str, str], list[dict]] = defaultdict(list)

    def key(transcript: str, identifier: object) -> tuple[str, str]:
        return transcript, json.dumps(identifier)

    def elements(message: object) -> list:
        return message if isinstance(message, list) else [message]

    for entry in messages:
        transcript, direction = Path(entry["transcript"]).name, entry["direction"]
        for message in elements(entry["message"]):
            if not isinstance(message, dict):
                continue
            where = f"{transcript} {direction} {json.dumps(message)[:200]}"
            if direction == "sent":
                if isinstance(message.get("method"), str) and "id" in message:
                    requests[key(entry["transcript"], message["id"])].append(message)
                continue
            if "method" in message:
                counts["notifications"] += 1
                name = message["method"]
                if name not in NOTIFICATIONS:
                    failures.append(f"{where}: a notification Protocol/openrpc.json does not list")
                    continue
                failures += [f"{where}: {p}" for p in problems(validator(f"/x-notifications/{NOTIFICATIONS[name]}/params"), message.get("params"))]
                continue
            pending = requests.get(key(entry["transcript"], message.get("id")))
            request = pending.pop(0) if pending else None
            if "error" in message:
                counts["errors"] += 1
                code = message["error"].get("code")
                if code not in ERROR_CODES:
                    failures.append(f"{where}: error code {code} is not documented")
                    continue
                error_schema = DOCUMENT["components"]["errors"][ERROR_CODES[code]]
                if "data" in error_schema:
                    pointer = f"/components/errors/{ERROR_CODES[code]}/data"
                    if code == -32602 or "data" in message["error"]:
                        failures += [f"{where}: {p}" for p in problems(validator(pointer), message["error"].get("data"))]
                continue
            if request is None or request["method"] not in METHODS:
                continue  # an answer to a request the transcript sent as raw bytes
            counts["results"] += 1
            method = request["method"]
            failures += [f"{where}: result: {p}" for p in problems(validator(f"/methods/{METHODS[method]}/result/schema"), message.get("result"))]
            # A request the daemon answered with a result must be one the schema accepts.
            failures += [f"{where}: params of the request: {p}" for p in problems(params_validator(method), request.get("params", {}))]
    assert counts["results"] > 200 and counts["notifications"] > 200 and counts["errors"] > 50, dict(counts)
    assert not failures, "\n".join(failures[:40])


def test_a_result_the_schema_does_not_describe_is_caught() -> None:
    """The checks above can fail: a description with an undocumented member is refused."""
    describe = validator(f"/methods/{METHODS['describeSource']}/result/schema")
    good = {"name": "s", "kind": "simple", "numberOfSections": 1, "sectionTitles": [""], "counts": [0], "isFetching": False, "revision": 1}
    assert not problems(describe, good)
    assert problems(describe, dict(good, surprise=1))
    assert problems(validator(f"/x-notifications/{NOTIFICATIONS['dataSource/didChange']}/params"), {"source": "s", "changes": {}})
