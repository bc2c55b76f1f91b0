#!/usr/bin/env python3
"""Writes the Python client's protocol types (datasourced_client/protocol.py) and its methods
that send one request each (datasourced_client/methods.py) from Protocol/openrpc.json, so
that they cannot drift from the protocol.

    python3 Clients/python/tools/generate_protocol.py           # rewrite what is stale
    python3 Clients/python/tools/generate_protocol.py --check   # exit 1 if either is stale

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

protocol.py ends with constants for the bounds of the numbers a list spec holds (its own
members: search.debounceMilliseconds, maxPages...), read from Protocol/listspec.schema.json;
datasourced_client/listspec.py checks them.

How a method becomes Python (methods.py): four mixin classes that AsyncClient,
AsyncDataSource, Client and DataSource inherit. Each asyncio method builds the request's
params by name (an optional param passed as None is left out), sends them and returns the
result, cast to its type or converted (RESULTS, CONVERTERS); each blocking one runs the
asyncio one on the client's loop. A method whose first param is a SourceName is the
source's, that param its name. The Python names, parameters and defaults are the method's
own unless WRAPPERS says otherwise (the names the client had before they were generated);
docstrings are the method's summary and its params' descriptions.

The output depends on the documents' content only: object members, components and methods
are sorted by name, so a regenerated openrpc.json with its keys in another order gives the
same files. What the generator cannot render (an unknown keyword, a NAMES place or WRAPPERS
method that no longer exists, a required param no wrapper takes, a cycle between aliases)
stops it with an error naming the place.
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
LIST_SPEC = TOOLS.parents[2] / "Protocol" / "listspec.schema.json"
OUTPUT_DIR = TOOLS.parent / "datasourced_client"

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
# (protocol {version}) and Protocol/listspec.schema.json: do not edit. When either
# changes, regenerate with
#     python3 Clients/python/tools/generate_protocol.py
# tests/test_protocol_generated.py fails while this file is stale.
"""

MODULE_DOC = """\
The shapes of the wire protocol's values (TypedDicts), generated from Protocol/openrpc.json.

Values stay plain JSON (dicts and lists) at run time; these types let a type checker follow
them. A member the schema does not require is NotRequired. They describe protocol {version};
a daemon of an earlier 1.x version omits the members added since (Protocol.md lists them),
so read those with ``.get``. The constants at the end bound the numbers of a list spec.
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


def protocol_module(document: dict[str, Any], list_spec: dict[str, Any]) -> str:
    """The text of protocol.py: the types, then the bounds of a list spec's numbers."""
    definitions = Generator(document).run()
    version = document["info"]["version"]
    body: list[str] = []
    for d in ordered(definitions):
        if d.alias:
            body += comment(d.doc, "") + [f"{d.name}: TypeAlias = {d.alias}"]
        else:
            body += ["", ""] + typed_dict_source(d) + ["", ""]
    bounds = list_spec_bounds(list_spec)
    body += ["", "", BOUNDS_HEADER]
    for name, value, doc in bounds:
        body += comment(doc, "") + [f"{name}: Final = {json.dumps(value)}"]
    text = "\n".join(body)
    text = re.sub(r"\n{4,}", "\n\n\n", text).strip("\n")
    imports = [n for n in ("Any", "Final", "Literal", "NotRequired", "Required", "TypeAlias", "TypedDict")
               if re.search(rf"\b{n}\b", text)]
    names = "".join(f'    "{d}",\n' for d in sorted(definitions) + [name for name, _, _ in bounds])
    return (HEADER.format(version=version) + '\n"""' + MODULE_DOC.format(version=version) + '"""\n\n'
            + "from __future__ import annotations\n\n"
            + f"from typing import {', '.join(imports)}\n\n"
            + f"__all__ = [\n{names}]\n\n" + text + "\n")


# -- the bounds of a list spec's numbers ----------------------------------------------------

BOUNDS_HEADER = """\
# -- The bounds of the numbers a list spec holds (Protocol/listspec.schema.json) ------------
# datasourced_client/listspec.py checks them; a name is LIST_SPEC_, the member's place
# (array items add nothing), then _MIN (the schema's minimum) or _MAX (its maximum)."""


