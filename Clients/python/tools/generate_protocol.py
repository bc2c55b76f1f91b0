#!/usr/bin/env python3
"""Writes the Python client's protocol types (datasourced_client/protocol.py) from
Protocol/openrpc.json, so that they cannot drift from the protocol.

    python3 Clients/python/tools/generate_protocol.py           # rewrite protocol.py
    python3 Clients/python/tools/generate_protocol.py --check   # exit 1 if it is stale

How a schema becomes a type:
- an object becomes a TypedDict when it is a component of ``components/schemas`` or its
  place is in NAMES below; members its schema does not require are NotRequired. Any other
  object is a ``dict[str, V]``, V the union of its members' types;
- ``anyOf``/``oneOf`` of objects is one TypedDict with every alternative's members, a member
  required only when every alternative requires it (the client reads them alike);
- ``enum`` and ``const`` are Literals, a union of Literals and types is simplified (True and
  False make bool, any JSON value absorbs the rest);
- a non-object component is a TypeAlias; an enum is a named alias only where NAMES says so;
- a shape that equals a named one (same members, types and requiredness) takes its name;
- descriptions become docstrings and ``#:`` comments.

The output depends on the document's content only: object members and components are
sorted by name, so a regenerated openrpc.json with its keys in another order gives the same
file. What the generator cannot render (an unknown keyword, a NAMES place that no longer
exists, a cycle between aliases) stops it with an error naming the place.
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TOOLS = Path(__file__).resolve().parent
DOCUMENT = TOOLS.parents[2] / "Protocol" / "openrpc.json"
OUTPUT = TOOLS.parent / "datasourced_client" / "protocol.py"

#: Python names for places in the document that have none there, or whose component name
#: the client never used. A place is ``schemas/<component>``, ``methods/<name>/result``,
#: ``notifications`` (every notification's params, merged), then ``.member``, ``[]``
#: (array items) and ``{}`` (additionalProperties). Every entry is a name the client or its
#: users import today (so none of them changes), except RemoteConfigurationState.
NAMES: dict[str, str] = {
    # The client's and Protocol.md's name for a failure; LoadFailure is FetchError or a
    # multi source's "children" failure, and the client handles both as one dict.
    "schemas/LoadFailure": "FetchError",
    "schemas/LoadFailure.failures[]": "ChildFailure",
    # Event.changes; the protocol's ChangeSet.
    "schemas/ChangeSet": "Changes",
    "schemas/ChangeSet.moved[]": "Move",
    # create_source(name, kind, **config): the params but the two the client takes itself.
    "schemas/SourceSpec": "SourceConfig",
    "schemas/SourceSpec.paginatorKeys": "PaginatorKeys",
    "schemas/SourceSpec.requestKeys": "RequestKeys",
    "schemas/Pagination.retryAfter": "RetryAfter",
    "schemas/SourceDescription.kind": "SourceKind",
    "schemas/PlaceholderStorageOptions[]": "PlaceholderKind",
    "schemas/SourceDescription.cache": "CacheState",
    "schemas/SourceDescription.refresh": "RefreshState",
    # A description's configuration is not the one created (no tls, secrets redacted):
    # without a name it would be a dict of every member's type.
    "schemas/SourceDescription.remoteConfiguration": "RemoteConfigurationState",
    # Results the client returns.
    "methods/initialize/result": "InitializeResult",
    "methods/initialize/result.capabilities": "Capabilities",
    "methods/fetchData/result": "FetchResult",
    "methods/listSources/result[]": "SourceSummary",
    # Event.params, whichever the notification.
    "notifications": "NotificationParams",
    "notifications.values": "ChangeValues",
}

#: Members a named type leaves out: create_source takes ``name`` and ``kind`` as arguments.
OMIT: dict[str, tuple[str, ...]] = {"schemas/SourceSpec": ("name", "kind")}

#: Types whose members are all NotRequired, whatever the schema requires: the client's code
#: stands ``{}`` for "none yet" in them (capabilities before initialize answers, a failed
#: fetch without its error, an event without changes), as the hand-written types allowed.
ALL_OPTIONAL: frozenset[str] = frozenset({"Capabilities", "FetchError", "Changes", "ChangeValues"})

#: Components written as another type: every FetchError is also a LoadFailure (its first
#: alternative), and the client has one type for both.
SAME_AS: dict[str, str] = {"FetchError": "LoadFailure"}

#: Types the schema does not name. IndexPath: the client takes and gives index paths as
#: tuples (hashable, ``(section, item)``); on the wire, and in these types, they are lists.
EXTRA: dict[str, tuple[str, str]] = {
    "JSON": ("Any", "Any JSON value (rows are JSON values of any kind)."),
    "IndexPath": ("tuple[int, int]", "``(section, item)``: an index path as the client's methods take and "
                  "give it (on the wire, and in the types below, a [section, item] list)."),
}
#: Components not written as a type of their own, as what they are written as instead.
INLINE: dict[str, str] = {"IndexPath": "list[int]"}

HEADER = """\
# Generated by Clients/python/tools/generate_protocol.py from Protocol/openrpc.json
# (protocol {version}): do not edit. When the protocol changes, regenerate with
#     python3 Clients/python/tools/generate_protocol.py
# tests/test_protocol_generated.py fails while this file is stale.
"""

MODULE_DOC = """\
The shapes of the wire protocol's values (TypedDicts), generated from Protocol/openrpc.json.

