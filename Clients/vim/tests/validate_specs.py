"""Validates the Vim plugin's test specs (tests/specs/*.json) against the list spec's
JSON Schema, Protocol/listspec.schema.json: the plugin itself validates nothing, but the
specs its tests and README use must be ones every client reads. Exits 1 naming each
invalid spec, 2 when the schema is missing."""
import json
import pathlib
import sys

import jsonschema

here = pathlib.Path(__file__).resolve().parent
schema_path = here.parents[2] / "Protocol" / "listspec.schema.json"
if not schema_path.exists():
    print(f"no schema at {schema_path}", file=sys.stderr)
    sys.exit(2)
schema = json.loads(schema_path.read_text())
validator = jsonschema.Draft202012Validator(schema)
bad = 0
for spec_path in sorted((here / "specs").glob("*.json")):
    errors = sorted(validator.iter_errors(json.loads(spec_path.read_text())), key=lambda e: list(e.path))
    for error in errors:
        where = "/".join(str(p) for p in error.path) or "(top)"
        print(f"{spec_path.name}: {where}: {error.message}")
    bad += bool(errors)
    print(("FAIL " if errors else "ok   ") + spec_path.name)
sys.exit(1 if bad else 0)