def list_spec_bounds(list_spec: dict[str, Any]) -> list[tuple[str, Any, str]]:
    """``(name, value, doc)`` for the minimum and maximum of every number among a list spec's
    own members (ListSpec in the schema's $defs; the createSource params under ``sources``,
    which it refers to, are the daemon's to check), ordered by name."""
    found: dict[str, tuple[Any, str]] = {}

    def walk(schema: Any, path: tuple[str, ...]) -> None:
        if not isinstance(schema, dict) or "$ref" in schema:
            return
        kinds = schema.get("type")
        if {"integer", "number"} & set(kinds if isinstance(kinds, list) else [kinds]):
            for keyword, suffix in (("minimum", "MIN"), ("maximum", "MAX")):
                if keyword in schema:
                    name = "_".join(["LIST_SPEC"] + [snake_case(p).upper() for p in path] + [suffix])
                    doc = f"{'.'.join(path)}: {schema.get('description', '')}".rstrip(": ")
                    if name in found and found[name][0] != schema[keyword]:
                        raise SchemaError(f"listspec: two {keyword}s of {'.'.join(path)}")
                    found[name] = (schema[keyword], doc)
        for member in sorted(schema.get("properties", {})):
            walk(schema["properties"][member], path + (member,))
        walk(schema.get("items"), path)
        for alternative in schema.get("anyOf", []) + schema.get("oneOf", []):
            walk(alternative, path)

    try:
        root = list_spec["$defs"]["ListSpec"]
    except KeyError:
        raise SchemaError("listspec: no $defs/ListSpec") from None
    walk(root, ())
    return [(name, value, doc) for name, (value, doc) in sorted(found.items())]