Values stay plain JSON (dicts and lists) at run time; these types let a type checker follow
them. A member the schema does not require is NotRequired. They describe protocol {version};
a daemon of an earlier 1.x version omits the members added since (Protocol.md lists them),
so read those with ``.get``.
"""

TYPES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}
STRUCTURAL = {"type", "properties", "required", "additionalProperties", "items", "anyOf", "oneOf",
              "enum", "const", "$ref", "not", "description"}
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class SchemaError(Exception):
    pass


@dataclass(frozen=True)
class Literal:
    """One literal value; its type is part of it (1 is not True)."""

    kind: str
    value: Any


def literal(value: Any) -> Literal:
    return Literal(type(value).__name__, value)


Atom = str | Literal  # a type's name or expression, or one literal value


@dataclass
class Member:
    name: str
    type: str
    required: bool
    doc: str
    note: str


@dataclass
class Definition:
    name: str
    doc: str
    alias: str = ""  # a TypeAlias's expression; else a TypedDict of members
    members: list[Member] = field(default_factory=list)

    def shape(self) -> Any:
        return self.alias or tuple((m.name, m.type, m.required) for m in self.members)


def render_union(atoms: list[Atom]) -> str:
    """One type for these alternatives, simplified."""
    flat: list[Atom] = []
    for atom in atoms:
        if atom not in flat:
            flat.append(atom)
    if "JSON" in flat:
        return "JSON"
    if {a.value for a in flat if isinstance(a, Literal) and a.kind == "bool"} == {True, False}:
        flat = [a for a in flat if not (isinstance(a, Literal) and isinstance(a.value, bool))]
        if "bool" not in flat:
            flat.append("bool")
    flat = [a for a in flat if not (isinstance(a, Literal) and a.kind in flat)]  # Literal["x"] | str is str
    parts: list[str] = []
    values = [a.value for a in flat if isinstance(a, Literal)]
    for atom in flat:
        if isinstance(atom, Literal):
            if values:
                parts.append(f"Literal[{', '.join(json.dumps(v) if not isinstance(v, bool) else str(v) for v in values)}]")
                values = []
        elif atom != "None":
            parts.append(atom)
    if "None" in flat:
        parts.append("None")
    return " | ".join(parts) if parts else "JSON"


class Generator:
    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.schemas: dict[str, Any] = document["components"]["schemas"]
        self.methods = {m["name"]: m for m in document["methods"]}
        self.notifications = {n["name"]: n for n in document["x-notifications"]}
        self.known_shapes: dict[Any, str] = {}  # from the first pass: a named shape, its name
        self.definitions: dict[str, Definition] = {}
        self.in_progress: set[str] = set()
        self.visited: set[str] = set()

    # -- walking the document ---------------------------------------------------------

    def run(self) -> dict[str, Definition]:
        # Two passes: the first learns every named shape, so that the second gives the same
        # shape met earlier elsewhere (a description's paginatorKeys) its name.
        for _ in range(2):
            self.definitions, self.in_progress, self.visited = {}, set(), set()
            for name, (expression, doc) in EXTRA.items():
                self.definitions[name] = Definition(name, doc, alias=expression)
            for component in sorted(self.schemas):
                if component not in SAME_AS and component not in INLINE:
                    self.component(component)
            for name in sorted(self.methods):
                self.render(self.methods[name]["result"]["schema"], f"methods/{name}/result")
            self.render(self.merged_notifications(), "notifications")
            for definition in self.definitions.values():
                if definition.name not in EXTRA:
                    self.known_shapes.setdefault((definition.shape(), bool(definition.alias)), definition.name)
        missing = sorted(set(NAMES) - self.visited) + sorted(ALL_OPTIONAL - set(self.definitions))
        if missing:
            raise SchemaError(f"places or types of the generator's tables not in openrpc.json: {', '.join(missing)}")
        return self.definitions

    def merged_notifications(self) -> dict[str, Any]:
        """Every notification's params as the alternatives of one union, the notification's
        short name standing for the discriminator."""
        return {"anyOf": [dict(self.notifications[name]["params"], **{"x-case": name.rsplit("/", 1)[-1]})
                          for name in sorted(self.notifications)]}

    def component(self, name: str) -> str:
        name = SAME_AS.get(name, name)
        python_name = NAMES.get(f"schemas/{name}", name)
        if python_name in self.definitions or python_name in self.in_progress:
            return python_name
        self.in_progress.add(python_name)
        self.render(self.schemas[name], f"schemas/{name}", top=True)
        self.in_progress.discard(python_name)
        return python_name

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            schema = self.schemas[self.ref_name(schema["$ref"])]
        return schema

    def ref_name(self, ref: str) -> str:
        prefix = "#/components/schemas/"
        if not ref.startswith(prefix) or ref[len(prefix):] not in self.schemas:
            raise SchemaError(f"unknown $ref {ref!r}")
        return ref[len(prefix):]

    def is_object(self, schema: dict[str, Any]) -> bool:
        schema = self.resolve(schema) if "$ref" in schema and self.ref_name(schema["$ref"]) not in INLINE else schema
        if "anyOf" in schema or "oneOf" in schema:
            return all(self.is_object(s) for s in schema.get("anyOf", schema.get("oneOf", [])))
        return schema.get("type") == "object" and "properties" in schema

    # -- rendering --------------------------------------------------------------------

    def render(self, schema: dict[str, Any], place: str, top: bool = False) -> str:
        """The Python type of ``schema`` at ``place``, defining the named types it needs."""
        self.visited.add(place)
        unknown = {k for k in set(schema) - STRUCTURAL - VALIDATION if not k.startswith("x-")}
        if unknown:
            raise SchemaError(f"{place}: cannot render {', '.join(sorted(unknown))}")
        name = NAMES.get(place)
        if "$ref" in schema:
            component = self.ref_name(schema["$ref"])
            return INLINE.get(component) or self.component(component)
        alternatives = schema.get("anyOf", schema.get("oneOf"))
        if self.is_object(schema):
            definition = self.typed_dict(schema, place, name or "")
            if name or top:
                return self.define(name or place.split("/", 1)[1], definition)
            shape = (definition.shape(), False)
            if shape in self.known_shapes:
                return self.known_shapes[shape]
            return f"dict[str, {render_union([m.type for m in definition.members])}]" if definition.members \
                else "dict[str, JSON]"
        if alternatives is not None:
            expression = render_union([a for s in alternatives for a in self.atoms(s, place)])
        else:
            expression = self.render_simple(schema, place)
        if name or top:
            return self.define(name or place.split("/", 1)[1], Definition("", schema.get("description", ""),
                                                                         alias=expression))
        if expression.startswith("Literal[") and ((expression, True) in self.known_shapes):
            return self.known_shapes[(expression, True)]
        return expression

    def atoms(self, schema: dict[str, Any], place: str) -> list[Atom]:
        """The alternatives of the type of ``schema``: an unnamed enum's values stay
        literals, so that a union merges them with others into one Literal."""
        rest = set(schema) - {"description"} - VALIDATION
        if rest == {"const"} or (rest == {"enum"} and place not in NAMES
                                 and (self.render_simple(schema, place), True) not in self.known_shapes):
            self.visited.add(place)
            values = schema["enum"] if "enum" in schema else [schema["const"]]
            return [literal(v) if v is not None else "None" for v in values]
        return [self.render(schema, place)]

    def render_simple(self, schema: dict[str, Any], place: str) -> str:
        if "not" in schema or not (set(schema) & STRUCTURAL - {"description"}):
            return "JSON"  # {} or "anything but ...": any JSON value
        if "const" in schema:
            return render_union([literal(schema["const"])])
        if "enum" in schema:
            return render_union([literal(v) if v is not None else "None" for v in schema["enum"]])
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        atoms: list[Atom] = []
        for kind in kinds:
            if kind == "array":
                items = schema.get("items")
                atoms.append(f"list[{self.render(items, place + '[]') if items is not None else 'JSON'}]")
            elif kind == "object":
                extra = schema.get("additionalProperties", True)
                value = self.render(extra, place + "{}") if isinstance(extra, dict) else "JSON"
                atoms.append(f"dict[str, {value}]")
            elif kind in TYPES:
                atoms.append(TYPES[kind])
            else:
                raise SchemaError(f"{place}: unknown type {kind!r}")
        return render_union(atoms)

    def define(self, name: str, definition: Definition) -> str:
        definition.name = name
        if name in ALL_OPTIONAL:
            for member in definition.members:
                member.required = False
        existing = self.definitions.get(name)
        if existing is not None and existing.shape() != definition.shape():
            raise SchemaError(f"two different types named {name}")
        if existing is None:
            self.definitions[name] = definition
        return name

    def typed_dict(self, schema: dict[str, Any], place: str, name: str) -> Definition:
        """One TypedDict for an object, or for a union of objects (every alternative's
        members; required where every alternative requires them)."""
        alternatives = self.alternatives(schema)
        omitted = OMIT.get(place, ())
        names = sorted({m for a in alternatives for m in a.get("properties", {})} - set(omitted))
        case_member, cases = self.cases(alternatives)
        members = []
        for member in names:
            having = [a for a in alternatives if member in a.get("properties", {})]
            schemas = [a["properties"][member] for a in having]
            required = len(having) == len(alternatives) and all(member in a.get("required", []) for a in having)
            doc = next((s["description"] for s in schemas if s.get("description")), "")
            note = ""
            if cases and len(having) < len(alternatives):
                note = case_member + ", ".join(cases[id(a)] for a in having)
            members.append(Member(member, render_union([a for s in schemas for a in self.atoms(s, f"{place}.{member}")]),
                                  required, doc, note))
        doc = schema.get("description", "")
        if place.startswith("methods/") and place.endswith("/result"):
            method = self.methods[place.split("/")[1]]
            doc = f"The result of ``{method['name']}``: {method.get('summary', '')}".rstrip(": ")
        if place == "notifications":
            doc = ("The params of every notification; a member's comment names the notifications "
                   "that carry it, when not all do.")
        if not doc:
            # Every public class of the package has a docstring (tests/test_rough_edges.py).
            doc = f"The value at ``{place}`` in Protocol/openrpc.json."
        if omitted:
            doc += f" (but {' and '.join(f'``{m}``' for m in omitted)})"
        return Definition(name, doc, members=members)

    def alternatives(self, schema: dict[str, Any]) -> list[dict[str, Any]]:
        if "$ref" in schema:
            return self.alternatives(self.resolve(schema))
        if "anyOf" in schema or "oneOf" in schema:
            return [a for s in schema.get("anyOf", schema.get("oneOf", [])) for a in self.alternatives(s)]
        return [schema]

    @staticmethod
    def cases(alternatives: list[dict[str, Any]]) -> tuple[str, dict[int, str]]:
        """What tells the alternatives apart, for the members only some of them have: a
        member that is a different constant in each (``kind`` of createSource), or the
        notification's name."""
        if all("x-case" in a for a in alternatives):
            return "", {id(a): a["x-case"] for a in alternatives}
        for member in sorted({m for a in alternatives for m in a.get("properties", {})}):
            values = [a.get("properties", {}).get(member, {}).get("const") for a in alternatives]
            if all(isinstance(v, str) for v in values) and len(set(values)) == len(values) > 1:
                return f"{member} ", {id(a): str(v) for a, v in zip(alternatives, values)}
        return "", {}


