"""Actions on rows (protocol 1.9): what a settled mutation looks like, and values read from text.

A remote or paginated source may declare ``actions`` (Protocol.md, "Actions"):
``performAction`` shows the change at once and answers ``{"mutation": "m1", "status":
"pending"}``; ``dataSource/didSettleMutation`` later says how the server took it
(``committed``, ``rolledBack``, or ``queued`` to be sent again). :meth:`AsyncDataSource.act
<datasourced_client.AsyncDataSource.act>` (and the blocking ``DataSource.act``) do both and
return the :class:`Settlement`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal, TypedDict, cast

from .errors import DatasourcedError, DatasourcedTimeout, describe_fetch_error
from .events import Event
from .protocol import JSON, FetchError

__all__ = ["Settlement", "SettlementStatus", "SETTLE_EVENT", "ActionRolledBack", "ActionTimeout",
           "ActionValueError", "settlement_of", "parse_action_value", "parse_action_values"]

#: The kind of ``dataSource/didSettleMutation``.
SETTLE_EVENT = "didSettleMutation"

#: ``pending`` (only from ``act(wait=False)``: the daemon's answer), then what the server made of it.
SettlementStatus = Literal["pending", "committed", "rolledBack", "queued"]


class Settlement(TypedDict, total=False):
    """How a mutation ended (or where it is): ``mutation`` (the daemon's ID, ``m1``),
    ``action``, ``source``, ``status``; ``error`` (a fetch error) when it was rolled back or
    queued: ``serverMessage`` holds the server's words, ``kind`` is ``conflict`` for a 409
    or 412, ``cancelled`` for a ``cancelMutation``."""

    mutation: str
    action: str
    source: str
    status: SettlementStatus
    error: FetchError


def settlement_of(event: Event) -> Settlement:
    """The :class:`Settlement` a ``didSettleMutation`` event tells."""
    params = event.params
    settlement: Settlement = {"mutation": params.get("mutation", ""), "action": params.get("action", ""),
                              "source": event.source, "status": params.get("status", "committed")}
    if "error" in params:
        settlement["error"] = params["error"]
    return settlement


class ActionRolledBack(DatasourcedError):
    """An action the server refused (``act(..., raise_on_error=True)``): ``settlement`` as
    sent, ``error`` its fetch error, ``kind`` (``http``, ``conflict``, ``cancelled``...);
    ``str()`` has the server's words."""

    def __init__(self, settlement: Settlement):
        self.settlement = settlement
        self.error: FetchError = settlement.get("error", {})
        self.kind = str(self.error.get("kind", "unknown"))
        super().__init__(f"{settlement.get('action')!r} on {settlement.get('source')!r} was rolled back "
                         f"({self.kind}): {describe_fetch_error(self.error)}")

    @property
    def server_message(self) -> str | None:
        """What the server said (``serverMessage``), if it said anything."""
        message = self.error.get("serverMessage")
        return message if isinstance(message, str) else None


class ActionTimeout(DatasourcedTimeout):
    """An action did not settle in time. The mutation goes on in the daemon: ``mutation``
    names it (``cancel_mutation(mutation)`` rolls back one that is queued or waiting);
    ``last`` is its last ``queued`` settlement, if there was one."""

    def __init__(self, source: str, action: str, mutation: str, last: Settlement | None, timeout: float):
        self.source = source
        self.action = action
        self.mutation = mutation
        self.last = last
        why = f": queued after {describe_fetch_error(last.get('error', {}))}" if last else ""
        super().__init__(f"{action!r} on {source!r} ({mutation}) did not settle within {timeout:g} s{why}")


class ActionValueError(DatasourcedError, ValueError):
    """A value given as text that the action does not declare, or that does not read as the
    declared type."""


#: The words read as booleans (any case).
TRUE_WORDS = frozenset({"true", "yes", "y", "1", "on"})
FALSE_WORDS = frozenset({"false", "no", "n", "0", "off"})


def parse_action_value(name: str, text: str, declaration: Mapping[str, Any]) -> JSON:
    """``text`` read as the type ``declaration`` gives (``{"type": "integer"}``...):
    ``string`` as is, ``integer`` and ``number`` as numbers, ``boolean`` from true/false
    (yes/no, 1/0), ``object`` and ``array`` as JSON. Raises :class:`ActionValueError`."""
    kind = str(declaration.get("type", "string"))
    if kind == "string":
        return text
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            raise ActionValueError(f"{name} must be an integer, got {text!r}") from None
    if kind == "number":
        try:
            number = float(text)
        except ValueError:
            raise ActionValueError(f"{name} must be a number, got {text!r}") from None
        return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number
    if kind == "boolean":
        if text.lower() in TRUE_WORDS:
            return True
        if text.lower() in FALSE_WORDS:
            return False
        raise ActionValueError(f"{name} must be true or false, got {text!r}")
    if kind in ("object", "array"):
        try:
            value = json.loads(text)
        except ValueError as error:
            raise ActionValueError(f"{name} must be a JSON {kind}, got {text!r}: {error}") from None
        if not isinstance(value, dict if kind == "object" else list):
            raise ActionValueError(f"{name} must be a JSON {kind}, got {text!r}")
        return cast(JSON, value)
    raise ActionValueError(f"{name} is declared of type {kind!r}, which this client cannot read from text")


def parse_action_values(action: str, declaration: Mapping[str, Any], assignments: list[str]) -> dict[str, JSON]:
    """``NAME=VALUE`` texts read by the action's declared ``values``: each NAME must be
    declared, each VALUE read as its type, each required value given."""
    declared: Mapping[str, Any] = declaration.get("values") or {}
    values: dict[str, JSON] = {}
    for assignment in assignments:
        name, equals, text = assignment.partition("=")
        if not equals or not name:
            raise ActionValueError(f"a value is NAME=VALUE, got {assignment!r}")
        if name not in declared:
            known = ", ".join(f"{n} ({d.get('type', 'string')})" for n, d in declared.items()) or "none"
            raise ActionValueError(f"{action} declares no value {name!r}; it takes: {known}")
        if name in values:
            raise ActionValueError(f"{name} is given twice")
        values[name] = parse_action_value(name, text, declared[name])
    missing = [n for n, d in declared.items() if d.get("required") and n not in values]
    if missing:
        raise ActionValueError(f"{action} needs {', '.join(missing)}: pass "
                               + " ".join(f"--value {n}=..." for n in missing))
    return values