def snake_case(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


# -- the methods ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Wrapper:
    """How the client offers one method of the protocol, where the document does not say.

    ``name``: the Python name (default: the method's, in snake_case). ``on``: ``client``
    (AsyncClient, Client) or ``source`` (AsyncDataSource, DataSource; the method's first
    param is the source's name, self.name); default: ``source`` when that param is a
    SourceName. ``args``: the Python parameters, in order, as ``PARAM[ as NAME][=DEFAULT]``
    (a param of the method, NAME its Python name, default PARAM in snake_case; or a client
    option of OPTIONS), ``*`` (the rest are keyword-only) and ``**NAME`` (the method's other
    params, or its x-params-schema's members, by their protocol names). Default: every param
    but the source's, the required ones first. A param without a default is required if the
    method requires it, else None: left out of the request. ``returns``: a member of the
    result to return, or ``None`` for nothing (default: the result). ``convert``: a
    CONVERTERS entry applied to what is returned. ``one_of``: params of which exactly one is
    given.
    """

    method: str
    name: str = ""
    on: str = ""
    args: str | None = None
    returns: str = ""
    convert: str = ""
    one_of: tuple[str, ...] = ()


#: The wrappers whose Python name or parameters are not those the document gives; every
#: other method but UNWRAPPED's is wrapped by default. A method may have several wrappers
#: (describeSource: a handle, the description, members of it).
WRAPPERS: tuple[Wrapper, ...] = (
    Wrapper("createSource", on="client", args="name, kind, **config"),
    Wrapper("describeSource", "source", on="client", args="source as name"),
    Wrapper("ping", args="delayMilliseconds as delay_ms=0", returns="None"),
    Wrapper("allowCredential", args="env, file, *, origin", one_of=("env", "file")),
    Wrapper("describeSource", "describe"),
    Wrapper("describeSource", "has_more_pages", returns="hasMorePages", convert="bool"),
    Wrapper("describeSource", "is_fetching", returns="isFetching"),
    Wrapper("describeSource", "load_states", returns="loadStates"),
    Wrapper("describeSource", "freshness", convert="Freshness"),
    Wrapper("numberOfObjectsInSection", "number_of_objects", args="section=0"),
    Wrapper("objectAtIndexPath", "object_at", args="indexPath"),
    Wrapper("indexPathForObject", "index_path_for", args="object as obj"),
    Wrapper("objectsInSection", args="section=0, start=0, count", returns="objects"),
    Wrapper("fetchData", args="wait=True, *, raise_on_error=True, timeout"),
    Wrapper("cancelFetch", returns="cancelled"),
    Wrapper("fetchNextPage", args="wait=True, *, timeout"),
    Wrapper("fetchPreviousPage", args="wait=True, *, timeout"),
    Wrapper("retry", args="wait=True, *, timeout"),
    Wrapper("willDisplayObjectAtIndexPath", "will_display", returns="fetchStarted"),
    Wrapper("updateSource", args="*, queryParameters, apiPath, headers, graphql, request, actions, keepRows=True, debounceMilliseconds=0"),
    Wrapper("setFilter", args="**changes"),
    Wrapper("removeObjects", args="index, count=1"),
    Wrapper("destroySource", "destroy", on="source", args="cascade=False", returns="destroyed"),
)

#: Methods without a wrapper of their own, and what sends them.
UNWRAPPED: dict[str, str] = {
    "initialize": "AsyncClient.start",
    "shutdown": "AsyncClient.close",
    "allObjects": "AsyncDataSource.snapshot, which pairs it with describeSource",
}

#: Parameters of the client's own, not sent: a wrapper that takes them is a load, whose
#: request AsyncDataSource._load sends (and waits for the load's end with ``wait``).
OPTIONS: dict[str, tuple[str, str]] = {
    "wait": ("bool", "return once the load ended, raising :class:`LoadFailed` if it failed"),
    "raise_on_error": ("bool", "false: a failed load returns its result (whose ``outcome`` and ``error`` "
                               "tell) instead of raising"),
    "timeout": ("float | None", "seconds to wait for the load (None: the client's timeout); a wait given "
                                "up cancels the load"),
}


@dataclass(frozen=True)
class Converter:
    """A conversion of what a wrapper returns: ``call`` formats it (``{}``) into what the
    async wrapper returns, of type ``type``; ``sync_call`` converts that into what the
    blocking one returns (``sync_type``). ``hooks`` declare the methods the call uses, which
    the class inheriting the wrappers defines."""

    call: str
    type: str
    doc: str
    hooks: tuple[str, ...] = ()
    sync_call: str = ""
    sync_type: str = ""
    sync_hooks: tuple[str, ...] = ()


#: Results converted by the component their schema is (or is, or null): by
#: ``(component, on)``, or ``(component, "")`` wherever the wrapper is.
RESULTS: dict[tuple[str, str], Converter] = {
    ("IndexPath", ""): Converter(
        "self._index_path({})", "IndexPath", "the index path, a ``(section, item)`` tuple",
        hooks=("def _index_path(self, value: Sequence[int]) -> IndexPath: ...",)),
    ("SourceDescription", "client"): Converter(
        "self._handle({})", "AsyncDataSource", "a handle on the source",
        hooks=("def _handle(self, description: SourceDescription) -> AsyncDataSource: ...",),
        sync_call="self._handle({})", sync_type="DataSource",
        sync_hooks=("def _handle(self, source: AsyncDataSource) -> DataSource: ...",)),
    ("SourceDescription", "source"): Converter(
        "self._described({})", "SourceDescription", "the description, kept as :attr:`description`",
        hooks=("def _described(self, description: SourceDescription) -> SourceDescription: ...",)),
}

#: Conversions a wrapper names (``convert``), applied last; ``doc`` formats what they convert.
CONVERTERS: dict[str, Converter] = {
    "bool": Converter("bool({})", "bool", "{}, false when absent"),
    "Freshness": Converter("Freshness.of({})", "Freshness", "{} as a :class:`Freshness`: whether the rows shown "
                           "are unconfirmed rows from the persisted cache, and since when (never without a cache)"),
}

#: Params of these components are taken as the first type and sent as the second, formatted.
PARAMS: dict[str, tuple[str, str]] = {"IndexPath": ("Sequence[int]", "list({})")}

#: The four classes: (asyncio?, on) -> (the mixin's name, the class that inherits it).
CLASSES: dict[tuple[bool, str], tuple[str, str]] = {
    (True, "client"): ("_GeneratedAsyncClientMethods", "AsyncClient"),
    (True, "source"): ("_GeneratedAsyncSourceMethods", "AsyncDataSource"),
    (False, "client"): ("_GeneratedClientMethods", "Client"),
    (False, "source"): ("_GeneratedSourceMethods", "DataSource"),
}

#: Aliases written as what they stand for in the methods' signatures.
PLAIN = ("str", "int", "float", "bool", "JSON")

METHODS_HEADER = """\
# Generated by Clients/python/tools/generate_protocol.py from Protocol/openrpc.json
# (protocol {version}): do not edit. When the protocol changes, regenerate with
#     python3 Clients/python/tools/generate_protocol.py
# tests/test_protocol_generated.py fails while this file is stale.
"""

METHODS_DOC = """\
The client's methods that send one request each, generated from Protocol/openrpc.json.

Four mixins: the asyncio ones build each request's params by name (leaving out an optional
param given as None), send it with ``_rpc`` (or ``_load``, for a load) and convert the
result; the blocking ones call the asyncio ones on the client's loop (``_call``).
:class:`AsyncClient`, :class:`AsyncDataSource`, :class:`Client` and :class:`DataSource`
inherit them and provide those hooks (each class's ``if TYPE_CHECKING`` block lists them).
"""


@dataclass
class Param:
    wire: str  # its name in the request, "" for a client option
    name: str
    type: str
    default: str | None  # Python source; None: none
    keyword: bool
    doc: str
    send: str = "{}"  # from the Python value to the wire's


@dataclass
class Method:
    """One wrapper, worked out: what the generated methods are made of."""

    name: str
    on: str
    params: list[Param]
    spread: str  # the **name, or ""
    spread_type: str
    body: list[str]  # the asyncio method's
    type: str
    sync_call: str  # what the blocking method does with the asyncio one's value ("": returns it)
    sync_type: str
    hooks: list[str]  # what the asyncio method uses of the class inheriting it
    sync_hooks: list[str]
    doc: str


def split_union(expression: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for index, char in enumerate(expression):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if depth == 0 and expression.startswith(" | ", index):
            parts.append(expression[start:index])
            start = index + 3
    return parts + [expression[start:]]


def literal_values(expression: str) -> frozenset[str]:
    return frozenset(v.strip() for v in expression[len("Literal["):-1].split(","))


class MethodWriter:
    def __init__(self, document: dict[str, Any]) -> None:
        self.generator = Generator(document)
        self.definitions = dict(self.generator.run())
        self.methods = self.generator.methods

    # -- types ----------------------------------------------------------------------------

    def render(self, schema: dict[str, Any], place: str) -> str:
        expression = self.generator.render(schema, place)
        new = sorted(set(self.generator.definitions) - set(self.definitions))
        if new:
            raise SchemaError(f"{place}: a type of its own ({', '.join(new)}) that protocol.py does not have")
        return expression

    def signature_type(self, expression: str, param: bool) -> str:
        """The type as a method's signature writes it: simple aliases as what they stand for
        (Row: JSON), a union with JSON as JSON, an untyped dict as ``dict[str, Any]`` (dict is
        invariant: a caller's ``dict[str, str]`` is not a QueryParameters), and a Literal
        that is a named one's values by its name."""
        for name, definition in self.definitions.items():
            if definition.alias in PLAIN and name not in EXTRA:
                expression = re.sub(rf"\b{name}\b", definition.alias, expression)
        parts: list[str] = []
        for part in split_union(expression):
            named = self.definitions.get(part)
            if part.startswith("dict[") or (param and named is not None and named.alias.startswith("dict[")):
                part = "dict[str, Any]"
            if part.startswith("Literal["):
                part = next((name for name, d in sorted(self.definitions.items()) if d.alias.startswith("Literal[")
                             and literal_values(d.alias) == literal_values(part)), part)
            if part not in parts:
                parts.append(part)
        if "JSON" in parts:
            return "JSON"
        if "None" in parts:
            parts = [p for p in parts if p != "None"] + ["None"]
        return " | ".join(parts)

    # -- working a wrapper out --------------------------------------------------------------

    def wrappers(self) -> list[Wrapper]:
        listed = {w.method for w in WRAPPERS}
        unknown = sorted((listed | set(UNWRAPPED)) - set(self.methods))
        if unknown:
            raise SchemaError(f"methods of the generator's tables not in openrpc.json: {', '.join(unknown)}")
        return list(WRAPPERS) + [Wrapper(name) for name in sorted(self.methods)
                                 if name not in listed and name not in UNWRAPPED]

    def protocol_params(self, spec: dict[str, Any]) -> list[tuple[str, dict[str, Any], bool, str]]:
        """``(name, schema, required, doc)`` of each param, x-params-schema's members if it has one."""
        if "x-params-schema" in spec:
            schema = spec["x-params-schema"]
            alternatives = self.generator.alternatives(schema)
            members = sorted({m for a in alternatives for m in a.get("properties", {})})
            found = []
            for member in members:
                having = [a for a in alternatives if member in a.get("properties", {})]
                required = len(having) == len(alternatives) and all(member in a.get("required", []) for a in having)
                schemas = [a["properties"][member] for a in having]
                merged = schemas[0] if len(schemas) == 1 else {"anyOf": schemas}
                found.append((member, merged, required, next((s["description"] for s in schemas
                                                              if s.get("description")), "")))
            return found
        return [(p["name"], p["schema"], bool(p.get("required")),
                 p.get("description") or p.get("summary") or p["schema"].get("description", ""))
                for p in spec["params"]]

    def work_out(self, wrapper: Wrapper) -> Method:
        spec = self.methods[wrapper.method]
        method = wrapper.method
        where = f"methods/{method}"
        params = self.protocol_params(spec)
        by_name = {p[0]: p for p in params}
        on = wrapper.on or ("source" if params and "x-params-schema" not in spec
                            and params[0][1] == {"$ref": "#/components/schemas/SourceName"} else "client")
        source = ""
        if on == "source":
            if not params or not params[0][2]:
                raise SchemaError(f"{where}: a source's method whose first param (its name) is not required")
            source = params[0][0]
        python_name = wrapper.name or snake_case(method)

        # The Python parameters.
        if wrapper.args is None:
            rest = [p for p in params if p[0] != source]
            tokens = [p[0] for p in rest if p[2]] + [p[0] for p in rest if not p[2]]
        else:
            tokens = [t.strip() for t in wrapper.args.split(",") if t.strip()]
        python: list[Param] = []
        keyword, spread = False, ""
        for token in tokens:
            if token == "*":
                keyword = True
                continue
            if token.startswith("**"):
                spread = token[2:]
                continue
            match = re.fullmatch(r"(\w+)(?: as (\w+))?(?:=(.+))?", token)
            if not match or spread:
                raise SchemaError(f"{where}: cannot read the wrapper's parameter {token!r}")
            wire, name, default = match.group(1), match.group(2) or snake_case(match.group(1)), match.group(3)
            if wire in by_name and wire != source:
                _, schema, required, doc = by_name[wire]
                ref = schema.get("$ref", "").rsplit("/", 1)[-1]
                if ref in PARAMS:
                    kind, send = PARAMS[ref]
                else:
                    kind, send = self.signature_type(self.render(schema, f"{where}/params.{wire}"), True), "{}"
                if default is None and not required:
                    default = "None"
                if default == "None" and "None" not in split_union(kind):
                    kind += " | None"
                if name in OPTIONS:  # also the client's option: what the client does with it
                    doc = OPTIONS[name][1]
                elif default not in (None, "None"):  # the signature shows the default, the wire's may differ
                    doc = re.sub(r"^default [^:]*: ", "", doc)
                python.append(Param(wire, name, kind, default, keyword, doc, send))
            elif wire in OPTIONS and not match.group(2):
                kind, doc = OPTIONS[wire]
                python.append(Param("", wire, kind, default or "None", keyword, doc))
            else:
                raise SchemaError(f"{where}: {wire} is neither a param of the method nor a client option")
        names = [p.name for p in python]
        if len(set(names)) != len(names):
            raise SchemaError(f"{where}: a parameter taken twice")
        load = any(p.name in OPTIONS for p in python)
        if load and "wait" not in names:
            raise SchemaError(f"{where}: a load (it takes {', '.join(n for n in names if n in OPTIONS)}) without wait")
        taken = {p.wire for p in python} | {source}
        spread_type, spread_names = "", []
        if spread:
            if "x-params-schema" in spec:
                component = self.generator.ref_name(spec["x-params-schema"]["$ref"])
                place = f"schemas/{component}"
                if place not in NAMES or set(OMIT.get(place, ())) != {p.wire for p in python}:
                    raise SchemaError(f"{where}: **{spread} takes {place}'s members but those named in the "
                                      "generator's OMIT, which must be the wrapper's other parameters")
                spread_type = f"Unpack[{NAMES[place]}]"
            else:
                spread_type = "Any"
                spread_names = [p[0] for p in params if p[0] not in taken]
        else:
            missing = [p[0] for p in params if p[2] and p[0] not in taken]
            if missing:
                raise SchemaError(f"{where}: the wrapper does not take the required {', '.join(missing)}")
        for name in wrapper.one_of:
            if name not in names:
                raise SchemaError(f"{where}: one_of names {name}, not a parameter")
        return self.body(wrapper, spec, python_name, on, source, python, spread, spread_type, spread_names, load)

    def body(self, wrapper: Wrapper, spec: dict[str, Any], python_name: str, on: str, source: str,
             python: list[Param], spread: str, spread_type: str, spread_names: list[str], load: bool) -> Method:
        method = wrapper.method
        where = f"methods/{method}"
        lines: list[str] = []
        hooks = ["async def _rpc(self, method: str, params: dict[str, Any]) -> Any: ..."]
        docs: list[str] = []
        if wrapper.one_of:
            if len(wrapper.one_of) < 2:
                raise SchemaError(f"{where}: one_of names fewer than two params")
            given = ", ".join(wrapper.one_of)
            said = " and ".join([", ".join(f"{n}=" for n in wrapper.one_of[:-1]), f"{wrapper.one_of[-1]}="])
            lines += [f"if sum(value is not None for value in ({given})) != 1:",
                      f'    raise ValueError("{python_name} takes exactly one of {said}")']
            docs.append(f"Exactly one of {' and '.join(f'``{n}``' for n in wrapper.one_of)}.")
        if spread_names:
            allowed = "{" + ", ".join(json.dumps(n) for n in spread_names) + "}"
            said = " and ".join(f"{n}=" for n in spread_names)
            lines += [f"unknown = set({spread}) - {allowed}",
                      "if unknown:",
                      f'    raise TypeError(f"{python_name} takes {said}, not {{\', \'.join(sorted(unknown))}}")']
        pairs = [f'"{source}": self.name'] if source else []
        later = []
        for p in python:
            if not p.wire:
                continue
            if p.default == "None":
                later += [f"if {p.name} is not None:", f"    params[{json.dumps(p.wire)}] = {p.send.format(p.name)}"]
            else:
                pairs.append(f"{json.dumps(p.wire)}: {p.send.format(p.name)}")
        if spread:
            pairs.append(f"**{spread}")
        lines.append(f"params: dict[str, Any] = {{{', '.join(pairs)}}}")
        lines += later
        if load:
            options = "".join(f", {p.name}={p.name}" for p in python if p.name in OPTIONS)
            request = f'await self._load("{method}", params{options})'
            hooks.append("async def _load(self, method: str, params: dict[str, Any], *, wait: bool, "
                         "timeout: float | None = None, raise_on_error: bool = True) -> Any: ...")
        else:
            request = f'await self._rpc("{method}", params)'

        # The result: converted by its component, a member of it, converted by name.
        schema = spec["result"]["schema"]
        place = f"{where}/result"
        kind = self.signature_type(self.render(schema, place), False)
        sync_call, sync_type, sync_hooks = "", "", []
        if wrapper.returns == "None":
            lines.append(request)
            kind = "None"
        else:
            lines.append(f"result = {request}")
            expression, typed, returned = "result", False, "the result"
            refs = [s for s in schema.get("anyOf", schema.get("oneOf", [schema])) if s != {"type": "null"}]
            nullable = len(refs) < len(schema.get("anyOf", schema.get("oneOf", [schema])))
            component = self.generator.ref_name(refs[0]["$ref"]) if len(refs) == 1 and "$ref" in refs[0] else ""
            converter = RESULTS.get((component, on)) or RESULTS.get((component, ""))
            if converter:
                if nullable:
                    expression = f"None if result is None else {converter.call.format('result')}"
                    kind = f"{converter.type} | None"
                else:
                    expression = converter.call.format(f"cast({self.render(refs[0], place)}, result)")
                    kind = converter.type
                typed = True
                hooks += converter.hooks
                if not wrapper.returns and not wrapper.convert:
                    docs.append(f"Returns {converter.doc}{' (or None)' if nullable else ''}.")
                sync_call, sync_type, sync_hooks = converter.sync_call, converter.sync_type, list(converter.sync_hooks)
            if wrapper.returns:
                if nullable or sync_call:
                    raise SchemaError(f"{where}: returns a member of a result that may be null or is converted")
                resolved = self.generator.resolve(schema)
                if wrapper.returns not in resolved.get("properties", {}):
                    raise SchemaError(f"{place}: no member {wrapper.returns}")
                member_schema = resolved["properties"][wrapper.returns]
                member_place = f"schemas/{component}.{wrapper.returns}" if component else f"{place}.{wrapper.returns}"
                kind = self.signature_type(self.render(member_schema, member_place), False)
                key = json.dumps(wrapper.returns)
                if wrapper.returns in resolved.get("required", []):
                    expression = f"{expression}[{key}]"
                else:
                    expression = f"{expression}.get({key})"
                    kind = self.signature_type(f"{kind} | None", False)
                described = member_schema.get("description", "")
                returned = f"its ``{wrapper.returns}``{' (' + described + ')' if described else ''}"
            if wrapper.convert:
                if wrapper.convert not in CONVERTERS:
                    raise SchemaError(f"{where}: no converter {wrapper.convert!r}")
                converter = CONVERTERS[wrapper.convert]
                expression = converter.call.format(expression if typed or not wrapper.returns
                                                   else f"cast({kind}, {expression})")
                kind, typed = converter.type, True
                returned = converter.doc.format(returned)
            lines.append(f"return {expression if typed else f'cast({kind}, {expression})'}")
            if wrapper.returns or wrapper.convert:
                docs.append(f"Returns {returned}.")

        summary = spec.get("summary", "").strip()
        first = f"{summary[:1].upper()}{summary[1:]} (``{method}``)." if summary else f"``{method}``."
        params_doc = [f"``{p.name}``: {p.doc}." for p in python if p.doc]
        if spread_type.startswith("Unpack["):
            params_doc.append(f"``**{spread}``: the method's other params, by their protocol names.")
        elif spread:
            params_doc.append(f"``**{spread}``: {', '.join(f'``{n}``' for n in spread_names)}, by name; "
                              "one not given is not sent.")
        if any(p.default == "None" and p.wire for p in python):
            params_doc.append("A parameter left None is not sent.")
        doc = "\n\n".join(part for part in [first + "".join(" " + d for d in docs if d)] + params_doc if part)
        return Method(python_name, on, python, spread, spread_type, lines, kind, sync_call, sync_type or kind, hooks,
                      sync_hooks, doc)

    # -- writing ----------------------------------------------------------------------------

    def signature(self, method: Method, sync: bool) -> str:
        parts = ["self"]
        keyword = False
        for p in method.params:
            if p.keyword and not keyword:
                parts.append("*")
                keyword = True
            parts.append(f"{p.name}: {p.type}" + (f" = {p.default}" if p.default is not None else ""))
        if method.spread:
            parts.append(f"**{method.spread}: {method.spread_type}")
        kind = method.sync_type if sync else method.type
        return f"{'' if sync else 'async '}def {method.name}({', '.join(parts)}) -> {kind}:"

    def forward(self, method: Method) -> str:
        args = [p.name if not p.keyword else f"{p.name}={p.name}" for p in method.params]
        if method.spread:
            args.append(f"**{method.spread}")
        call = f"self._call(self._async.{method.name}({', '.join(args)}))"
        if method.sync_call:
            call = method.sync_call.format(call)
        return call if method.type == "None" else f"return {call}"

    def module(self, version: str) -> str:
        methods = sorted((self.work_out(w) for w in self.wrappers()), key=lambda m: (m.on, m.name))
        seen: set[tuple[str, str]] = set()
        for m in methods:
            if (m.on, m.name) in seen:
                raise SchemaError(f"two wrappers named {m.name} on the {m.on}")
            seen.add((m.on, m.name))
        body: list[str] = []
        for (is_async, on), (class_name, inheritor) in CLASSES.items():
            mine = [m for m in methods if m.on == on]
            how = ("each builds its params, sends them and converts the result" if is_async
                   else f"each calls :class:`Async{inheritor}`'s on the client's loop")
            body += ["", "", f"class {class_name}:"]
            body += docstring(f"The methods of :class:`{inheritor}` that send one request each, generated from "
                              f"Protocol/openrpc.json: {how}", "    ")
            hooks: list[str] = []
            if is_async:
                hooks += ["name: str"] if on == "source" else []
                for m in mine:
                    hooks += [h for h in m.hooks if h not in hooks]
            else:
                hooks += [f"_async: Async{inheritor}", "def _call(self, coroutine: Coroutine[Any, Any, T]) -> T: ..."]
                for m in mine:
                    hooks += [h for h in m.sync_hooks if h not in hooks]
            hooks.sort(key=lambda h: ("def " in h, re.sub(r"^(async )?def ", "", h)))
            body += ["", "    if TYPE_CHECKING:", f"        # What {inheritor} provides."]
            body += [line for h in hooks for line in code_lines(h, "        ")]
            for m in mine:
                body += [""] + code_lines(self.signature(m, not is_async), "    ")
                body += method_docstring(m.doc, "        ")
                for line in (m.body if is_async else [self.forward(m)]):
                    body += code_lines(line, "        ")
        text = "\n".join(body).strip("\n") + "\n"
        code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(('"""', "#")))
        protocol_names = sorted(n for n in self.definitions if re.search(rf"\b{n}\b", code))
        # TypeVar: T, which the blocking mixins' _call declares.
        typing_names = [n for n in ("TYPE_CHECKING", "Any", "TypeVar", "Unpack", "cast")
                        if n == "TypeVar" or re.search(rf"\b{n}\b", code)]
        abc = [n for n in ("Coroutine", "Sequence") if re.search(rf"\b{n}\b", code)]
        imports = [f"from collections.abc import {', '.join(abc)}"] if abc else []
        imports.append(f"from typing import {', '.join(typing_names)}")
        local = ["from .events import Freshness"] if re.search(r"\bFreshness\b", code) else []
        local.append("from .protocol import (\n" + "".join(f"    {n},\n" for n in protocol_names) + ")")
        names = "".join(f'    "{class_name}",\n' for class_name, _ in CLASSES.values())
        return (METHODS_HEADER.format(version=version) + '\n"""' + METHODS_DOC + '"""\n\n'
                + "from __future__ import annotations\n\n" + "\n".join(imports) + "\n\n" + "\n".join(local) + "\n\n"
                + "if TYPE_CHECKING:\n    from .async_client import AsyncClient, AsyncDataSource\n"
                + "    from .client import DataSource\n\n"
                + f"__all__ = [\n{names}]\n\n" + 'T = TypeVar("T")\n' + "\n\n" + text)


def code_lines(line: str, indent: str, width: int = 110) -> list[str]:
    """A line of code, the items of its longest outermost brackets over several lines when it
    is too long (each under the first, as the hand-written code does)."""
    if len(indent + line) <= width:
        return [indent + line]
    groups: list[tuple[int, int, list[str]]] = []  # (opening, closing, items)
    depth, start, opening, quote = 0, 0, 0, ""
    items: list[str] = []
    for index, char in enumerate(line):
        if quote or char in "\"'":  # a string's brackets and commas are its own
            quote = "" if char == quote else quote or char
        elif char in "([{":
            depth += 1
            if depth == 1:
                opening, start, items = index, index + 1, []
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                groups.append((opening, index, items + [line[start:index].strip()]))
        elif char == "," and depth == 1:
            items.append(line[start:index].strip())
            start = index + 1
    if not groups:
        return [indent + line]
    opening, closing, items = max(groups, key=lambda g: g[1] - g[0])
    head, tail = indent + line[:opening + 1], line[closing:]
    if len(items) == 1:  # one argument: break inside it
        inner = code_lines(items[0], " " * len(head), width - len(tail))
        return [head + inner[0].lstrip()] + inner[1:-1] + [inner[-1] + tail] if len(inner) > 1 else [indent + line]
    lines, current = [], head
    for index, item in enumerate(items):
        last = index == len(items) - 1
        piece = item + ("" if last else ",")
        if current != head and len(current) + 1 + len(piece) + (len(tail) if last else 0) > width:
            lines.append(current.rstrip())
            current = " " * len(head) + piece
        else:
            current += ("" if current == head else " ") + piece
    lines.append(current + tail)
    return lines


def method_docstring(text: str, indent: str) -> list[str]:
    """A docstring of paragraphs, each wrapped."""
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines: list[str] = []
    for index, paragraph in enumerate(text.split("\n\n")):
        if index:
            lines.append("")
        lines += textwrap.wrap(paragraph, 96 - len(indent))
    lines[0] = '"""' + lines[0]
    if len(lines) == 1:
        return [indent + lines[0] + '"""']
    return [f"{indent}{line}" if line else "" for line in lines] + [f'{indent}"""']


def generate(document: dict[str, Any], list_spec: dict[str, Any] | None = None) -> dict[str, str]:
    """Every generated module's text, by file name (in datasourced_client/)."""
    if list_spec is None:
        list_spec = json.loads(LIST_SPEC.read_text())
    return {"protocol.py": protocol_module(document, list_spec),
            "methods.py": MethodWriter(document).module(document["info"]["version"])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a module differs from what it would be")
    parser.add_argument("--document", type=Path, default=DOCUMENT, help="the OpenRPC document (%(default)s)")
    parser.add_argument("--list-spec", type=Path, default=LIST_SPEC, help="the list spec's schema (%(default)s)")
    parser.add_argument("--output-dir", type=Path, default=OUTPUT_DIR, help="where the modules go (%(default)s)")
    options = parser.parse_args(argv)
    try:
        texts = generate(json.loads(options.document.read_text()), json.loads(options.list_spec.read_text()))
    except SchemaError as error:
        print(f"generate_protocol: {options.document}: {error}", file=sys.stderr)
        return 2
    stale = 0
    for name, text in texts.items():
        output = options.output_dir / name
        current = output.read_text() if output.exists() else None
        if current == text:
            continue
        if options.check:
            print(f"generate_protocol: {output} is stale; run python3 Clients/python/tools/{Path(__file__).name}",
                  file=sys.stderr)
            stale = 1
        else:
            output.write_text(text)
            print(f"generate_protocol: wrote {output}", file=sys.stderr)
    return stale


if __name__ == "__main__":
    sys.exit(main())