#: Keywords that constrain values without changing their Python type.
VALIDATION = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength",
              "maxLength", "pattern", "format", "minItems", "maxItems", "uniqueItems", "minProperties",
              "maxProperties", "dependentRequired", "default", "title", "examples", "deprecated", "readOnly",
              "writeOnly", "$comment"}


# -- writing the module -----------------------------------------------------------------


def comment(text: str, indent: str) -> list[str]:
    return [f"{indent}#: {line}" for line in textwrap.wrap(text, 96 - len(indent))] if text else []


def docstring(text: str, indent: str) -> list[str]:
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if not text.endswith("."):
        text += "."
    lines = textwrap.wrap(text, 92 - len(indent))
    lines[0] = f'{indent}"""{lines[0]}'
    lines = [lines[0]] + [f"{indent}{line}" for line in lines[1:]]
    lines[-1] += '"""'
    return lines


def typed_dict_source(definition: Definition) -> list[str]:
    optional = [m for m in definition.members if not m.required]
    total = len(optional) * 2 <= len(definition.members)  # the fewer markers the better

    def annotation(member: Member) -> str:
        if total and not member.required:
            return f"NotRequired[{member.type}]"
        if not total and member.required:
            return f"Required[{member.type}]"
        return member.type

    functional = not all(IDENTIFIER.fullmatch(m.name) and not keyword.iskeyword(m.name) for m in definition.members)
    totality = "" if total else ", total=False"
    if functional:
        # A member's name is not an identifier: the functional form is the only way to spell it.
        lines = comment(definition.doc, "")
        lines.append(f'{definition.name} = TypedDict("{definition.name}", {{')
        for m in definition.members:
            lines += comment(m.doc, "    ")
            # Evaluated when the module runs: a reference to itself (a recursive schema) must be a string.
            own = re.sub(rf"\b{definition.name}\b", f'"{definition.name}"', annotation(m))
            lines += wrapped(f"    {json.dumps(m.name)}: {own},{f'  # {m.note}' if m.note else ''}")
        lines.append(f"}}{totality})")
        # The functional form takes no docstring: it is given one after.
        lines.append(f"{definition.name}.__doc__ = {json.dumps(definition.doc or f'The {definition.name} value of Protocol/openrpc.json.')}")
        return lines
    lines = [f"class {definition.name}(TypedDict{totality}):"]
    if definition.doc:
        lines += docstring(definition.doc, "    ") + [""]
    for m in definition.members:
        lines += comment(m.doc, "    ")
        lines += wrapped(f"    {m.name}: {annotation(m)}{f'  # {m.note}' if m.note else ''}")
    return lines


def wrapped(line: str) -> list[str]:
    """A member whose Literal is too long for one line, its values over several."""
    start = line.find("Literal[")
    if len(line) <= 110 or start < 0:
        return [line]
    end = line.index("]", start)
    values = textwrap.wrap(line[start + len("Literal["):end], 92, break_long_words=False, break_on_hyphens=False)
    return [line[:start] + "Literal["] + [f"        {v}" for v in values] + ["    " + line[end:]]


def eager(definition: Definition) -> bool:
    """Whether the definition's types are evaluated when the module runs (an alias, or a
    functional TypedDict), so that what it names must come before it."""
    return bool(definition.alias) or any(not IDENTIFIER.fullmatch(m.name) or keyword.iskeyword(m.name)
                                         for m in definition.members)


def ordered(definitions: dict[str, Definition]) -> list[Definition]:
    """Aliases first, then TypedDicts, each by name; a definition evaluated at import time
    after the ones it names."""
    def uses(d: Definition) -> list[str]:
        text = d.alias + " ".join(m.type for m in d.members)
        return sorted({w for w in re.findall(r"\w+", text) if w in definitions and w != d.name})

    order: list[Definition] = []
    placed: set[str] = set()

    def place(d: Definition, path: tuple[str, ...]) -> None:
        if d.name in placed:
            return
        if d.name in path:
            raise SchemaError(f"aliases name each other: {' -> '.join(path + (d.name,))}")
        if eager(d):
            for name in uses(d):
                place(definitions[name], path + (d.name,))
        placed.add(d.name)
        order.append(d)

    extras = [definitions[n] for n in EXTRA]
    rest = sorted((d for d in definitions.values() if d.name not in EXTRA),
                  key=lambda d: (not d.alias, eager(d) and not d.alias, d.name))
    for d in extras + rest:
        place(d, ())
    return order


def generate(document: dict[str, Any]) -> str:
    definitions = Generator(document).run()
    version = document["info"]["version"]
    body: list[str] = []
    for d in ordered(definitions):
        if d.alias:
            body += comment(d.doc, "") + [f"{d.name}: TypeAlias = {d.alias}"]
        else:
            body += ["", ""] + typed_dict_source(d) + ["", ""]
    text = "\n".join(body)
    text = re.sub(r"\n{4,}", "\n\n\n", text).strip("\n")
    imports = [n for n in ("Any", "Literal", "NotRequired", "Required", "TypeAlias", "TypedDict")
               if re.search(rf"\b{n}\b", text)]
    names = "".join(f'    "{d}",\n' for d in sorted(definitions))
    return (HEADER.format(version=version) + '\n"""' + MODULE_DOC.format(version=version) + '"""\n\n'
            + "from __future__ import annotations\n\n"
            + f"from typing import {', '.join(imports)}\n\n"
            + f"__all__ = [\n{names}]\n\n" + text + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the module differs from what it would be")
    parser.add_argument("--document", type=Path, default=DOCUMENT, help="the OpenRPC document (%(default)s)")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="the module to write (%(default)s)")
    options = parser.parse_args(argv)
    try:
        text = generate(json.loads(options.document.read_text()))
    except SchemaError as error:
        print(f"generate_protocol: {options.document}: {error}", file=sys.stderr)
        return 2
    current = options.output.read_text() if options.output.exists() else None
    if options.check:
        if current != text:
            print(f"generate_protocol: {options.output} is stale; run python3 Clients/python/tools/{Path(__file__).name}",
                  file=sys.stderr)
            return 1
        return 0
    if current != text:
        options.output.write_text(text)
        print(f"generate_protocol: wrote {options.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
